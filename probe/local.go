package probe

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// A local failure is an attempt that told nothing about the target: it
// failed in this process or on this host before anything reached the
// target, or with an error only this host causes. Its Result has
// KindLocal; the Machine does not count it and the Monitor probes the
// target again on its normal schedule (see KindLocal).
//
// Local errors: running out of descriptors (EMFILE, ENFILE), of kernel
// buffers or memory (ENOBUFS, ENOMEM), of ephemeral ports (EADDRNOTAVAIL,
// and EAGAIN from connect), a connect or send refused by the host's own
// firewall or security policy (EPERM, EACCES), and a probe started after
// its deadline had passed because the scheduler was late.
//
// ENETUNREACH and EHOSTUNREACH are local when this host has no route to
// the target, and the target's otherwise: the same errors report both a
// route missing from this host's table (connect fails at once, nothing was
// sent) and an ICMP "unreachable" from a router on the way or from the
// target's own network (the SYN went out). The event loop tells the two
// apart directly (an error from connect itself is the host's, one reported
// later on the socket is the network's); a probe on a worker, which gets
// the error from package net after the fact, asks the host's routing table
// with a UDP connect to the target's address, which looks the route up
// and sends nothing. So a host that lost its own routes does not fail over
// every target, while a region whose routers report it unreachable still
// fails over.

// localErrnos are the errors that are always local (see above).
var localErrnos = [...]syscall.Errno{
	syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
	syscall.EADDRNOTAVAIL, syscall.EPERM, syscall.EACCES,
	localEMFILE, localENOBUFS, localEADDRNOTAVAIL, localEACCES, localENOMEM,
}

// probeLocalErrno reports whether err wraps an always-local errno. It is
// checked before Timeout: syscall.Errno reports EAGAIN as a timeout.
func probeLocalErrno(err error) bool {
	var e syscall.Errno
	if !errors.As(err, &e) || e == 0 {
		return false
	}
	for _, l := range localErrnos {
		if e == l {
			return true
		}
	}
	if e == syscall.EAGAIN {
		// EAGAIN from connect: no local port or routing-cache entry left.
		var se *os.SyscallError
		return errors.As(err, &se) && se.Syscall == "connect"
	}
	return false
}

// probeUnreachable reports whether err wraps ENETUNREACH or EHOSTUNREACH.
func probeUnreachable(err error) bool {
	return errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, localENETUNREACH) || errors.Is(err, localEHOSTUNREACH)
}

// probeNoRoute reports whether err, an unreachable error, came from this
// host's routing table: a UDP connect to the same address (a route lookup
// that sends nothing) fails the same way. When the address is unknown or
// the lookup cannot be made, the error counts against the target.
func probeNoRoute(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Addr == nil {
		return false
	}
	ap, perr := netip.ParseAddrPort(op.Addr.String())
	if perr != nil || !ap.Addr().IsValid() {
		return false
	}
	port := ap.Port()
	if port == 0 {
		port = 9 // discard; nothing is sent
	}
	c, derr := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(ap.Addr().Unmap(), port)))
	if derr == nil {
		_ = c.Close()
		return false
	}
	return probeUnreachable(derr)
}

// IsLocal reports whether r is a local failure (Kind KindLocal): one that
// says nothing about the target, which a Machine does not count.
func (r Result) IsLocal() bool { return r.Kind == KindLocal }

// probeLate is the result of a probe that was due but started only after
// its deadline had passed, late by late: a local failure (the scheduler,
// or this host's CPU, was late), not the target's.
func probeLate(late time.Duration) Result {
	return Result{Status: Fail, Kind: KindLocal, Detail: "started " + late.Round(time.Microsecond).String() + " after its deadline (scheduler late)"}
}
