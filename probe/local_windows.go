package probe

import "syscall"

// Winsock's and Windows' numbers for the local errors (see localErrnos);
// package syscall's E* constants on Windows are invented values that the
// network calls do not return.
const (
	localEMFILE        = syscall.Errno(10024) // WSAEMFILE
	localENOBUFS       = syscall.Errno(10055) // WSAENOBUFS
	localEADDRNOTAVAIL = syscall.Errno(10049) // WSAEADDRNOTAVAIL
	localEACCES        = syscall.Errno(10013) // WSAEACCES
	localENOMEM        = syscall.Errno(8)     // ERROR_NOT_ENOUGH_MEMORY
	localENETUNREACH   = syscall.Errno(10051) // WSAENETUNREACH
	localEHOSTUNREACH  = syscall.Errno(10065) // WSAEHOSTUNREACH
)
