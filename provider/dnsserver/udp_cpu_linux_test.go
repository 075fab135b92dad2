//go:build linux && (amd64 || arm64)

package dnsserver

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func burn(d time.Duration) {
	for start := threadCPUTime(); threadCPUTime()-start < d; {
	}
}

// TestLoopCPU: the count grows with the CPU the goroutine uses on its
// thread, carries across a suspend and resume on another thread, and a
// reading on a thread the count did not resume on — or the first reading
// after a stint lost that way — is not good.
func TestLoopCPU(t *testing.T) {
	onThread := func(f func()) { // f on a thread of its own
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // the thread exits with the goroutine
			f()
			close(done)
		}()
		<-done
	}
	var c loopCPU
	var first, second time.Duration
	onThread(func() {
		c.resume()
		burn(5 * time.Millisecond)
		var ok bool
		first, ok = c.read()
		assert.True(t, ok)
		assert.GreaterOrEqual(t, first, 5*time.Millisecond)
		c.suspend()
	})
	onThread(func() {
		c.resume()
		burn(5 * time.Millisecond)
		var ok bool
		second, ok = c.read()
		assert.True(t, ok, "resumed on this thread")
		assert.GreaterOrEqual(t, second-first, 5*time.Millisecond, "the first thread's time is kept")
		assert.Less(t, second, time.Second)
	})
	onThread(func() {
		_, ok := c.read()
		assert.False(t, ok, "read on a thread the count did not resume on")
		c.suspend() // a stint lost
	})
	onThread(func() {
		c.resume()
		_, ok := c.read()
		assert.False(t, ok, "the first reading after a lost stint")
		_, ok = c.read()
		assert.True(t, ok)
	})
}
