package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/grpcprobe"
	"github.com/gslbkit/gslb/probe/probecheck"
)

// ProbeSpec is a health check in the probe package's vocabulary:
//
//	type: HTTP | TCP | GRPC
//	policy: {interval, timeout, warningThreshold, criticalThreshold, passingThreshold, ...}
//	http:   {path, method, hostname, expectedStatuses, port, ...}   (probe.HTTPConfig)
//	tcp:    {send, receive, port}                                   (probe.TCPConfig)
//	grpc:   {service, authority, port}                              (grpcprobe.Config)
//
// Decoding is onto the current value: fields present replace, absent ones
// stay, so a record's probe block overrides only what it names.
type ProbeSpec struct {
	probecheck.Spec
}

// DefaultProbe returns an HTTP GET / expecting 200 under the record
// service's policy.
func DefaultProbe() ProbeSpec {
	h := probe.DefaultHTTPConfig()
	return ProbeSpec{probecheck.Spec{Type: probecheck.CheckHTTP, Policy: probe.RecordService(), HTTP: &h}}
}

// UnmarshalJSON decodes a probe block onto s; unknown fields are errors.
func (s *ProbeSpec) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	out := s.clone()
	for k, v := range raw {
		switch k {
		case "type":
			var t string
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("probe.type: %w", err)
			}
			out.Type = probecheck.CheckType(strings.ToUpper(t))
		case "policy":
			if err := explicitZeros(v); err != nil {
				return fmt.Errorf("probe.policy.%w", err)
			}
			if err := out.Policy.UnmarshalJSON(v); err != nil {
				return fmt.Errorf("probe.policy: %w", err)
			}
		case "http":
			h := probe.DefaultHTTPConfig()
			if out.HTTP != nil {
				h = *out.HTTP
			}
			if err := decodeStrict(v, &h); err != nil {
				return fmt.Errorf("probe.http: %w", err)
			}
			out.HTTP = &h
		case "tcp":
			t := probe.DefaultTCPConfig()
			if out.TCP != nil {
				t = *out.TCP
			}
			if err := decodeStrict(v, &t); err != nil {
				return fmt.Errorf("probe.tcp: %w", err)
			}
			out.TCP = &t
		case "grpc":
			g := grpcprobe.DefaultConfig()
			if out.GRPC != nil {
				g = *out.GRPC
			}
			if err := decodeStrict(v, &g); err != nil {
				return fmt.Errorf("probe.grpc: %w", err)
			}
			out.GRPC = &g
		default:
			return fmt.Errorf("probe: unknown field %q (allowed type, policy, http, tcp, grpc)", k)
		}
	}
	*s = out
	return nil
}

// MarshalJSON writes the check.
func (s ProbeSpec) MarshalJSON() ([]byte, error) { return json.Marshal(s.Spec) }

// clone copies s deeply enough that decoding onto the copy leaves s alone.
func (s ProbeSpec) clone() ProbeSpec {
	c := s
	if s.HTTP != nil {
		h := *s.HTTP
		c.HTTP = &h
	}
	if s.TCP != nil {
		t := *s.TCP
		c.TCP = &t
	}
	if s.GRPC != nil {
		g := *s.GRPC
		c.GRPC = &g
	}
	return c
}

// resolved returns the check with only its type's block kept (a block for
// another type, inherited from the default, is dropped).
func (s ProbeSpec) resolved() probecheck.Spec {
	c := s.clone().Spec
	switch c.Type {
	case probecheck.CheckHTTP:
		c.TCP, c.GRPC = nil, nil
		if c.HTTP == nil {
			h := probe.DefaultHTTPConfig()
			c.HTTP = &h
		}
	case probecheck.CheckTCP:
		c.HTTP, c.GRPC = nil, nil
	case probecheck.CheckGRPC:
		c.HTTP, c.TCP = nil, nil
	}
	return c
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// zerolessPolicyFields are the probe.Policy fields whose zero has no
// meaning of its own: the probe package reads a zero as "the default", so
// a zero written in the config would be silently replaced. gslbd refuses
// it instead (leave the field out for the default).
var zerolessPolicyFields = []string{"interval", "timeout", "warningThreshold", "criticalThreshold", "unhealthyThreshold",
	"passingThreshold", "healthyThreshold", "warningExitThreshold", "failureResetThreshold", "initialState", "schedule"}

// explicitZeros refuses a zero written for a zeroless policy field.
func explicitZeros(data []byte) error {
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return nil // the policy's own decoder reports it
	}
	for _, k := range zerolessPolicyFields {
		v, ok := raw[k]
		if !ok || !isZeroJSON(v) {
			continue
		}
		return fmt.Errorf("%s: %s: allowed a non-zero value (leave it out for the default)", k, strings.TrimSpace(string(v)))
	}
	return nil
}

// isZeroJSON reports whether v is 0, "", or a duration string of zero.
func isZeroJSON(v json.RawMessage) bool {
	var n float64
	if json.Unmarshal(v, &n) == nil {
		return n == 0
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return false
	}
	if s == "" {
		return true
	}
	d, err := time.ParseDuration(s)
	return err == nil && d == 0
}
