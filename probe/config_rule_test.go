package probe

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestZeroConfigsTakeDefaults holds the configuration rule: a zero config
// is its DefaultX(), except fields whose zero means something else.
func TestZeroConfigsTakeDefaults(t *testing.T) {
	t.Run("policy", func(t *testing.T) {
		m, err := NewMachine(Policy{})
		require.NoError(t, err)
		assert.Equal(t, DefaultPolicy(), m.Policy())
	})
	t.Run("policy with only a short interval", func(t *testing.T) {
		m, err := NewMachine(Policy{Interval: 500 * time.Millisecond})
		require.NoError(t, err)
		p := m.Policy()
		assert.Equal(t, 500*time.Millisecond, p.Timeout, "the default timeout is capped by the interval")
		assert.Equal(t, 300*time.Second, p.MaxBackoff)
		assert.Equal(t, 3, p.CriticalThreshold)
	})
	t.Run("policy with a long interval", func(t *testing.T) {
		m, err := NewMachine(Policy{Interval: time.Hour})
		require.NoError(t, err)
		assert.Equal(t, time.Hour, m.Policy().MaxBackoff, "the default back-off is at least the interval")
	})
	t.Run("envoy schedule keeps a zero back-off", func(t *testing.T) {
		m, err := NewMachine(Policy{Schedule: ScheduleEnvoy})
		require.NoError(t, err)
		assert.Zero(t, m.Policy().MaxBackoff)
		assert.Zero(t, m.Policy().UnhealthyInterval, "0 means Interval")
	})
	t.Run("monitor", func(t *testing.T) {
		m, err := NewMonitor(MonitorConfig{}, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, DefaultMonitorConfig(), m.Config())
	})
	t.Run("http keeps a zero match window", func(t *testing.T) {
		h, err := NewHTTP("127.0.0.1:80", HTTPConfig{})
		require.NoError(t, err)
		assert.Equal(t, "/", h.cfg.Path)
		assert.Zero(t, h.window, "0 means the whole body")
	})
	t.Run("tcp", func(t *testing.T) {
		_, err := NewTCP("127.0.0.1:80", TCPConfig{})
		require.NoError(t, err)
	})
}

// TestConfigErrorsAreFieldErrors: every invalid value is a *FieldError
// naming the field path, wrapping the config's sentinel.
func TestConfigErrorsAreFieldErrors(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		sentinel error
		field    string
	}{
		{"policy", Policy{Interval: -1}.Validate(), ErrInvalidPolicy, "interval"},
		{"monitor", MonitorConfig{Concurrency: -1}.Validate(), ErrMonitorConfig, "concurrency"},
		{"monitor shard", MonitorConfig{Shard: Shard{Index: 2, Count: 2}}.Validate(), ErrMonitorConfig, "shard.index"},
		{"http", HTTPConfig{Port: 70000}.Validate(), ErrHTTPConfig, "port"},
		{"http tls", HTTPConfig{TLS: &TLSConfig{KeyFile: "k"}}.Validate(), ErrHTTPConfig, "tls.keyFile"},
		{"http status", HTTPConfig{ExpectedStatuses: Statuses{OneStatus(200), OneStatus(99)}}.Validate(), ErrHTTPConfig, "expectedStatuses[1]"},
		{"tcp", TCPConfig{Send: &Payload{}}.Validate(), ErrTCPConfig, "send"},
		{"tcp receive", TCPConfig{Receive: Segments{{Type: "Morse"}}}.Validate(), ErrTCPConfig, "receive[0]"},
		{"tls", (&TLSConfig{CertPEM: "x"}).Validate(), ErrTLSConfig, "certPEM"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorIs(t, c.err, c.sentinel)
			var fe *FieldError
			require.True(t, errors.As(c.err, &fe), "%T %v", c.err, c.err)
			assert.Equal(t, c.field, fe.Path)
			assert.NotEmpty(t, fe.Value)
			assert.NotEmpty(t, fe.Allowed)
			assert.Contains(t, c.err.Error(), c.field)
		})
	}
	_, err := NewMonitor(MonitorConfig{LatencyWindow: MaxLatencyWindow + 1}, nil, nil)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "latencyWindow", fe.Path)
}

// TestDurationsJSON: Go-facing durations are time.Duration; JSON still
// reads and writes "10s".
func TestDurationsJSON(t *testing.T) {
	p := DefaultPolicy()
	p.Interval = 500 * time.Millisecond
	p.Timeout = 250 * time.Millisecond
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"interval":"500ms"`)
	assert.Contains(t, string(b), `"timeout":"250ms"`)
	assert.Contains(t, string(b), `"maxBackoff":"5m0s"`)
	assert.NotContains(t, string(b), "unhealthyThreshold")
	var q Policy
	require.NoError(t, json.Unmarshal(b, &q))
	assert.Equal(t, p, q)

	h := Route53HTTP()
	b, err = json.Marshal(h)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"connectTimeout":"4s"`)
	assert.Contains(t, string(b), `"responseTimeout":"2s"`)
	got := DefaultHTTPConfig()
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, h, got)
	require.NoError(t, json.Unmarshal([]byte(`{"connectTimeout":1.5}`), &got))
	assert.Equal(t, 1500*time.Millisecond, got.ConnectTimeout)
	assert.Equal(t, "/", got.Path, "absent fields keep their value")
	err = json.Unmarshal([]byte(`{"conectTimeout":"1s"}`), &got)
	assert.ErrorIs(t, err, ErrHTTPConfig, "unknown fields are errors")
}

// TestPresetZeroArguments: a preset's 0 argument is the peer's default.
func TestPresetZeroArguments(t *testing.T) {
	assert.Equal(t, Gdnsd(20, 10, 10), Gdnsd(0, 0, 0))
	assert.Equal(t, Route53(3, true), Route53(0, true))
	assert.ErrorIs(t, Gdnsd(-1, 0, 0).Validate(), ErrInvalidPolicy)
}
