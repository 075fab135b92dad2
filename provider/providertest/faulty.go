package providertest

import (
	"context"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/gslbkit/gslb/internal/jsontime"
	"github.com/gslbkit/gslb/provider"
	"github.com/libdns/libdns"
)

// FaultKind is a kind of injected fault.
type FaultKind int

const (
	// NoFault: the call passes through untouched.
	NoFault FaultKind = iota
	// Throttle: the call is refused before reaching the provider with an
	// error answering Throttled() true (and Temporary() true).
	Throttle
	// Transient: the call is refused before reaching the provider with an
	// error answering Temporary() true.
	Transient
	// Permanent: the call is refused before reaching the provider with an
	// error answering neither.
	Permanent
	// Partial: a write with two or more records reaches the provider with
	// only its first Applied records (the same method, a shorter batch; for
	// SetRecords that may shrink an RRset), then fails with a transient
	// error. A read or a one-record write drawn for Partial fails as
	// Transient, applying nothing.
	Partial
)

// String returns "none", "throttle", "transient", "permanent" or "partial".
func (k FaultKind) String() string {
	switch k {
	case NoFault:
		return "none"
	case Throttle:
		return "throttle"
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	case Partial:
		return "partial"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// ErrInjected is matched (errors.Is) by every error Faulty injects.
var ErrInjected = errors.New("providertest: injected fault")

// FaultError is the error of an injected fault. It unwraps to ErrInjected.
type FaultError struct {
	Kind   FaultKind
	Method provider.Method
	// Applied is how many of the call's Of records reached the provider
	// (Partial only).
	Applied, Of int
}

// Error describes the fault.
func (e *FaultError) Error() string {
	if e.Kind == Partial {
		return fmt.Sprintf("providertest: injected partial failure of %s: applied %d of %d records", e.Method, e.Applied, e.Of)
	}
	return fmt.Sprintf("providertest: injected %s failure of %s", e.Kind, e.Method)
}

// Unwrap returns ErrInjected.
func (e *FaultError) Unwrap() error { return ErrInjected }

// Throttled reports whether the fault asks the caller to slow down.
func (e *FaultError) Throttled() bool { return e.Kind == Throttle }

// Temporary reports whether the call may pass on retry.
func (e *FaultError) Temporary() bool {
	return e.Kind == Throttle || e.Kind == Transient || e.Kind == Partial
}

// FaultConfig sets the shares of calls that fail and the latency added.
// Rates are probabilities per call in [0, 1] whose sum is at most 1.
type FaultConfig struct {
	// Seed makes the draws reproducible: the same seed and the same order
	// of calls give the same faults. (Concurrent callers make the order,
	// and so the faults each one sees, depend on scheduling.)
	Seed uint64 `json:"seed"`
	// ThrottleRate is the share of calls refused as throttled.
	ThrottleRate float64 `json:"throttleRate"`
	// TransientRate is the share of calls refused with a transient error.
	TransientRate float64 `json:"transientRate"`
	// PermanentRate is the share of calls refused with a permanent error.
	PermanentRate float64 `json:"permanentRate"`
	// PartialRate is the share of calls applied in part (see Partial).
	PartialRate float64 `json:"partialRate"`
	// Latency is added before every call, in [0, 1h]; waiting is a timer
	// that honours ctx, so it costs no real time in a synctest bubble.
	Latency time.Duration `json:"latency"`
	// LatencyJitter adds up to this much more, uniformly drawn, in [0, 1h].
	LatencyJitter time.Duration `json:"latencyJitter"`
	// Methods limits faults and latency to calls of these methods (e.g.
	// only the writes); empty means every method. Calls of other methods
	// pass untouched, draw nothing and leave queued faults queued.
	Methods []provider.Method `json:"methods,omitempty"`
}

// ErrFaultConfig is wrapped by every FaultConfig validation error (a
// *FieldError).
var ErrFaultConfig = errors.New("providertest: invalid fault config")

// FieldError is the module's one invalid-configuration error: the field's
// path, its value as written and what is allowed. Its message reads
//
//	providertest: invalid fault config: throttleRate = 2: allowed [0, 1]
type FieldError = fielderr.Error

// Validate reports the first field outside its range, as a *FieldError
// wrapping ErrFaultConfig. The zero FaultConfig is valid: no faults, no
// latency.
func (c FaultConfig) Validate() error {
	rates := []struct {
		name string
		v    float64
	}{{"throttleRate", c.ThrottleRate}, {"transientRate", c.TransientRate}, {"permanentRate", c.PermanentRate}, {"partialRate", c.PartialRate}}
	sum := 0.0
	for _, r := range rates {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return fielderr.New(ErrFaultConfig, r.name, r.v, fielderr.Range(0, 1))
		}
		sum += r.v
	}
	if sum > 1+1e-9 {
		return fielderr.New(ErrFaultConfig, "partialRate", c.PartialRate, fmt.Sprintf("[0, 1], the four rates summing to <= 1 (they sum to %v)", sum))
	}
	if c.Latency < 0 || c.Latency > time.Hour {
		return fielderr.New(ErrFaultConfig, "latency", c.Latency, fielderr.DurationRange(0, time.Hour))
	}
	if c.LatencyJitter < 0 || c.LatencyJitter > time.Hour {
		return fielderr.New(ErrFaultConfig, "latencyJitter", c.LatencyJitter, fielderr.DurationRange(0, time.Hour))
	}
	for i, m := range c.Methods {
		if !slices.Contains(provider.Methods[:], m) {
			names := make([]string, len(provider.Methods))
			for j, pm := range provider.Methods {
				names[j] = string(pm)
			}
			return fielderr.New(ErrFaultConfig, fielderr.Index("methods", i), string(m), fielderr.OneOf(names...))
		}
	}
	return nil
}

// Fault is one entry of a Faulty's log: the Seq-th call (from 1) and what
// was done to it.
type Fault struct {
	Seq     int
	Method  provider.Method
	Kind    FaultKind
	Applied int
	Delay   time.Duration
}

// Faulty wraps a provider and injects faults: throttling, transient and
// permanent errors, partial application of a batch, and latency, drawn
// from a seeded generator, plus faults queued with Inject for scripted
// tests. It implements every libdns interface (through provider.Wrapped)
// and is itself a provider.Interceptor, so it can also sit inside another
// chain. Safe for concurrent use.
type Faulty struct {
	*provider.Wrapped
	cfg FaultConfig

	mu    sync.Mutex
	rng   *rand.Rand
	queue []FaultKind
	log   []Fault
	seq   int
}

// NewFaulty validates cfg and wraps p.
func NewFaulty(p libdns.RecordGetter, cfg FaultConfig) (*Faulty, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := &Faulty{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	f.Wrapped = provider.Wrap(p, f)
	return f, nil
}

// Inject queues faults for the next calls, one per call, in order, ahead
// of the random draws. Inject(NoFault) lets one call through untouched.
func (f *Faulty) Inject(kinds ...FaultKind) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, kinds...)
}

// Faults returns a copy of the log of calls that were faulted or delayed.
func (f *Faulty) Faults() []Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Fault(nil), f.log...)
}

// Calls returns how many calls have passed through.
func (f *Faulty) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// draw decides the fate of one call.
func (f *Faulty) draw(c provider.Call) Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	ft := Fault{Seq: f.seq, Method: c.Method}
	if len(f.cfg.Methods) > 0 && !slices.Contains(f.cfg.Methods, c.Method) {
		return ft
	}
	if len(f.queue) > 0 {
		ft.Kind, f.queue = f.queue[0], f.queue[1:]
	} else {
		u := f.rng.Float64()
		for _, r := range []struct {
			k FaultKind
			p float64
		}{{Throttle, f.cfg.ThrottleRate}, {Transient, f.cfg.TransientRate}, {Permanent, f.cfg.PermanentRate}, {Partial, f.cfg.PartialRate}} {
			if u < r.p {
				ft.Kind = r.k
				break
			}
			u -= r.p
		}
	}
	if ft.Kind == Partial {
		if c.Method.Writes() && !c.Method.Atomic() && len(c.Records) >= 2 {
			ft.Applied = 1 + f.rng.IntN(len(c.Records)-1)
		} else {
			ft.Kind = Transient
		}
	}
	ft.Delay = f.cfg.Latency
	if j := f.cfg.LatencyJitter; j > 0 {
		ft.Delay += time.Duration(f.rng.Int64N(int64(j)))
	}
	if ft.Kind != NoFault || ft.Delay > 0 {
		f.log = append(f.log, ft)
	}
	return ft
}

// Intercept applies the drawn fault to the call.
func (f *Faulty) Intercept(ctx context.Context, c provider.Call, next provider.Invoker) (provider.Result, error) {
	ft := f.draw(c)
	if ft.Delay > 0 {
		t := time.NewTimer(ft.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return provider.Result{}, ctx.Err()
		case <-t.C:
		}
	}
	switch ft.Kind {
	case Throttle, Transient, Permanent:
		return provider.Result{}, &FaultError{Kind: ft.Kind, Method: c.Method}
	case Partial:
		part := c
		part.Records = c.Records[:ft.Applied:ft.Applied]
		if _, err := next(ctx, part); err != nil {
			return provider.Result{}, err
		}
		return provider.Result{}, &FaultError{Kind: Partial, Method: c.Method, Applied: ft.Applied, Of: len(c.Records)}
	}
	return next(ctx, c)
}

var _ provider.Interceptor = (*Faulty)(nil)

// MarshalJSON writes FaultConfig with its durations as strings such as "10s".
func (c FaultConfig) MarshalJSON() ([]byte, error) {
	type plain FaultConfig
	return jsontime.Marshal(plain(c))
}

// UnmarshalJSON reads FaultConfig, its durations as strings such as "10s" or as
// numbers of seconds. Unknown keys, and keys in the wrong case, are errors.
func (c *FaultConfig) UnmarshalJSON(b []byte) error {
	type plain FaultConfig
	return jsontime.Unmarshal(b, (*plain)(c))
}
