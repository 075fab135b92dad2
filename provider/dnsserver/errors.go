package dnsserver

import (
	"errors"

	"github.com/gslbkit/gslb/internal/fielderr"
)

var (
	// ErrInvalidConfig is wrapped by every error about a ServerConfig or
	// an RRLConfig; the error is a *FieldError.
	ErrInvalidConfig = errors.New("dnsserver: invalid config")
	// ErrRunning is returned by a second call of Server.Run, and by
	// SetTransfer once Run has started: a Server runs once.
	ErrRunning = errors.New("dnsserver: server already running or ran")
	// ErrClosed is returned by Listen and Run after Close.
	ErrClosed = errors.New("dnsserver: server closed")
	// ErrNoAnswerer is returned by NewServer without an Answerer, and by
	// the methods of a Server not made by NewServer (the zero Server is
	// not usable).
	ErrNoAnswerer = errors.New("dnsserver: no answerer (use NewServer)")
)

// FieldError says which field of a ServerConfig or RRLConfig is wrong, with
// its value and what is allowed; its message reads "dnsserver: invalid
// config: <path> = <value>: allowed <what>", and it wraps ErrInvalidConfig.
type FieldError = fielderr.Error
