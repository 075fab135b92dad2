package provider

import (
	"context"
	"sync"
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
)

// CallEvent describes one finished call through a Meter.
type CallEvent struct {
	Method Method
	Zone   string
	// RecordsIn is how many records the caller passed; RecordsOut how many
	// the provider returned (zones, for ListZones).
	RecordsIn, RecordsOut int
	// Latency is the time from entering the Meter to the call's return,
	// read from the Meter's clock (virtual inside a synctest bubble).
	Latency time.Duration
	// Err is the call's error, nil on success; Class its verdict (ErrorClass.String)
	// as a string: "none", "throttled", "transient" or "permanent".
	Err   error
	Class string
}

// Observer receives a CallEvent after each call through a Meter, outside
// any lock, on the caller's goroutine; events of concurrent calls arrive in
// the order they finished. Observe must not block for long.
type Observer interface {
	Observe(CallEvent)
}

// MethodStats counts the calls of one method.
type MethodStats struct {
	Calls int64 `json:"calls"`
	// Errors counts failed calls; Throttled, Transient and Permanent split
	// them by ErrorClass.
	Errors    int64 `json:"errors"`
	Throttled int64 `json:"throttled"`
	Transient int64 `json:"transient"`
	Permanent int64 `json:"permanent"`
	// RecordsIn and RecordsOut sum the records passed in and returned.
	RecordsIn  int64 `json:"recordsIn"`
	RecordsOut int64 `json:"recordsOut"`
	// Latency sums the calls' latencies; MaxLatency is the slowest.
	Latency    time.Duration `json:"latency"`
	MaxLatency time.Duration `json:"maxLatency"`
}

// MeanLatency returns Latency / Calls, 0 without calls.
func (s MethodStats) MeanLatency() time.Duration {
	if s.Calls == 0 {
		return 0
	}
	return s.Latency / time.Duration(s.Calls)
}

func (s *MethodStats) add(o MethodStats) {
	s.Calls += o.Calls
	s.Errors += o.Errors
	s.Throttled += o.Throttled
	s.Transient += o.Transient
	s.Permanent += o.Permanent
	s.RecordsIn += o.RecordsIn
	s.RecordsOut += o.RecordsOut
	s.Latency += o.Latency
	s.MaxLatency = max(s.MaxLatency, o.MaxLatency)
}

// Stats is a snapshot of a Meter: per-method counters. Methods never
// called are absent from the map.
type Stats struct {
	Methods map[Method]MethodStats `json:"methods"`
}

// Method returns the counters of m (zero when never called).
func (s Stats) Method(m Method) MethodStats { return s.Methods[m] }

// Total sums every method's counters (MaxLatency is the overall maximum).
func (s Stats) Total() MethodStats {
	var t MethodStats
	for _, m := range s.Methods {
		t.add(m)
	}
	return t
}

// Meter is an Interceptor that counts calls, records, errors by class and
// latency per method, and hands each finished call to an optional Observer.
// Put it outermost to measure what callers see (retries included in the
// latency), or innermost to count every attempt. Safe for concurrent use;
// the zero value is ready and quiet.
type Meter struct {
	// Observer, when non-nil, receives every CallEvent. Set it before the
	// first call; it is read without locking.
	Observer Observer

	mu    sync.Mutex
	stats map[Method]*MethodStats
}

// NewMeter returns a Meter that reports to obs (nil = nobody).
func NewMeter(obs Observer) *Meter { return &Meter{Observer: obs} }

// Intercept times the call and records it.
func (m *Meter) Intercept(ctx context.Context, c Call, next Invoker) (Result, error) {
	start := time.Now()
	res, err := next(ctx, c)
	ev := CallEvent{
		Method:     c.Method,
		Zone:       c.Zone,
		RecordsIn:  len(c.Records),
		RecordsOut: len(res.Records) + len(res.Zones),
		Latency:    time.Since(start),
		Err:        err,
		Class:      errclass.Of(err).String(),
	}
	m.record(ev)
	if m.Observer != nil {
		m.Observer.Observe(ev)
	}
	return res, err
}

func (m *Meter) record(ev CallEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stats == nil {
		m.stats = make(map[Method]*MethodStats)
	}
	s := m.stats[ev.Method]
	if s == nil {
		s = &MethodStats{}
		m.stats[ev.Method] = s
	}
	s.Calls++
	s.RecordsIn += int64(ev.RecordsIn)
	s.RecordsOut += int64(ev.RecordsOut)
	s.Latency += ev.Latency
	s.MaxLatency = max(s.MaxLatency, ev.Latency)
	if ev.Err != nil {
		s.Errors++
		switch ev.Class {
		case errclass.Throttled.String():
			s.Throttled++
		case errclass.Transient.String():
			s.Transient++
		default:
			s.Permanent++
		}
	}
}

// Stats returns a copy of the counters, safe to keep and compare.
func (m *Meter) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := Stats{Methods: make(map[Method]MethodStats, len(m.stats))}
	for k, v := range m.stats {
		out.Methods[k] = *v
	}
	return out
}

// Reset zeroes the counters.
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stats = nil
}
