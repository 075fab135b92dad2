package health

import (
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"math"
)

// PanicMode names a rule for choosing the endpoints to use when too few are
// healthy.
type PanicMode uint8

const (
	// PanicEnvoy is Envoy's panic threshold: when fewer than Threshold
	// percent of the endpoints are healthy (strictly less; the percentage is
	// truncated to a whole number; 0 endpoints count as 0 %), every endpoint
	// is used. Threshold 0 disables panic: only healthy endpoints are used,
	// and none healthy is ErrNoHealthyUpstream. Default threshold 50.
	PanicEnvoy PanicMode = iota
	// PanicGdnsd is gdnsd's pool rule: the pool is up while the healthy
	// endpoints number at least ceil(Threshold × total), Threshold being a
	// fraction in [0, 1] (default 0.5); below that, every endpoint is used.
	PanicGdnsd
	// PanicAllUnhealthy is Route 53's rule: healthy endpoints are used;
	// when none is healthy, every endpoint is used (fail open).
	PanicAllUnhealthy
	// PanicFailClosed never panics: only healthy endpoints are used, and
	// none healthy is ErrNoHealthyUpstream.
	PanicFailClosed
)

// String returns "envoy", "gdnsd", "allUnhealthy" or "failClosed".
func (m PanicMode) String() string {
	switch m {
	case PanicEnvoy:
		return "envoy"
	case PanicGdnsd:
		return "gdnsd"
	case PanicAllUnhealthy:
		return "allUnhealthy"
	case PanicFailClosed:
		return "failClosed"
	}
	return fmt.Sprintf("PanicMode(%d)", uint8(m))
}

// Panic configures panic selection. The zero value is Envoy's rule with
// threshold 0 (panic disabled); use EnvoyPanic, GdnsdPanic, Route53Panic or
// FailClosed for the named rules with their defaults.
type Panic struct {
	// Mode is the rule.
	Mode PanicMode `json:"mode"`
	// Threshold is, for PanicEnvoy, a percentage 0–100 (truncated to a whole
	// percent; 0 disables panic) and, for PanicGdnsd, a fraction 0–1.
	// Other modes ignore it.
	Threshold float64 `json:"threshold"`
}

// EnvoyPanic returns Envoy's rule with its default threshold, 50 %.
func EnvoyPanic() Panic { return Panic{Mode: PanicEnvoy, Threshold: 50} }

// GdnsdPanic returns gdnsd's rule with its default up_thresh, 0.5.
func GdnsdPanic() Panic { return Panic{Mode: PanicGdnsd, Threshold: 0.5} }

// Route53Panic returns Route 53's rule: all unhealthy means all are used.
func Route53Panic() Panic { return Panic{Mode: PanicAllUnhealthy} }

// FailClosed returns the rule that only ever uses healthy endpoints.
func FailClosed() Panic { return Panic{Mode: PanicFailClosed} }

// Validate reports a threshold outside its mode's range or an unknown mode.
func (p Panic) Validate() error {
	switch p.Mode {
	case PanicEnvoy:
		if !(p.Threshold >= 0 && p.Threshold <= 100) {
			return fieldErr("threshold", p.Threshold, fielderr.Range(0, 100)+" (percent) for mode envoy")
		}
	case PanicGdnsd:
		if !(p.Threshold >= 0 && p.Threshold <= 1) {
			return fieldErr("threshold", p.Threshold, fielderr.Range(0, 1)+" (fraction) for mode gdnsd")
		}
	case PanicAllUnhealthy, PanicFailClosed:
	default:
		return fieldErr("mode", uint8(p.Mode), fielderr.OneOf("envoy", "gdnsd", "allUnhealthy", "failClosed"))
	}
	if p.Threshold != 0 && (p.Mode == PanicAllUnhealthy || p.Mode == PanicFailClosed) && !(p.Threshold >= 0 && p.Threshold <= 100) {
		return fieldErr("threshold", p.Threshold, fielderr.Range(0, 100)+" (unused by mode "+p.Mode.String()+")")
	}
	return nil
}

// ErrNoHealthyUpstream is matched (errors.Is) by the error Select returns
// when the selection would be empty.
var ErrNoHealthyUpstream = errors.New("health: no healthy upstream")

// NoHealthyUpstreamError says that no endpoint can be used, and how many
// there were.
type NoHealthyUpstreamError struct {
	// Total is the number of endpoints offered.
	Total int
	// Mode is the rule that decided.
	Mode PanicMode
}

// Error describes the failure.
func (e *NoHealthyUpstreamError) Error() string {
	return fmt.Sprintf("health: no healthy upstream (0 of %d endpoints healthy, panic mode %s)", e.Total, e.Mode)
}

// Unwrap returns ErrNoHealthyUpstream.
func (e *NoHealthyUpstreamError) Unwrap() error { return ErrNoHealthyUpstream }

// Selection is the outcome of panic selection.
type Selection[E any] struct {
	// Use are the endpoints to use, in the order given.
	Use []E
	// Panic is true when unhealthy endpoints are used because too few are
	// healthy.
	Panic bool
	// Healthy and Total count the endpoints offered.
	Healthy, Total int
}

// Select chooses the endpoints to use among eps by p's rule, healthy
// telling which are healthy. It is pure and allocates only the result. An
// empty selection is returned with a *NoHealthyUpstreamError; a p that
// Validate refuses, with its *FieldError (and nothing selected).
func Select[E any](p Panic, eps []E, healthy func(E) bool) (Selection[E], error) {
	if err := p.Validate(); err != nil {
		return Selection[E]{Total: len(eps)}, err
	}
	n := 0
	for _, e := range eps {
		if healthy(e) {
			n++
		}
	}
	s := Selection[E]{Healthy: n, Total: len(eps)}
	if p.inPanic(n, len(eps)) {
		s.Panic = true
		s.Use = append([]E(nil), eps...)
	} else {
		s.Use = make([]E, 0, n)
		for _, e := range eps {
			if healthy(e) {
				s.Use = append(s.Use, e)
			}
		}
	}
	if len(s.Use) == 0 {
		return s, &NoHealthyUpstreamError{Total: len(eps), Mode: p.Mode}
	}
	return s, nil
}

// InPanic reports whether healthy of total endpoints put the set in panic
// under p: every endpoint is then used.
func (p Panic) InPanic(healthy, total int) bool { return p.inPanic(healthy, total) }

func (p Panic) inPanic(healthy, total int) bool {
	switch p.Mode {
	case PanicEnvoy:
		t := math.Trunc(p.Threshold)
		if t <= 0 {
			return false
		}
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(healthy) / float64(total)
		}
		return pct < t
	case PanicGdnsd:
		need := int(math.Ceil(p.Threshold * float64(total)))
		return healthy < need
	case PanicAllUnhealthy:
		return healthy == 0
	}
	return false
}
