package testproc

import (
	"bytes"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// FreePort returns a port that was free for both UDP and TCP on 127.0.0.1
// when it was chosen.
func FreePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		_ = l.Close()
		if err != nil {
			continue
		}
		_ = u.Close()
		return port, nil
	}
	return 0, errors.New("no port free for both TCP and UDP on 127.0.0.1")
}

// Buffer collects a child's output; it is safe for concurrent use.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed by the next Write; nil until someone waits
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.b.Write(p)
}

// Wait waits until what was written satisfies ok, or until timeout (a hang
// guard) passes, and reports whether it did: a child logs a line when it
// gets to it, which may be after the effect a test observed.
func (l *Buffer) Wait(timeout time.Duration, ok func(string) bool) bool {
	guard := time.NewTimer(timeout)
	defer guard.Stop()
	for {
		l.mu.Lock()
		if ok(l.b.String()) {
			l.mu.Unlock()
			return true
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-guard.C:
			return ok(l.String())
		}
	}
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Process is a started child.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
}

// Start starts cmd and waits for it in the background.
func Start(cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Done is closed when the child has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop sends SIGTERM, then SIGKILL if the child has not exited within 10
// seconds, and waits for it. Stopping a child that exited does nothing.
func (p *Process) Stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}
