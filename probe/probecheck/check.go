package probecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"io"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/grpcprobe"
)

// CheckType selects the prober of a Spec, in Envoy Gateway's words.
type CheckType string

const (
	// CheckHTTP probes with HTTP (HTTPS when probe.HTTPConfig.TLS is set).
	CheckHTTP CheckType = "HTTP"
	// CheckTCP probes with a TCP connect, optionally sending and receiving.
	CheckTCP CheckType = "TCP"
	// CheckGRPC probes with grpc.health.v1.Health/Check.
	CheckGRPC CheckType = "GRPC"
)

// ErrCheckConfig is wrapped by every error Spec.Validate and
// DecodeEnvoyGatewayActive return for a bad check (bad policy values wrap
// probe.ErrInvalidPolicy as well, bad policy JSON probe.ErrPolicyJSON).
var ErrCheckConfig = errors.New("probecheck: invalid check config")

// Spec is one complete health check: the prober and its config, and the
// Policy that turns its results into states. Exactly the config block of
// Type may be set: HTTP for CheckHTTP (required), TCP for CheckTCP (nil
// means connect-only), GRPC for CheckGRPC. A Spec is a plain value;
// Validate reports the first bad field.
//
// A Spec describes a check to build; health.Check is the interface a
// built signal satisfies inside a health.Gate.
type Spec struct {
	// Type selects the prober.
	Type CheckType `json:"type"`
	// Policy holds the thresholds and the schedule.
	Policy probe.Policy `json:"policy"`
	// HTTP configures the HTTP prober when Type is CheckHTTP.
	HTTP *probe.HTTPConfig `json:"http,omitempty"`
	// TCP configures the TCP prober when Type is CheckTCP.
	TCP *probe.TCPConfig `json:"tcp,omitempty"`
	// GRPC configures the gRPC health prober when Type is CheckGRPC.
	GRPC *grpcprobe.Config `json:"grpc,omitempty"`
}

// Validate checks the type, that only the type's config block is set,
// that block's own Validate, and the Policy. Errors wrap ErrCheckConfig and
// name the field.
func (c Spec) Validate() error {
	if err := c.validateShape(); err != nil {
		return err
	}
	switch c.Type {
	case CheckHTTP:
		if err := c.HTTP.Validate(); err != nil {
			return nested("http", err)
		}
	case CheckTCP:
		if c.TCP != nil {
			if err := c.TCP.Validate(); err != nil {
				return nested("tcp", err)
			}
		}
	case CheckGRPC:
		if c.GRPC != nil {
			if err := c.GRPC.Validate(); err != nil {
				return nested("grpc", err)
			}
		}
	}
	if err := c.Policy.Validate(); err != nil {
		return nested("policy", err)
	}
	return nil
}

// validateShape checks the type and which blocks are set.
func (c Spec) validateShape() error {
	blocks := []struct {
		name string
		t    CheckType
		set  bool
	}{{"http", CheckHTTP, c.HTTP != nil}, {"tcp", CheckTCP, c.TCP != nil}, {"grpc", CheckGRPC, c.GRPC != nil}}
	if machBlock(c.Type) == "none" {
		return bad("type", fmt.Sprintf("%q", c.Type), fmt.Sprintf("%q, %q or %q", CheckHTTP, CheckTCP, CheckGRPC))
	}
	for _, b := range blocks {
		if b.t != c.Type && b.set {
			return bad(b.name, "(set)", fmt.Sprintf("only the %q block, with type %q", machBlock(c.Type), c.Type))
		}
	}
	if c.Type == CheckHTTP && c.HTTP == nil {
		return bad("http", "(missing)", fmt.Sprintf("an http block with type %q", c.Type))
	}
	return nil
}

// bad is a *probe.FieldError of a Spec, wrapping ErrCheckConfig.
func bad(field, value, allowed string) error {
	return &probe.FieldError{Path: field, Value: value, Allowed: allowed, Err: ErrCheckConfig}
}

// nested puts the block's name in front of the field path of a
// *probe.FieldError from the block's Validate, under this package's prefix;
// the result wraps both ErrCheckConfig and the block's own sentinel.
func nested(block string, err error) error {
	var fe *probe.FieldError
	if errors.As(err, &fe) {
		return fielderr.In(block, fielderr.Both(ErrCheckConfig, fe.Err), err)
	}
	return fmt.Errorf("%w: %w", ErrCheckConfig, err)
}

func machBlock(t CheckType) string {
	switch t {
	case CheckHTTP:
		return "http"
	case CheckTCP:
		return "tcp"
	case CheckGRPC:
		return "grpc"
	}
	return "none"
}

// NewProber validates c and builds its prober for the target at addr
// ("host:port" or an IP; see probe.NewHTTP, probe.NewTCP and grpcprobe.New for defaults).
func (c Spec) NewProber(addr string) (probe.Prober, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch c.Type {
	case CheckHTTP:
		return probe.NewHTTP(addr, *c.HTTP)
	case CheckTCP:
		cfg := probe.DefaultTCPConfig()
		if c.TCP != nil {
			cfg = *c.TCP
		}
		return probe.NewTCP(addr, cfg)
	default:
		cfg := grpcprobe.DefaultConfig()
		if c.GRPC != nil {
			cfg = *c.GRPC
		}
		return grpcprobe.New(addr, cfg)
	}
}

// machEGActive is the prober part of an Envoy Gateway healthCheck.active
// block; everything else in the block is probe.Policy.
type machEGActive struct {
	Type      *CheckType      `json:"type"`
	HTTP      json.RawMessage `json:"http"`
	TCP       json.RawMessage `json:"tcp"`
	GRPC      json.RawMessage `json:"grpc"`
	Overrides json.RawMessage `json:"overrides"`
}

// machEGHTTP is Envoy Gateway's http block: only its field names are
// accepted.
type machEGHTTP struct {
	Path              *string         `json:"path"`
	Hostname          *string         `json:"hostname"`
	Method            *string         `json:"method"`
	ExpectedStatuses  *probe.Statuses `json:"expectedStatuses"`
	RetriableStatuses *probe.Statuses `json:"retriableStatuses"`
	ExpectedResponse  *probe.Segments `json:"expectedResponse"`
	RequestBody       *probe.Payload  `json:"requestBody"`
}

type machEGTCP struct {
	Send    *probe.Payload  `json:"send"`
	Receive *probe.Segments `json:"receive"`
}

type machEGGRPC struct {
	Service *string `json:"service"`
}

type machEGOverrides struct {
	Port *int `json:"port"`
}

// machNull reports whether raw is absent or JSON null.
func machNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
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

// machStrict decodes a sub-block strictly, naming it in errors.
func machStrict(block string, raw json.RawMessage, v any) error {
	if err := machDecodeStrict(raw, v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCheckConfig, block, err)
	}
	return nil
}

// DecodeEnvoyGatewayActive decodes an Envoy Gateway healthCheck.active
// block (JSON; convert YAML first) into a Spec on the probe.Envoy preset:
// warningThreshold 1, the Envoy schedule, start unhealthy, first pass
// immediate, with the block's interval, timeout, unhealthyThreshold and
// healthyThreshold. Its prober part follows Envoy Gateway: type (HTTP, TCP
// or GRPC, required), http.path (required for HTTP), http.hostname,
// http.method, http.expectedStatuses, http.retriableStatuses,
// http.expectedResponse, http.requestBody (POST or PUT only), tcp.send,
// tcp.receive (the tcp block is required for TCP), grpc.service and
// overrides.port (1–65535, applied to the type's prober). Every other
// Policy field may be given too, in either vocabulary (criticalThreshold
// or unhealthyThreshold, passingThreshold or healthyThreshold, never both).
//
// Unknown fields, a block that does not match the type, and out-of-range
// values are errors wrapping ErrCheckConfig that name the field. The
// result has passed Validate.
func DecodeEnvoyGatewayActive(data []byte) (Spec, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		if err == nil {
			err = errors.New("want a JSON object")
		}
		return Spec{}, fmt.Errorf("%w: healthCheck.active: %w", ErrCheckConfig, err)
	}
	var eg machEGActive
	if err := json.Unmarshal(data, &eg); err != nil {
		return Spec{}, fmt.Errorf("%w: healthCheck.active: %w", ErrCheckConfig, err)
	}
	for _, k := range [...]string{"type", "http", "tcp", "grpc", "overrides"} {
		delete(fields, k)
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: healthCheck.active: %w", ErrCheckConfig, err)
	}
	c := Spec{Policy: probe.Envoy()}
	if err := c.Policy.UnmarshalJSON(rest); err != nil {
		return Spec{}, fmt.Errorf("%w: %w", ErrCheckConfig, err)
	}
	// Envoy Gateway's thresholds are at least 1; here a 0 was given (the
	// preset's are not 0), which a Policy would read as "the default".
	for _, f := range []struct {
		name string
		v    int
	}{{"criticalThreshold", c.Policy.CriticalThreshold}, {"passingThreshold", c.Policy.PassingThreshold}} {
		if f.v == 0 {
			return Spec{}, nested("policy", &probe.FieldError{Path: f.name, Value: "0", Allowed: "[1, 65535] (Envoy Gateway's range)", Err: probe.ErrInvalidPolicy})
		}
	}
	if eg.Type == nil {
		return Spec{}, bad("type", "(missing)", fmt.Sprintf("required: %q, %q or %q", CheckHTTP, CheckTCP, CheckGRPC))
	}
	c.Type = *eg.Type
	port, err := machEGPort(eg.Overrides)
	if err != nil {
		return Spec{}, err
	}
	if err := c.decodeEGBlocks(eg, port); err != nil {
		return Spec{}, err
	}
	if err := c.validateShape(); err != nil {
		return Spec{}, err
	}
	if c.Type == CheckTCP && c.TCP == nil {
		return Spec{}, bad("tcp", "(missing)", fmt.Sprintf("a tcp block with type %q (Envoy Gateway requires it)", c.Type))
	}
	if c.HTTP != nil {
		if err := c.HTTP.ValidateEnvoyGateway(); err != nil {
			return Spec{}, nested("http", err)
		}
	}
	if err := c.Validate(); err != nil {
		return Spec{}, err
	}
	return c, nil
}

func machEGPort(raw json.RawMessage) (int, error) {
	if machNull(raw) {
		return 0, nil
	}
	var o machEGOverrides
	if err := machStrict("overrides", raw, &o); err != nil {
		return 0, err
	}
	if o.Port == nil {
		return 0, nil
	}
	if *o.Port < 1 || *o.Port > 65535 {
		return 0, bad("overrides.port", fmt.Sprint(*o.Port), "[1, 65535]")
	}
	return *o.Port, nil
}

// decodeEGBlocks fills c's prober blocks from eg; port (0 = none) is
// overrides.port.
func (c *Spec) decodeEGBlocks(eg machEGActive, port int) error {
	if !machNull(eg.HTTP) {
		var h machEGHTTP
		if err := machStrict("http", eg.HTTP, &h); err != nil {
			return err
		}
		if h.Path == nil {
			return nested("http", &probe.FieldError{Path: "path", Value: `""`, Allowed: "required by Envoy Gateway: a path of [1, 1024] characters", Err: probe.ErrHTTPConfig})
		}
		cfg := probe.DefaultHTTPConfig()
		cfg.Path = ""
		machSet(&cfg.Path, h.Path)
		machSet(&cfg.Hostname, h.Hostname)
		machSet(&cfg.Method, h.Method)
		machSet(&cfg.ExpectedStatuses, h.ExpectedStatuses)
		machSet(&cfg.RetriableStatuses, h.RetriableStatuses)
		machSet(&cfg.ExpectedResponse, h.ExpectedResponse)
		cfg.RequestBody = h.RequestBody
		cfg.Port = port
		c.HTTP = &cfg
	}
	if !machNull(eg.TCP) {
		var t machEGTCP
		if err := machStrict("tcp", eg.TCP, &t); err != nil {
			return err
		}
		cfg := probe.DefaultTCPConfig()
		cfg.Send = t.Send
		machSet(&cfg.Receive, t.Receive)
		cfg.Port = port
		c.TCP = &cfg
	}
	if !machNull(eg.GRPC) || (c.Type == CheckGRPC && port != 0) {
		var g machEGGRPC
		if !machNull(eg.GRPC) {
			if err := machStrict("grpc", eg.GRPC, &g); err != nil {
				return err
			}
		}
		cfg := grpcprobe.DefaultConfig()
		machSet(&cfg.Service, g.Service)
		cfg.Port = port
		c.GRPC = &cfg
	}
	return nil
}

func machSet[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}
