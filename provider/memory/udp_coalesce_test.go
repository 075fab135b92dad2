package memory

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestUDPCoalescer: the loop pauses after each batch only during a window
// that follows one whose rate exceeded the threshold, and never when the
// pause is off.
func TestUDPCoalescer(t *testing.T) {
	const delay = 60 * time.Microsecond
	c := udpCoalescer{delay: delay, rate: 60000}
	t0 := time.Unix(1000, 0)
	// The first batch opens a window; nothing is known yet.
	assert.Zero(t, c.after(1, t0))
	// 40 queries in 1 ms: 40,000/s, below the rate.
	at := t0
	for range 39 {
		at = at.Add(25 * time.Microsecond)
		assert.Zero(t, c.after(1, at))
	}
	at = t0.Add(time.Millisecond)
	assert.Zero(t, c.after(1, at), "a window at 40,000/s")
	// 100 queries in the next millisecond: 100,000/s.
	for range 99 {
		at = at.Add(10 * time.Microsecond)
		assert.Zero(t, c.after(1, at), "the rate is known only when the window closes")
	}
	at = at.Add(10 * time.Microsecond)
	assert.Equal(t, delay, c.after(1, at), "a window at 100,000/s")
	assert.Equal(t, delay, c.after(8, at.Add(100*time.Microsecond)), "it keeps pausing until the next window closes")
	// A quiet stretch: the window that closes after it is far below the rate.
	assert.Zero(t, c.after(1, at.Add(time.Second)))
	assert.Zero(t, c.after(1, at.Add(time.Second+time.Microsecond)))

	off := udpCoalescer{rate: 60000}
	for i := range 1000 {
		assert.Zero(t, off.after(32, t0.Add(time.Duration(i)*time.Microsecond)), "pause off")
	}
}
