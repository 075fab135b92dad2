package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gslbkit/gslb/internal/jsontime"
)

// ErrPolicyJSON is wrapped by errors that DecodePolicy and
// Policy.UnmarshalJSON return for JSON that is malformed, has unknown
// fields or names one knob twice (a bad value is an ErrInvalidPolicy from
// Validate instead).
var ErrPolicyJSON = errors.New("probe: policy JSON")

// machAliases lists the knobs that have two JSON names: the record
// service's and Envoy Gateway's.
var machAliases = [...]struct{ name, alias string }{
	{"criticalThreshold", "unhealthyThreshold"},
	{"passingThreshold", "healthyThreshold"},
}

// machPolicyFields is Policy without its methods, so the codec below can
// fill it with the standard rules.
type machPolicyFields Policy

// machPolicyWire is the JSON shape of a Policy: every field, the durations
// as Go duration strings, plus Envoy Gateway's names for the two aliased
// knobs. The outer fields shadow the embedded ones of the same JSON name,
// so the pointers tell which spelling was given.
type machPolicyWire struct {
	*machPolicyFields
	Interval              jsontime.Duration `json:"interval"`
	Timeout               jsontime.Duration `json:"timeout"`
	CriticalThreshold     *int              `json:"criticalThreshold"`
	UnhealthyThreshold    *int              `json:"unhealthyThreshold,omitempty"`
	PassingThreshold      *int              `json:"passingThreshold"`
	HealthyThreshold      *int              `json:"healthyThreshold,omitempty"`
	MaxBackoff            jsontime.Duration `json:"maxBackoff,omitempty"`
	UnhealthyInterval     jsontime.Duration `json:"unhealthyInterval,omitempty"`
	UnhealthyEdgeInterval jsontime.Duration `json:"unhealthyEdgeInterval,omitempty"`
	HealthyEdgeInterval   jsontime.Duration `json:"healthyEdgeInterval,omitempty"`
	InitialJitter         jsontime.Duration `json:"initialJitter,omitempty"`
	IntervalJitter        jsontime.Duration `json:"intervalJitter,omitempty"`
}

// machWire returns the wire form of *q, backed by q.
func machWire(q *Policy) machPolicyWire {
	return machPolicyWire{
		machPolicyFields:      (*machPolicyFields)(q),
		Interval:              jsontime.Duration(q.Interval),
		Timeout:               jsontime.Duration(q.Timeout),
		MaxBackoff:            jsontime.Duration(q.MaxBackoff),
		UnhealthyInterval:     jsontime.Duration(q.UnhealthyInterval),
		UnhealthyEdgeInterval: jsontime.Duration(q.UnhealthyEdgeInterval),
		HealthyEdgeInterval:   jsontime.Duration(q.HealthyEdgeInterval),
		InitialJitter:         jsontime.Duration(q.InitialJitter),
		IntervalJitter:        jsontime.Duration(q.IntervalJitter),
	}
}

// MarshalJSON writes every field under its camelCase name, durations as Go
// duration strings ("10s").
func (p Policy) MarshalJSON() ([]byte, error) {
	q := p
	w := machWire(&q)
	w.CriticalThreshold, w.PassingThreshold = &q.CriticalThreshold, &q.PassingThreshold
	return json.Marshal(w)
}

// UnmarshalJSON decodes a policy object onto p: fields present in data
// replace p's, absent ones keep their value (so decoding onto a preset
// overrides only what the config says). Durations are Go duration strings
// ("3s", "250ms") or numbers of seconds. criticalThreshold may be spelled
// unhealthyThreshold and passingThreshold healthyThreshold; giving both
// spellings of one knob, an unknown field, or trailing data is an error
// wrapping ErrPolicyJSON. On error p is unchanged. It does not validate;
// DecodePolicy does.
func (p *Policy) UnmarshalJSON(data []byte) error {
	q := *p
	w := machWire(&q)
	if err := machDecodeStrict(data, &w); err != nil {
		return fmt.Errorf("%w: %w", ErrPolicyJSON, err)
	}
	q.Interval, q.Timeout, q.MaxBackoff = w.Interval.D(), w.Timeout.D(), w.MaxBackoff.D()
	q.UnhealthyInterval, q.UnhealthyEdgeInterval = w.UnhealthyInterval.D(), w.UnhealthyEdgeInterval.D()
	q.HealthyEdgeInterval = w.HealthyEdgeInterval.D()
	q.InitialJitter, q.IntervalJitter = w.InitialJitter.D(), w.IntervalJitter.D()
	pairs := [...]struct{ a, b *int }{
		{w.CriticalThreshold, w.UnhealthyThreshold},
		{w.PassingThreshold, w.HealthyThreshold},
	}
	dst := [...]*int{&q.CriticalThreshold, &q.PassingThreshold}
	for i, pr := range pairs {
		switch {
		case pr.a != nil && pr.b != nil:
			return fmt.Errorf("%w: both %s (%d) and %s (%d) given: they name the same knob, give one",
				ErrPolicyJSON, machAliases[i].name, *pr.a, machAliases[i].alias, *pr.b)
		case pr.a != nil:
			*dst[i] = *pr.a
		case pr.b != nil:
			*dst[i] = *pr.b
		}
	}
	*p = q
	return nil
}

// machDecodeStrict decodes one JSON value from data into v, refusing
// unknown fields and trailing data.
func machDecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the object")
	}
	return nil
}

// DecodePolicy decodes a policy object onto DefaultPolicy() and validates
// the result. Use it for record-service style configs; call
// ValidateRecordService on the result where that style's ranges apply.
func DecodePolicy(data []byte) (Policy, error) {
	return DecodePolicyOnto(DefaultPolicy(), data)
}

// DecodePolicyOnto decodes a policy object onto base (a preset, say
// Envoy()) and validates the result. base is not modified.
func DecodePolicyOnto(base Policy, data []byte) (Policy, error) {
	p := base
	if err := p.UnmarshalJSON(data); err != nil {
		return Policy{}, err
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}
