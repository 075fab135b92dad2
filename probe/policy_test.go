package probe

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPolicyValidate(t *testing.T) {
	s := time.Second
	envoy := func(mod func(*Policy)) Policy { p := Envoy(); mod(&p); return p }
	cases := []struct {
		name   string
		p      Policy
		field  string // "" = valid
		range_ string
	}{
		{"default is valid", DefaultPolicy(), "", ""},
		{"zero policy is the default", Policy{}, "", ""},
		{"interval negative", machPolicy(func(p *Policy) { p.Interval = -1 }), "interval", "[1ms, 24h]"},
		{"interval below 1ms", machPolicy(func(p *Policy) { p.Interval = time.Microsecond }), "interval", "[1ms, 24h]"},
		{"interval above 24h", machPolicy(func(p *Policy) { p.Interval = 25 * time.Hour }), "interval", "[1ms, 24h]"},
		{"timeout zero takes the default", machPolicy(func(p *Policy) { p.Timeout = 0 }), "", ""},
		{"timeout negative", machPolicy(func(p *Policy) { p.Timeout = -1 }), "timeout", "[1ns, interval (10s)]"},
		{"timeout above interval", machPolicy(func(p *Policy) { p.Timeout = 11 * s }), "timeout", "[1ns, interval (10s)]"},
		{"timeout equal to interval", machPolicy(func(p *Policy) { p.Timeout = 10 * s }), "", ""},
		{"critical zero takes the default", machPolicy(func(p *Policy) { p.CriticalThreshold = 0 }), "", ""},
		{"critical negative", machPolicy(func(p *Policy) { p.CriticalThreshold = -1 }), "criticalThreshold", "[1, 65535]"},
		{"critical too large", machPolicy(func(p *Policy) { p.CriticalThreshold = MaxThreshold + 1 }), "criticalThreshold", "[1, 65535]"},
		{"warning negative", machPolicy(func(p *Policy) { p.WarningThreshold = -1 }), "warningThreshold", "[1, criticalThreshold (3)]"},
		{"warning above a defaulted critical", machPolicy(func(p *Policy) { p.WarningThreshold, p.CriticalThreshold = 5, 0 }), "warningThreshold", "[1, criticalThreshold (3)]"},
		{"warning above critical", machPolicy(func(p *Policy) { p.WarningThreshold = 4 }), "warningThreshold", "[1, criticalThreshold (3)]"},
		{"passing negative", machPolicy(func(p *Policy) { p.PassingThreshold = -2 }), "passingThreshold", "[1, 65535]"},
		{"warning exit negative", machPolicy(func(p *Policy) { p.WarningExitThreshold = -1 }), "warningExitThreshold", "[1, 65535]"},
		{"failure reset too large", machPolicy(func(p *Policy) { p.FailureResetThreshold = MaxThreshold + 1 }), "failureResetThreshold", "[1, 65535]"},
		{"initial warning", machPolicy(func(p *Policy) { p.InitialState = Warning }), "initialState", `one of "passing", "critical"`},
		{"initial unknown takes the default", machPolicy(func(p *Policy) { p.InitialState = Unknown }), "", ""},
		{"initial out of range", machPolicy(func(p *Policy) { p.InitialState = 9 }), "initialState", `one of "passing", "critical"`},
		{"unknown schedule", machPolicy(func(p *Policy) { p.Schedule = 7 }), "schedule", `one of "record-service", "envoy"`},
		{"back-off below interval", machPolicy(func(p *Policy) { p.MaxBackoff = 9 * s }), "maxBackoff", "[10s, 24h]"},
		{"back-off zero for record service takes the default", machPolicy(func(p *Policy) { p.MaxBackoff = 0 }), "", ""},
		{"back-off negative for record service", machPolicy(func(p *Policy) { p.MaxBackoff = -1 }), "maxBackoff", "[10s, 24h]"},
		{"back-off zero for envoy", envoy(func(p *Policy) { p.MaxBackoff = 0 }), "", ""},
		{"back-off negative for envoy", envoy(func(p *Policy) { p.MaxBackoff = -1 }), "maxBackoff", "[0s, 24h] (unused by the envoy schedule)"},
		{"unhealthy interval below 1ms", envoy(func(p *Policy) { p.UnhealthyInterval = 1 }), "unhealthyInterval", "[1ms, 24h], or 0 for the default"},
		{"unhealthy edge negative", envoy(func(p *Policy) { p.UnhealthyEdgeInterval = -1 }), "unhealthyEdgeInterval", "[1ms, 24h], or 0 for the default"},
		{"healthy edge too long", envoy(func(p *Policy) { p.HealthyEdgeInterval = 25 * time.Hour }), "healthyEdgeInterval", "[1ms, 24h], or 0 for the default"},
		{"initial jitter negative", machPolicy(func(p *Policy) { p.InitialJitter = -1 }), "initialJitter", "[0s, 24h]"},
		{"interval jitter negative", machPolicy(func(p *Policy) { p.IntervalJitter = -1 }), "intervalJitter", "[0s, 24h]"},
		{"jitter percent above 100", machPolicy(func(p *Policy) { p.IntervalJitterPercent = 100.5 }), "intervalJitterPercent", "[0, 100]"},
		{"jitter percent negative", machPolicy(func(p *Policy) { p.IntervalJitterPercent = -1 }), "intervalJitterPercent", "[0, 100]"},
		{"jitter percent NaN", machPolicy(func(p *Policy) { p.IntervalJitterPercent = math.NaN() }), "intervalJitterPercent", "[0, 100]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.Validate()
			if c.field == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidPolicy)
			var pe *FieldError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, c.field, pe.Path)
			assert.Equal(t, c.range_, pe.Allowed)
			assert.Contains(t, err.Error(), c.field)
			assert.Contains(t, err.Error(), pe.Value)
		})
	}
}

func TestPolicyJitter(t *testing.T) {
	p := DefaultPolicy()
	p.IntervalJitter = time.Second
	p.IntervalJitterPercent = 10
	j := p.jitter()
	assert.Equal(t, time.Second, j.Absolute)
	assert.Equal(t, 10.0, j.Percent)
	assert.Equal(t, 2*time.Second, j.Max(10*time.Second))
}

func TestPolicyJSONRoundTrip(t *testing.T) {
	for name, p := range map[string]Policy{
		"default": DefaultPolicy(), "envoy": Envoy(), "consul": Consul(2, 1, 3),
		"gdnsd": Gdnsd(gdnsdUpThresh, gdnsdOkThresh, gdnsdDownThresh), "jitter": func() Policy {
			p := Envoy()
			p.InitialJitter, p.IntervalJitter, p.IntervalJitterPercent = time.Second, time.Millisecond, 12.5
			p.UnhealthyEdgeInterval = time.Second
			return p
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(p)
			require.NoError(t, err)
			got, err := DecodePolicy(b)
			require.NoError(t, err)
			assert.Equal(t, p, got)
		})
	}
	b, err := json.Marshal(Envoy())
	require.NoError(t, err)
	assert.Contains(t, string(b), `"interval":"3s"`)
	assert.Contains(t, string(b), `"initialState":"critical"`)
	assert.Contains(t, string(b), `"schedule":"envoy"`)
}

func TestDecodePolicy(t *testing.T) {
	cases := []struct {
		name    string
		json    string
		check   func(*testing.T, Policy)
		errIs   error
		errText string
	}{
		{"record-service names", `{"interval":"30s","warningThreshold":2,"criticalThreshold":4,"passingThreshold":3}`,
			func(t *testing.T, p Policy) {
				assert.Equal(t, 30*time.Second, p.Interval)
				assert.Equal(t, 2, p.WarningThreshold)
				assert.Equal(t, 4, p.CriticalThreshold)
				assert.Equal(t, 3, p.PassingThreshold)
				assert.Equal(t, time.Second, p.Timeout, "absent fields keep the default")
			}, nil, ""},
		{"Envoy Gateway names", `{"unhealthyThreshold":5,"healthyThreshold":2}`,
			func(t *testing.T, p Policy) {
				assert.Equal(t, 5, p.CriticalThreshold)
				assert.Equal(t, 2, p.PassingThreshold)
			}, nil, ""},
		{"seconds as numbers", `{"interval":20,"timeout":0.5}`,
			func(t *testing.T, p Policy) {
				assert.Equal(t, 20*time.Second, p.Interval)
				assert.Equal(t, 500*time.Millisecond, p.Timeout)
			}, nil, ""},
		{"enums by name", `{"initialState":"critical","schedule":"envoy","firstPassImmediate":true,"failNowAsFailure":true}`,
			func(t *testing.T, p Policy) {
				assert.Equal(t, Critical, p.InitialState)
				assert.Equal(t, ScheduleEnvoy, p.Schedule)
				assert.True(t, p.FirstPassImmediate)
				assert.True(t, p.FailNowAsFailure)
			}, nil, ""},
		{"both names of critical", `{"criticalThreshold":3,"unhealthyThreshold":3}`, nil, ErrPolicyJSON, "unhealthyThreshold"},
		{"both names of passing", `{"passingThreshold":1,"healthyThreshold":2}`, nil, ErrPolicyJSON, "healthyThreshold"},
		{"unknown field", `{"intervall":"3s"}`, nil, ErrPolicyJSON, "intervall"},
		{"trailing data", `{} {}`, nil, ErrPolicyJSON, "trailing"},
		{"bad duration", `{"interval":"3 parsecs"}`, nil, ErrPolicyJSON, "3 parsecs"},
		{"bad state", `{"initialState":"sleepy"}`, nil, ErrPolicyJSON, "sleepy"},
		{"bad schedule", `{"schedule":"cron"}`, nil, ErrPolicyJSON, "cron"},
		{"not an object", `[1,2]`, nil, ErrPolicyJSON, ""},
		{"out of range is a validation error", `{"unhealthyThreshold":-1}`, nil, ErrInvalidPolicy, "criticalThreshold = -1"},
		{"warning state is not an initial state", `{"initialState":"warning"}`, nil, ErrInvalidPolicy, "initialState"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := DecodePolicy([]byte(c.json))
			if c.errIs != nil {
				require.ErrorIs(t, err, c.errIs)
				assert.Contains(t, err.Error(), c.errText)
				assert.Equal(t, Policy{}, p)
				return
			}
			require.NoError(t, err)
			c.check(t, p)
		})
	}
}

func TestPolicyUnmarshalLeavesPolicyOnError(t *testing.T) {
	p := Envoy()
	err := json.Unmarshal([]byte(`{"interval":"7s","criticalThreshold":1,"unhealthyThreshold":2}`), &p)
	require.ErrorIs(t, err, ErrPolicyJSON)
	assert.Equal(t, Envoy(), p)

	// Inside a larger document, null leaves the policy alone.
	var doc struct {
		Policy Policy `json:"policy"`
	}
	doc.Policy = Envoy()
	require.NoError(t, json.Unmarshal([]byte(`{"policy":null}`), &doc))
	assert.Equal(t, Envoy(), doc.Policy)
}

func TestDecodePolicyOntoPreset(t *testing.T) {
	base := Envoy()
	p, err := DecodePolicyOnto(base, []byte(`{"interval":"5s"}`))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, p.Interval)
	assert.Equal(t, Critical, p.InitialState, "the preset's other fields stay")
	assert.Equal(t, Envoy(), base, "base is not modified")
}

func TestStateAndScheduleText(t *testing.T) {
	for _, s := range []State{Unknown, Passing, Warning, Critical, Recovery} {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var got State
		require.NoError(t, got.UnmarshalText(b))
		assert.Equal(t, s, got)
	}
	var s State
	assert.Error(t, s.UnmarshalText([]byte("Passing")))
	for _, k := range []ScheduleKind{ScheduleRecordService, ScheduleEnvoy} {
		b, err := k.MarshalText()
		require.NoError(t, err)
		var got ScheduleKind
		require.NoError(t, got.UnmarshalText(b))
		assert.Equal(t, k, got)
	}
	assert.True(t, strings.HasPrefix(ScheduleKind(9).String(), "schedule("))
}

func FuzzDecodePolicy(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"interval":"3s","timeout":"1s","unhealthyThreshold":3,"healthyThreshold":1}`,
		`{"warningThreshold":2,"criticalThreshold":4,"passingThreshold":3,"schedule":"envoy"}`,
		`{"initialState":"critical","firstPassImmediate":true,"intervalJitterPercent":50}`,
		`{"interval":1e300}`, `{"maxBackoff":"-1s"}`, `null`, `{"criticalThreshold":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePolicy(data)
		if err != nil {
			return
		}
		if verr := p.Validate(); verr != nil {
			t.Fatalf("accepted a policy that does not validate: %v", verr)
		}
		if _, err := NewMachine(p); err != nil {
			t.Fatalf("accepted a policy NewMachine refuses: %v", err)
		}
		_ = WorstCaseDetection(p)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		q, err := DecodePolicy(b)
		if err != nil {
			t.Fatalf("round trip of %s: %v", b, err)
		}
		if q != p && !(math.IsNaN(q.IntervalJitterPercent)) {
			t.Fatalf("round trip changed the policy: %+v → %+v", p, q)
		}
	})
}

// TestValidateNoAllocs checks that validating a valid config allocates
// nothing: Monitor.Add and NewHTTP validate once per target, and their
// garbage would stay in memory until the heap first reaches the runtime's
// GC goal (error paths and messages are built only on failure).
func TestValidateNoAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful with -cover")
	}
	pol, hc, tc := DefaultPolicy(), DefaultHTTPConfig(), DefaultTCPConfig()
	tgt := Target{ID: "a", Prober: ProberFunc(nil), Policy: pol}
	for name, f := range map[string]func() error{
		"Policy":         pol.Validate,
		"HTTPConfig":     hc.Validate,
		"TCPConfig":      tc.Validate,
		"monCheckPolicy": func() error { return monCheckPolicy(tgt) },
	} {
		if n := testing.AllocsPerRun(100, func() {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations validating a valid config, want 0", name, n)
		}
	}
}
