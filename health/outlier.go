package health

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Outcome is the result of one real request to an endpoint, as the data
// path saw it.
type Outcome struct {
	// Status is the HTTP status of the response; 0 when there was none.
	Status int
	// LocalOrigin is true when the request failed before any response:
	// a connect failure, a timeout or a reset.
	LocalOrigin bool
}

// Response returns the outcome of a request answered with status.
func Response(status int) Outcome { return Outcome{Status: status} }

// LocalFailure returns the outcome of a request that got no response.
func LocalFailure() Outcome { return Outcome{LocalOrigin: true} }

// success reports whether the outcome counts as a success for the success
// rate and failure percentage: a response below 500.
func (o Outcome) success() bool { return !o.LocalOrigin && o.Status < 500 }

// Reason says why an endpoint was ejected or returned.
type Reason uint8

const (
	// ReasonConsecutive5xx: Consecutive5xx responses in a row.
	ReasonConsecutive5xx Reason = iota + 1
	// ReasonConsecutiveGatewayErrors: 502/503/504 responses in a row.
	ReasonConsecutiveGatewayErrors
	// ReasonConsecutiveLocalOrigin: local-origin failures in a row.
	ReasonConsecutiveLocalOrigin
	// ReasonSuccessRate: success rate below mean − factor × stdev.
	ReasonSuccessRate
	// ReasonFailurePercentage: failure percentage at or above the threshold.
	ReasonFailurePercentage
	// ReasonEjectionTimeElapsed: the ejection's time passed (a return).
	ReasonEjectionTimeElapsed
	// ReasonActiveCheck: a passing active health check ended the ejection.
	ReasonActiveCheck
)

var reasonNames = [...]string{"", "consecutive5xx", "consecutiveGatewayErrors", "consecutiveLocalOriginFailures",
	"successRate", "failurePercentage", "ejectionTimeElapsed", "activeCheck"}

// String returns the reason's camelCase name.
func (r Reason) String() string {
	if int(r) < len(reasonNames) && r > 0 {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// OutlierEventKind says whether an event is an ejection or a return.
type OutlierEventKind uint8

const (
	// Ejected: the endpoint was taken out of service.
	Ejected OutlierEventKind = iota + 1
	// Returned: the endpoint came back into service.
	Returned
)

// String returns "ejected" or "returned".
func (k OutlierEventKind) String() string {
	switch k {
	case Ejected:
		return "ejected"
	case Returned:
		return "returned"
	}
	return "unknown"
}

// OutlierEvent reports one ejection or return.
type OutlierEvent struct {
	Kind     OutlierEventKind
	Endpoint string
	Reason   Reason
	// At is the now given to the call that caused the event.
	At time.Time
	// Multiplier is the endpoint's ejection multiplier after the event.
	Multiplier int
	// For is, for an ejection, how long it lasts: min(base × multiplier, max).
	For time.Duration
}

// String formats the event for logs.
func (e OutlierEvent) String() string {
	if e.Kind == Ejected {
		return fmt.Sprintf("%s ejected (%s) for %s", e.Endpoint, e.Reason, e.For)
	}
	return fmt.Sprintf("%s returned (%s)", e.Endpoint, e.Reason)
}

type epState struct {
	c5xx, cgw, clocal int
	ejected           bool
	ejectedAt         time.Time
	returnedAt        time.Time // zero: never returned
	mult              int
	reqs, succ        int // this interval
}

// Outlier is Envoy-style passive health checking (outlier detection) as a
// pure value: Report feeds it real request outcomes, Tick runs the periodic
// analysis, both with the current time, and both return ejections and
// returns as values. It starts no goroutines and is not safe for concurrent
// use; Detector wraps it for that. Endpoints are named by strings and must
// be added before they are reported.
type Outlier struct {
	cfg     OutlierConfig
	eps     map[string]*epState
	ejected int
	// rates holds every endpoint in name order (kept sorted by Add and
	// Remove, so Tick never sorts), with scratch space for its statistics.
	rates []epRate
}

type epRate struct {
	id   string
	st   *epState
	rate float64
}

// NewOutlier returns a detector with cfg (validated, copied) and no endpoints.
func NewOutlier(cfg OutlierConfig) (*Outlier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Outlier{cfg: cfg, eps: map[string]*epState{}}, nil
}

// Config returns the detector's configuration.
func (d *Outlier) Config() OutlierConfig { return d.cfg.withDefaults() }

// ready readies a zero Outlier, which is usable: it has the defaults of
// OutlierConfig.
func (d *Outlier) ready() {
	if d.eps == nil {
		d.cfg = d.cfg.withDefaults()
		d.eps = map[string]*epState{}
	}
}

// Add adds an endpoint (not ejected); adding a known one does nothing.
func (d *Outlier) Add(ep string) {
	d.ready()
	if _, ok := d.eps[ep]; ok {
		return
	}
	st := &epState{}
	d.eps[ep] = st
	i := sort.Search(len(d.rates), func(i int) bool { return d.rates[i].id >= ep })
	d.rates = append(d.rates, epRate{})
	copy(d.rates[i+1:], d.rates[i:])
	d.rates[i] = epRate{id: ep, st: st}
}

// Remove forgets an endpoint, ejected or not.
func (d *Outlier) Remove(ep string) {
	if st, ok := d.eps[ep]; ok {
		if st.ejected {
			d.ejected--
		}
		delete(d.eps, ep)
		i := sort.Search(len(d.rates), func(i int) bool { return d.rates[i].id >= ep })
		d.rates = append(d.rates[:i], d.rates[i+1:]...)
	}
}

// Len returns the number of endpoints; EjectedCount those ejected now.
func (d *Outlier) Len() int { return len(d.eps) }

// EjectedCount returns how many endpoints are ejected now.
func (d *Outlier) EjectedCount() int { return d.ejected }

// Ejected reports whether ep is ejected now (false for unknown endpoints).
func (d *Outlier) Ejected(ep string) bool {
	st, ok := d.eps[ep]
	return ok && st.ejected
}

// Multiplier returns ep's ejection multiplier (0 for unknown endpoints).
func (d *Outlier) Multiplier(ep string) int {
	if st, ok := d.eps[ep]; ok {
		return st.mult
	}
	return 0
}

// Healthy combines active and passive health: an endpoint is healthy only
// when its active checks pass (activeServed) and it is not ejected.
func (d *Outlier) Healthy(ep string, activeServed bool) bool {
	return activeServed && !d.Ejected(ep)
}

// canEject is Envoy's cap: 100 × (ejected + 1) / total ≤ max percent, or,
// with AlwaysEjectOne, nothing ejected yet.
func (d *Outlier) canEject() bool {
	if d.cfg.AlwaysEjectOne && d.ejected == 0 {
		return true
	}
	total := len(d.eps)
	if total == 0 {
		return false
	}
	return 100*float64(d.ejected+1)/float64(total) <= d.cfg.MaxEjectionPercent
}

func (d *Outlier) eject(now time.Time, ep string, st *epState, why Reason) (OutlierEvent, bool) {
	if st.ejected || !d.canEject() {
		return OutlierEvent{}, false
	}
	base := d.cfg.BaseEjectionTime
	maxT := d.cfg.MaxEjection()
	if float64(base)*float64(st.mult) < float64(maxT)+float64(base) {
		st.mult++
	}
	st.ejected = true
	st.ejectedAt = now
	d.ejected++
	return OutlierEvent{Kind: Ejected, Endpoint: ep, Reason: why, At: now, Multiplier: st.mult, For: d.ejectionLength(st)}, true
}

func (d *Outlier) ejectionLength(st *epState) time.Duration {
	base := d.cfg.BaseEjectionTime
	maxT := d.cfg.MaxEjection()
	l := float64(base) * float64(st.mult)
	if l > float64(maxT) {
		return maxT
	}
	return time.Duration(l)
}

func (d *Outlier) unEject(now time.Time, ep string, st *epState, why Reason) OutlierEvent {
	st.ejected = false
	st.returnedAt = now
	st.c5xx, st.cgw, st.clocal = 0, 0, 0
	d.ejected--
	return OutlierEvent{Kind: Returned, Endpoint: ep, Reason: why, At: now, Multiplier: st.mult}
}

// Report records one request outcome for ep and returns the ejection it
// causes, if any. Rules (Envoy's): a 5xx adds to the 5xx count, and 502,
// 503 and 504 also to the gateway-error count (other 5xx reset it); a
// response below 500 resets both; any response resets the local-origin
// count, and a local-origin failure adds to it. An ejection happens when a
// count reaches its threshold exactly and the cap allows it. It does not
// allocate. Unknown endpoints are ignored (false).
func (d *Outlier) Report(now time.Time, ep string, o Outcome) (OutlierEvent, bool) {
	st, ok := d.eps[ep]
	if !ok {
		return OutlierEvent{}, false
	}
	st.reqs++
	if o.success() {
		st.succ++
	}
	if o.LocalOrigin {
		st.clocal++
		if n := d.cfg.ConsecutiveLocalOriginFailures; n > 0 && st.clocal == n {
			return d.eject(now, ep, st, ReasonConsecutiveLocalOrigin)
		}
		return OutlierEvent{}, false
	}
	st.clocal = 0
	if o.Status < 500 || o.Status > 599 {
		st.c5xx, st.cgw = 0, 0
		return OutlierEvent{}, false
	}
	st.c5xx++
	if o.Status >= 502 && o.Status <= 504 {
		st.cgw++
	} else {
		st.cgw = 0
	}
	if n := d.cfg.ConsecutiveGatewayErrors; d.cfg.EnforceGatewayErrors && n > 0 && st.cgw == n {
		if ev, ok := d.eject(now, ep, st, ReasonConsecutiveGatewayErrors); ok {
			return ev, true
		}
	}
	if n := d.cfg.Consecutive5xx; n > 0 && st.c5xx == n {
		return d.eject(now, ep, st, ReasonConsecutive5xx)
	}
	return OutlierEvent{}, false
}

// ActiveCheckPassed tells the detector that ep passes its active health
// check now (its active state is served); an ejected endpoint returns at
// once. Call it when the active machine reports the endpoint served, so an
// endpoint failing active checks first needs its healthy threshold.
func (d *Outlier) ActiveCheckPassed(now time.Time, ep string) (OutlierEvent, bool) {
	st, ok := d.eps[ep]
	if !ok || !st.ejected {
		return OutlierEvent{}, false
	}
	return d.unEject(now, ep, st, ReasonActiveCheck), true
}

// Tick runs the periodic analysis at now and appends its events to dst:
// first, each ejected endpoint whose min(base × multiplier, max) has passed
// since its ejection returns (its counters reset), and each endpoint that is
// not ejected and returned at least one interval ago has its multiplier
// lowered by one; then success-rate and failure-percentage ejections over the
// requests since the last Tick; then the per-interval request counts start
// again. Call it every Interval. Events come in endpoint-name order within
// each step, so equal inputs give equal outputs.
func (d *Outlier) Tick(now time.Time, dst []OutlierEvent) []OutlierEvent {
	d.ready()
	interval := d.cfg.Interval
	for _, r := range d.rates {
		st := r.st
		if st.ejected {
			if !now.Before(st.ejectedAt.Add(d.ejectionLength(st))) {
				dst = append(dst, d.unEject(now, r.id, st, ReasonEjectionTimeElapsed))
			}
			continue
		}
		if st.mult > 0 && !st.returnedAt.IsZero() && !now.Before(st.returnedAt.Add(interval)) {
			st.mult--
		}
	}
	dst = d.successRate(now, dst)
	dst = d.failurePercentage(now, dst)
	for _, r := range d.rates {
		r.st.reqs, r.st.succ = 0, 0
	}
	return dst
}

func (d *Outlier) successRate(now time.Time, dst []OutlierEvent) []OutlierEvent {
	sr := d.cfg.SuccessRate
	if !sr.Enforce {
		return dst
	}
	var sum float64
	n := 0
	for i := range d.rates {
		st := d.rates[i].st
		if st.reqs >= sr.RequestVolume {
			d.rates[i].rate = 100 * float64(st.succ) / float64(st.reqs)
			sum += d.rates[i].rate
			n++
		} else {
			d.rates[i].rate = -1
		}
	}
	if n < sr.MinimumHosts || n == 0 {
		return dst
	}
	mean := sum / float64(n)
	var sq float64
	for _, r := range d.rates {
		if r.rate >= 0 {
			sq += (r.rate - mean) * (r.rate - mean)
		}
	}
	stdev := math.Sqrt(sq / float64(n))
	limit := mean - sr.StdevFactor*stdev
	for _, r := range d.rates {
		if r.rate >= 0 && r.rate < limit {
			if ev, ok := d.eject(now, r.id, r.st, ReasonSuccessRate); ok {
				dst = append(dst, ev)
			}
		}
	}
	return dst
}

func (d *Outlier) failurePercentage(now time.Time, dst []OutlierEvent) []OutlierEvent {
	fp := d.cfg.FailurePercentage
	if !fp.Enforce {
		return dst
	}
	n := 0
	for _, r := range d.rates {
		if r.st.reqs >= fp.RequestVolume {
			n++
		}
	}
	if n < fp.MinimumHosts {
		return dst
	}
	for _, r := range d.rates {
		st := r.st
		if st.reqs < fp.RequestVolume {
			continue
		}
		failPct := 100 - 100*float64(st.succ)/float64(st.reqs)
		if failPct >= fp.Threshold {
			if ev, ok := d.eject(now, r.id, st, ReasonFailurePercentage); ok {
				dst = append(dst, ev)
			}
		}
	}
	return dst
}
