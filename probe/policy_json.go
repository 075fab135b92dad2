package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// machPolicyFields is Policy without its methods, so the decoder below can
// fill it with the standard rules.
type machPolicyFields Policy

// machPolicyWire is the JSON shape of a Policy: every field, plus Envoy
// Gateway's names for the two aliased knobs. The pointer fields shadow the
// embedded ones so the decoder can tell which spelling was given.
type machPolicyWire struct {
	*machPolicyFields
	CriticalThreshold  *int `json:"criticalThreshold"`
	UnhealthyThreshold *int `json:"unhealthyThreshold"`
	PassingThreshold   *int `json:"passingThreshold"`
	HealthyThreshold   *int `json:"healthyThreshold"`
}

// UnmarshalJSON decodes a policy object onto p: fields present in data
// replace p's, absent ones keep their value (so decoding onto a preset
// overrides only what the config says). criticalThreshold may be spelled
// unhealthyThreshold and passingThreshold healthyThreshold; giving both
// spellings of one knob, an unknown field, or trailing data is an error
// wrapping ErrPolicyJSON. On error p is unchanged. It does not validate;
// DecodePolicy does.
func (p *Policy) UnmarshalJSON(data []byte) error {
	q := *p
	w := machPolicyWire{machPolicyFields: (*machPolicyFields)(&q)}
	if err := machDecodeStrict(data, &w); err != nil {
		return fmt.Errorf("%w: %w", ErrPolicyJSON, err)
	}
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
