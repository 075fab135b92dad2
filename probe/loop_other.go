//go:build !linux

package probe

import (
	"errors"
	"time"
)

// evLoopSupported reports whether this system has the event loop: not
// this one, so every probe runs on a worker goroutine.
const evLoopSupported = false

// loopTick is the event loop's tick (see loop_linux.go).
const loopTick = time.Millisecond

// evLoop is not built on this system; newEvLoop always fails and the
// methods are never called.
type evLoop struct{}

func newEvLoop() (*evLoop, error)              { return nil, errors.ErrUnsupported }
func (*evLoop) wake()                          {}
func (*evLoop) close()                         {}
func (*evLoop) inFlight() int                  { return 0 }
func (*evLoop) takeDone() []loopDone           { return nil }
func (*evLoop) start(loopJob, time.Time)       {}
func (*evLoop) abandon()                       {}
func (*evLoop) next() (time.Time, bool)        { return time.Time{}, false }
func (*evLoop) expire(time.Time)               {}
func (*evLoop) settle(time.Time)               {}
func (*evLoop) wait(_, _, _ time.Time, _ bool) {}
func (*evLoop) tlsRoom(time.Time) bool         { return false }
