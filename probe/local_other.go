//go:build !windows

package probe

import "syscall"

// On systems other than Windows the local errors are package syscall's
// (see localErrnos).
const (
	localEMFILE        = syscall.EMFILE
	localENOBUFS       = syscall.ENOBUFS
	localEADDRNOTAVAIL = syscall.EADDRNOTAVAIL
	localEACCES        = syscall.EACCES
	localENOMEM        = syscall.ENOMEM
	localENETUNREACH   = syscall.ENETUNREACH
	localEHOSTUNREACH  = syscall.EHOSTUNREACH
)
