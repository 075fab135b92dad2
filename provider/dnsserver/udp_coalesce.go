package dnsserver

import "time"

// The UDP loop's pause (ServerConfig.UDPCoalesce). Pausing a few tens of
// microseconds after each batch lets the next receive find several queries
// waiting, so the loop makes fewer system calls and wakes the client's
// receiver once per batch instead of once per reply. Whether that saves
// CPU depends on the machine: a pause is a sleep and a wake-up, and where
// timers are dear (virtual machines, where a 60 µs sleep was seen to last
// 130 µs) the pause costs more than the fuller batches save. So the loop
// does not assume: above the rate threshold it tries both, in alternating
// phases, measures the CPU each costs per query, pauses only if that is
// clearly cheaper, and tries again every few seconds.

const (
	// tunePhase is how long one trial phase lasts.
	tunePhase = 20 * time.Millisecond
	// tuneHold is how long a choice stands before the next trial.
	tuneHold = 5 * time.Second
	// tuneMargin is how much cheaper per query pausing must be (a
	// fraction of the cost without pausing) to be chosen: a pause adds
	// latency, and a trial measures with some noise: a small saving, or
	// a tie, goes to not pausing.
	tuneMargin = 0.10
)

// tuneOrder is the pausing mode of each trial phase, off and on in an
// ABBA order so that a steady drift in load weighs on both alike.
var tuneOrder = [...]bool{false, true, true, false, false, true, true, false}

// udpCoalescer decides the UDP loop's pause after each batch. It counts
// the queries received over windows of at least a millisecond; while the
// last window's rate exceeded rate, it runs the trial (see above) and
// then pauses delay after every batch if the trial chose to. cpu reads the
// CPU time the loop has used so far and whether the reading is good (a
// loop moved between threads mid-phase cannot tell); it is asked only at
// the edges of trial phases. trial, if not nil, is told each trial's
// choice. arm, if not nil, is told when the rate is crossed, up (before
// the first reading of cpu) or down: below the rate the loop needs neither
// the CPU count nor the rest of the pause's set-up, and so spends no
// system call on them.
type udpCoalescer struct {
	delay time.Duration
	rate  int
	cpu   func() (time.Duration, bool)
	trial func(pause bool)
	arm   func(on bool)

	start time.Time // the rate window
	count int
	on    bool // the last window was above the rate

	phase   int // the trial phase under way; len(tuneOrder) when none is
	pStart  time.Time
	pCPU    time.Duration
	pOK     bool
	pCount  int
	spent   [2]time.Duration // CPU per mode (0 off, 1 on) over the trial
	queries [2]int
	pause   bool      // the choice
	until   time.Time // when it expires; zero: no choice yet
}

func newUDPCoalescer(delay time.Duration, rate int, cpu func() (time.Duration, bool), trial func(pause bool)) udpCoalescer {
	return udpCoalescer{delay: delay, rate: rate, cpu: cpu, trial: trial, phase: len(tuneOrder)}
}

// after records a batch of n queries received, answered at now, and
// returns how long to pause before the next receive.
func (c *udpCoalescer) after(n int, now time.Time) time.Duration {
	if c.delay <= 0 {
		return 0
	}
	c.count += n
	if d := now.Sub(c.start); d >= time.Millisecond {
		on := float64(c.count) > float64(c.rate)*d.Seconds()
		c.start, c.count = now, 0
		if on != c.on {
			c.on = on
			if c.arm != nil {
				c.arm(on)
			}
		}
		if !c.on {
			// Below the rate nothing pauses, so a phase would measure
			// nothing: the trial starts over when the rate is back.
			c.phase = len(tuneOrder)
		}
	}
	if !c.on {
		return 0
	}
	if c.phase == len(tuneOrder) && !now.Before(c.until) {
		c.begin(now)
	}
	if c.phase < len(tuneOrder) {
		c.pCount += n
		if now.Sub(c.pStart) >= tunePhase {
			c.endPhase(now)
		}
	}
	if c.phase < len(tuneOrder) {
		if tuneOrder[c.phase] {
			return c.delay
		}
		return 0
	}
	if c.pause {
		return c.delay
	}
	return 0
}

// begin starts a trial at now.
func (c *udpCoalescer) begin(now time.Time) {
	c.phase = 0
	c.spent, c.queries = [2]time.Duration{}, [2]int{}
	c.startPhase(now)
}

func (c *udpCoalescer) startPhase(now time.Time) {
	c.pStart, c.pCount = now, 0
	c.pCPU, c.pOK = c.cpu()
}

// endPhase adds the phase that ends at now to its mode's account and
// starts the next one, or ends the trial with a choice.
func (c *udpCoalescer) endPhase(now time.Time) {
	used, ok := c.cpu()
	spent := used - c.pCPU
	// A reading from another thread, or one that claims more CPU than
	// the time that passed, says nothing: the phase is not counted.
	if ok && c.pOK && spent >= 0 && spent <= now.Sub(c.pStart)*3/2 {
		m := 0
		if tuneOrder[c.phase] {
			m = 1
		}
		c.spent[m] += spent
		c.queries[m] += c.pCount
	}
	c.phase++
	if c.phase < len(tuneOrder) {
		c.startPhase(now)
		return
	}
	c.pause = false
	if c.queries[0] > 0 && c.queries[1] > 0 {
		off := float64(c.spent[0]) / float64(c.queries[0])
		on := float64(c.spent[1]) / float64(c.queries[1])
		c.pause = on < off*(1-tuneMargin)
	}
	c.until = now.Add(tuneHold)
	if c.trial != nil {
		c.trial(c.pause)
	}
}
