package main

import (
	"time"

	"github.com/gslbkit/gslb/probe"
)

// The API's views. They are written for people and scripts alike: states
// and kinds are words, durations are Go duration strings with their unit
// ("1m30s"), latencies are milliseconds in fields ending in Ms, and maps
// are keyed by name rather than by position. openapi.yaml describes them.

// recordView is a record as the API shows it.
type recordView struct {
	Name string `json:"name"`
	// TTL is the answers' TTL, e.g. "30s".
	TTL      string `json:"ttl"`
	Failover string `json:"failover,omitempty"`
	// Disabled is the operator's intent for the record; DisabledSince is
	// when it was disabled through the API (absent when disabled by the
	// config or not disabled).
	Disabled      bool       `json:"disabled"`
	DisabledSince *time.Time `json:"disabledSince,omitempty"`
	// Answer is what the embedded zone holds at the name ("A 192.0.2.1",
	// "CNAME failover.example.net.").
	Answer []string `json:"answer"`
	// AnswerKind is how the published addresses are answered per query:
	// "all", "roundRobin", "weightedRandom", "geo" or "regionFilter".
	AnswerKind string `json:"answerKind"`
	// AnswerWithin is how a geo or regionFilter record answers the
	// chosen region's addresses ("roundRobin", "weightedRandom"; absent:
	// every one).
	AnswerWithin string `json:"answerWithin,omitempty"`
	// AnswerSteps are the record's steering steps, in order ("latency",
	// "loadShed", ...; absent: none).
	AnswerSteps []string      `json:"answerSteps,omitempty"`
	Addresses   []addressView `json:"addresses"`
}

// addressView is one address with its state and statistics.
type addressView struct {
	IP        string   `json:"ip"`
	ProbeAddr string   `json:"probeAddr"`
	Regions   []string `json:"regions,omitempty"`
	Weight    int      `json:"weight,omitempty"`
	// State is "passing", "warning", "critical" or "recovery"; Served says
	// whether the address is in answers: its state is served, it is not
	// drained and its record is not disabled.
	State  string `json:"state"`
	Served bool   `json:"served"`
	// Intent is what an operator asked for.
	Intent intentView `json:"intent"`
	// Since is when the address entered State.
	Since *time.Time `json:"since,omitempty"`
	// TimeIn is the time spent in each state since the start, e.g.
	// {"passing": "1h2m0s", "critical": "30s"}.
	TimeIn      map[string]string `json:"timeIn"`
	Transitions uint64            `json:"transitions"`
	Probes      uint64            `json:"probes"`
	Passes      uint64            `json:"passes"`
	Failures    uint64            `json:"failures"`
	// FailuresByKind counts failures by kind ("timeout", "refused", …);
	// kinds never seen are left out.
	FailuresByKind map[string]uint64 `json:"failuresByKind"`
	LastResult     *resultView       `json:"lastResult,omitempty"`
	LastError      string            `json:"lastError,omitempty"`
	LastErrorAt    *time.Time        `json:"lastErrorAt,omitempty"`
	Latency        latencyView       `json:"latency"`
	NextProbe      *time.Time        `json:"nextProbe,omitempty"`
	InFlight       bool              `json:"inFlight"`
}

// intentView is the operator's intent for an address.
type intentView struct {
	// Drained is true while an operator's drain holds.
	Drained bool `json:"drained"`
	// Action is the last operator action ("drain", "undrain"), At when it
	// was made and By who made it (the client's address); absent when
	// there was none.
	Action string     `json:"action,omitempty"`
	At     *time.Time `json:"at,omitempty"`
	By     string     `json:"by,omitempty"`
	// Reason is the operator's note; Until ends the drain by itself;
	// Forced says the drain took the record's last served address.
	Reason string     `json:"reason,omitempty"`
	Until  *time.Time `json:"until,omitempty"`
	Forced bool       `json:"forced,omitempty"`
}

// resultView is one probe result.
type resultView struct {
	// Status is "pass", "fail" or "fail-now"; Kind why it failed ("none"
	// for a pass).
	Status    string     `json:"status"`
	Kind      string     `json:"kind"`
	LatencyMs float64    `json:"latencyMs"`
	Code      int        `json:"code,omitempty"`
	Detail    string     `json:"detail,omitempty"`
	At        *time.Time `json:"at,omitempty"`
}

// latencyView holds probe latencies in milliseconds.
type latencyView struct {
	LastMs     float64 `json:"lastMs"`
	SmoothedMs float64 `json:"smoothedMs"`
	P50Ms      float64 `json:"p50Ms"`
	P95Ms      float64 `json:"p95Ms"`
	P99Ms      float64 `json:"p99Ms"`
	// Samples is the number of probes the percentiles are taken over.
	Samples int `json:"samples"`
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// timePtr is &t, or nil for the zero time.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// durString formats d with its unit, rounded to the millisecond.
func durString(d time.Duration) string { return d.Round(time.Millisecond).String() }

// fillStats copies a target's statistics into v.
func (v *addressView) fillStats(st probe.TargetStats) {
	v.State, v.Served = st.State.String(), st.Served
	v.Since = timePtr(st.Since)
	v.TimeIn = map[string]string{}
	for i, d := range st.TimeIn {
		if s := probe.State(i); s != probe.Unknown {
			v.TimeIn[s.String()] = durString(d)
		}
	}
	v.Transitions, v.Probes, v.Passes, v.Failures = st.Transitions, st.Probes, st.Passes, st.Failures
	v.FailuresByKind = map[string]uint64{}
	for i, n := range st.FailuresByKind {
		if n > 0 {
			v.FailuresByKind[probe.Kind(i).String()] = n
		}
	}
	if !st.LastProbe.IsZero() {
		r := st.LastResult
		v.LastResult = &resultView{Status: r.Status.String(), Kind: r.Kind.String(), LatencyMs: ms(r.Latency),
			Code: r.Code, Detail: r.Detail, At: timePtr(st.LastProbe)}
	}
	v.LastError, v.LastErrorAt = st.LastError, timePtr(st.LastErrorAt)
	v.Latency = latencyView{LastMs: ms(st.LastLatency), SmoothedMs: ms(st.SmoothedLatency),
		P50Ms: ms(st.P50), P95Ms: ms(st.P95), P99Ms: ms(st.P99), Samples: st.Samples}
	v.NextProbe, v.InFlight = timePtr(st.NextProbe), st.InFlight
	if st.Disabled {
		v.Intent.Drained = true
	}
}
