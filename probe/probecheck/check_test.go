package probecheck

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gslbkit/gslb/probe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeEnvoyGatewayActive(t *testing.T) {
	cases := []struct {
		name  string
		json  string
		check func(*testing.T, Spec)
	}{
		{"the documented probe.HTTP block", `{"type":"HTTP","timeout":"1s","interval":"3s","unhealthyThreshold":3,"healthyThreshold":1,"http":{"path":"/"}}`,
			func(t *testing.T, c Spec) {
				assert.Equal(t, CheckHTTP, c.Type)
				assert.Equal(t, probe.Envoy(), c.Policy, "the block's values are probe.Envoy's defaults")
				require.NotNil(t, c.HTTP)
				assert.Equal(t, "/", c.HTTP.Path)
				assert.Equal(t, probe.Statuses{probe.OneStatus(200)}, c.HTTP.ExpectedStatuses)
				assert.Nil(t, c.TCP)
				assert.Nil(t, c.GRPC)
			}},
		{"block values onto the probe.Envoy preset", `{"type":"HTTP","interval":"10s","timeout":"2s","unhealthyThreshold":5,"healthyThreshold":2,"http":{"path":"/healthz"}}`,
			func(t *testing.T, c Spec) {
				p := c.Policy
				assert.Equal(t, 10*time.Second, p.Interval)
				assert.Equal(t, 2*time.Second, p.Timeout)
				assert.Equal(t, 5, p.CriticalThreshold)
				assert.Equal(t, 2, p.PassingThreshold)
				assert.Equal(t, 1, p.WarningThreshold)
				assert.Equal(t, probe.ScheduleEnvoy, p.Schedule)
				assert.Equal(t, probe.Critical, p.InitialState)
				assert.True(t, p.FirstPassImmediate)
				assert.False(t, p.FailNowAsFailure)
			}},
		{"every http field", `{"type":"HTTP","http":{"path":"/hc","hostname":"svc.local","method":"POST","expectedStatuses":[200,204],"retriableStatuses":[503],"expectedResponse":{"type":"Text","text":"ok"},"requestBody":{"type":"Text","text":"ping"}},"overrides":{"port":9090}}`,
			func(t *testing.T, c Spec) {
				h := c.HTTP
				assert.Equal(t, "/hc", h.Path)
				assert.Equal(t, "svc.local", h.Hostname)
				assert.Equal(t, http.MethodPost, h.Method)
				assert.Equal(t, probe.Statuses{probe.OneStatus(200), probe.OneStatus(204)}, h.ExpectedStatuses)
				assert.Equal(t, probe.Statuses{probe.OneStatus(503)}, h.RetriableStatuses)
				assert.Equal(t, probe.Segments{{Type: probe.PayloadText, Text: "ok"}}, h.ExpectedResponse)
				require.NotNil(t, h.RequestBody)
				assert.Equal(t, probe.Payload{Type: probe.PayloadText, Text: "ping"}, *h.RequestBody)
				assert.Equal(t, 9090, h.Port)
				assert.Equal(t, probe.HTTPDefaultMatchWindow, h.MatchWindow)
			}},
		{"tcp send and receive", `{"type":"TCP","tcp":{"send":{"type":"Text","text":"ping"},"receive":{"type":"Binary","binary":"cG9uZw=="}},"overrides":{"port":7}}`,
			func(t *testing.T, c Spec) {
				require.NotNil(t, c.TCP)
				assert.Equal(t, probe.Payload{Type: probe.PayloadText, Text: "ping"}, *c.TCP.Send)
				assert.Equal(t, probe.Segments{{Type: probe.PayloadBinary, Binary: []byte("pong")}}, c.TCP.Receive)
				assert.Equal(t, 7, c.TCP.Port)
			}},
		{"tcp connect-only", `{"type":"TCP","tcp":{}}`,
			func(t *testing.T, c Spec) {
				require.NotNil(t, c.TCP)
				assert.Nil(t, c.TCP.Send)
				assert.Empty(t, c.TCP.Receive)
			}},
		{"grpc service", `{"type":"GRPC","grpc":{"service":"helloworld.Greeter"}}`,
			func(t *testing.T, c Spec) {
				require.NotNil(t, c.GRPC)
				assert.Equal(t, "helloworld.Greeter", c.GRPC.Service)
			}},
		{"grpc without a block", `{"type":"GRPC"}`,
			func(t *testing.T, c Spec) { assert.Nil(t, c.GRPC) }},
		{"grpc port override alone", `{"type":"GRPC","overrides":{"port":50051}}`,
			func(t *testing.T, c Spec) {
				require.NotNil(t, c.GRPC)
				assert.Equal(t, 50051, c.GRPC.Port)
			}},
		{"record-service names are accepted too", `{"type":"TCP","tcp":{},"warningThreshold":2,"criticalThreshold":4,"passingThreshold":3}`,
			func(t *testing.T, c Spec) {
				assert.Equal(t, 2, c.Policy.WarningThreshold)
				assert.Equal(t, 4, c.Policy.CriticalThreshold)
				assert.Equal(t, 3, c.Policy.PassingThreshold)
			}},
		{"null blocks are absent", `{"type":"GRPC","http":null,"tcp":null,"overrides":null}`,
			func(t *testing.T, c Spec) { assert.Nil(t, c.HTTP) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeEnvoyGatewayActive([]byte(c.json))
			require.NoError(t, err)
			require.NoError(t, got.Validate())
			c.check(t, got)
		})
	}
}

func TestDecodeEnvoyGatewayActiveErrors(t *testing.T) {
	cases := []struct {
		name string
		json string
		is   error // besides ErrCheckConfig
		text string
	}{
		{"not an object", `[]`, nil, "healthCheck.active"},
		{"null", `null`, nil, "want a JSON object"},
		{"missing type", `{"http":{"path":"/"}}`, nil, "type = (missing): allowed required"},
		{"unknown type", `{"type":"UDP"}`, nil, `type = "UDP"`},
		{"lower-case type", `{"type":"http","http":{"path":"/"}}`, nil, `type = "http"`},
		{"http without its block", `{"type":"HTTP"}`, nil, "http = (missing)"},
		{"tcp without its block", `{"type":"TCP"}`, nil, "tcp = (missing)"},
		{"block of another type", `{"type":"HTTP","http":{"path":"/"},"tcp":{}}`, nil, "tcp = (set)"},
		{"missing path", `{"type":"HTTP","http":{}}`, probe.ErrHTTPConfig, "path"},
		{"unknown http field", `{"type":"HTTP","http":{"path":"/","headers":{"a":"b"}}}`, nil, "headers"},
		{"unknown top-level field", `{"type":"HTTP","http":{"path":"/"},"healthyTreshold":2}`, probe.ErrPolicyJSON, "healthyTreshold"},
		{"unknown overrides field", `{"type":"TCP","tcp":{},"overrides":{"host":"x"}}`, nil, "overrides"},
		{"both names of one knob", `{"type":"TCP","tcp":{},"unhealthyThreshold":3,"criticalThreshold":3}`, probe.ErrPolicyJSON, "same knob"},
		{"port out of range", `{"type":"TCP","tcp":{},"overrides":{"port":70000}}`, nil, "overrides.port = 70000: allowed [1, 65535]"},
		{"port zero", `{"type":"TCP","tcp":{},"overrides":{"port":0}}`, nil, "overrides.port = 0"},
		{"status out of range", `{"type":"HTTP","http":{"path":"/","expectedStatuses":[99]}}`, probe.ErrHTTPConfig, "expectedStatuses"},
		{"body with PATCH is not probe.Envoy Gateway's", `{"type":"HTTP","http":{"path":"/","method":"PATCH","requestBody":{"type":"Text","text":"x"}}}`, probe.ErrHTTPConfig, "requestBody"},
		{"zero unhealthy threshold", `{"type":"TCP","tcp":{},"unhealthyThreshold":0}`, probe.ErrInvalidPolicy, "criticalThreshold = 0"},
		{"timeout above interval", `{"type":"TCP","tcp":{},"interval":"1s","timeout":"2s"}`, probe.ErrInvalidPolicy, "timeout = 2s"},
		{"bad duration", `{"type":"TCP","tcp":{},"interval":"soon"}`, probe.ErrPolicyJSON, "soon"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeEnvoyGatewayActive([]byte(c.json))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrCheckConfig)
			switch c.name {
			case "not an object", "null", "unknown http field", "unknown top-level field",
				"unknown overrides field", "both names of one knob", "bad duration":
				// malformed JSON, not a bad value
			default:
				var fe *probe.FieldError
				assert.ErrorAs(t, err, &fe, "every bad value is a field error")
			}
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
			assert.Contains(t, err.Error(), c.text)
			assert.Equal(t, Spec{}, got)
		})
	}
}

func TestCheckValidateAndNewProber(t *testing.T) {
	h := probe.DefaultHTTPConfig()
	cases := []struct {
		name string
		c    Spec
		ok   bool
	}{
		{"http", Spec{Type: CheckHTTP, Policy: probe.Envoy(), HTTP: &h}, true},
		{"tcp connect-only", Spec{Type: CheckTCP, Policy: probe.DefaultPolicy()}, true},
		{"grpc default", Spec{Type: CheckGRPC, Policy: probe.DefaultPolicy()}, true},
		{"zero policy is the default", Spec{Type: CheckTCP}, true},
		{"bad policy", Spec{Type: CheckTCP, Policy: probe.Policy{Interval: -1}}, false},
		{"no type", Spec{Policy: probe.DefaultPolicy()}, false},
		{"http without config", Spec{Type: CheckHTTP, Policy: probe.DefaultPolicy()}, false},
		{"two blocks", Spec{Type: CheckTCP, Policy: probe.DefaultPolicy(), TCP: &probe.TCPConfig{}, HTTP: &h}, false},
		{"bad tcp", Spec{Type: CheckTCP, Policy: probe.DefaultPolicy(), TCP: &probe.TCPConfig{Port: -1}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.c.Validate()
			pr, perr := c.c.NewProber("127.0.0.1:1")
			if c.ok {
				assert.NoError(t, err)
				assert.NoError(t, perr)
				assert.NotNil(t, pr)
				return
			}
			assert.ErrorIs(t, err, ErrCheckConfig)
			assert.Error(t, perr)
			assert.Nil(t, pr)
		})
	}
}

func TestCheckJSONRoundTrip(t *testing.T) {
	c, err := DecodeEnvoyGatewayActive([]byte(`{"type":"HTTP","interval":"5s","http":{"path":"/hc","expectedStatuses":[200,"300-399"]},"overrides":{"port":8080}}`))
	require.NoError(t, err)
	b, err := json.Marshal(c)
	require.NoError(t, err)
	var back Spec
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, c, back)
}

func FuzzDecodeEnvoyGatewayActive(f *testing.F) {
	for _, s := range []string{
		`{"type":"HTTP","timeout":"1s","interval":"3s","unhealthyThreshold":3,"healthyThreshold":1,"http":{"path":"/"}}`,
		`{"type":"HTTP","http":{"path":"/hc","method":"POST","expectedStatuses":[200,"201-204"],"retriableStatuses":[503],"expectedResponse":[{"type":"Text","text":"o"},{"type":"Hex","hex":"6b"}],"requestBody":{"type":"Text","text":"x"}},"overrides":{"port":9090}}`,
		`{"type":"TCP","tcp":{"send":{"type":"Text","text":"ping"},"receive":{"type":"Binary","binary":"cG9uZw=="}}}`,
		`{"type":"GRPC","grpc":{"service":"a.B"},"warningThreshold":1,"criticalThreshold":2}`,
		`{"type":"TCP","tcp":{},"interval":0.001,"timeout":0.001,"intervalJitterPercent":100}`,
		`{}`, `null`, `{"type":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeEnvoyGatewayActive(data)
		if err != nil {
			return
		}
		if verr := c.Validate(); verr != nil {
			t.Fatalf("accepted a check that does not validate: %v", verr)
		}
		if c.HTTP != nil {
			if verr := c.HTTP.ValidateEnvoyGateway(); verr != nil {
				t.Fatalf("accepted an http block probe.Envoy Gateway refuses: %v", verr)
			}
		}
		if _, err := probe.NewMachine(c.Policy); err != nil {
			t.Fatalf("accepted a policy NewMachine refuses: %v", err)
		}
	})
}
