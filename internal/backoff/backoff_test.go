package backoff

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestExponentialBaseDelay(t *testing.T) {
	e := Exponential{Base: 100 * time.Millisecond, Max: time.Second, Factor: 2}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := e.BaseDelay(i); got != w*time.Millisecond {
			t.Errorf("attempt %d: got %v want %v", i, got, w*time.Millisecond)
		}
	}
	if got := (Exponential{}).Delay(3, nil); got != 0 {
		t.Errorf("zero value waits %v", got)
	}
	if got := e.BaseDelay(10000); got != time.Second {
		t.Errorf("huge attempt: %v", got)
	}
}

func TestExponentialJitterBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	e := Exponential{Base: time.Second, Max: time.Minute, Factor: 2, Jitter: 0.5}
	for attempt := 0; attempt < 10; attempt++ {
		base := e.BaseDelay(attempt)
		for i := 0; i < 100; i++ {
			d := e.Delay(attempt, r)
			if d < base/2 || d > base {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, base/2, base)
			}
		}
	}
}

func TestDoubling(t *testing.T) {
	cases := []struct {
		n    int
		want time.Duration
	}{{0, 10 * time.Second}, {1, 20 * time.Second}, {4, 160 * time.Second}, {5, 300 * time.Second}, {50, 300 * time.Second}}
	for _, c := range cases {
		if got := Doubling(10*time.Second, c.n, 300*time.Second); got != c.want {
			t.Errorf("n=%d: got %v want %v", c.n, got, c.want)
		}
	}
	if got := Doubling(time.Second, 100, 0); got <= 0 {
		t.Errorf("uncapped overflow: %v", got)
	}
}

func TestJitter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	j := Jitter{Absolute: 100 * time.Millisecond, Percent: 10}
	if got := j.Max(time.Second); got != 200*time.Millisecond {
		t.Fatalf("Max: %v", got)
	}
	for i := 0; i < 1000; i++ {
		d := j.Apply(time.Second, r)
		if d < time.Second || d >= 1200*time.Millisecond {
			t.Fatalf("Apply out of bounds: %v", d)
		}
	}
	if got := j.Apply(time.Second, nil); got != time.Second {
		t.Fatalf("nil rand changed interval: %v", got)
	}
	if got := Uniform(time.Second, r); got < 0 || got >= time.Second {
		t.Fatalf("Uniform: %v", got)
	}
}
