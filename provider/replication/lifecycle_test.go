package replication_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lifeReplicaConfig(f func(*replication.ReplicaConfig)) replication.ReplicaConfig {
	c := replication.DefaultReplicaConfig()
	c.URL, c.Zones, c.Auth.Secret = "http://primary:8053/replication", []string{"example.test."}, secret
	f(&c)
	return c
}

// TestReplicaRunTwice: a Replica runs once.
func TestReplicaRunTwice(t *testing.T) {
	cfg := lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.URL = "http://127.0.0.1:1/replication" })
	r, err := replication.NewReplica(new(memory.Provider), cfg, nil, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- r.Run(ctx) }()
	go func() { done <- r.Run(ctx) }()
	// Whichever call comes second returns ErrRunning at once; the other
	// runs until ctx ends.
	assert.ErrorIs(t, <-done, replication.ErrRunning)
	cancel()
	assert.NoError(t, <-done)
	assert.ErrorIs(t, r.Run(context.Background()), replication.ErrRunning, "after it returned too")
}

// TestZeroValues: the zero Replica and Handler are not usable and say so;
// no method panics.
func TestZeroValues(t *testing.T) {
	var r replication.Replica
	assert.ErrorIs(t, r.Run(context.Background()), replication.ErrNotConfigured)
	r.Notify()
	assert.Equal(t, replication.ReplicaStatus{}, r.Status())
	assert.False(t, r.Degraded())
	_, err := replication.NewReplica(nil, lifeReplicaConfig(func(*replication.ReplicaConfig) {}), nil, nil, nil)
	assert.ErrorIs(t, err, replication.ErrNotConfigured)

	var h replication.Handler
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/replication/snapshot", nil)
	req.Header.Set(replication.DefaultSecretHeader, "")
	h.ServeHTTP(w, req)
	assert.Equal(t, http.StatusUnauthorized, w.Code)

	assert.Error(t, replication.ReplicaConfig{}.Validate(), "a replica's URL, zones and secret have no default")
	assert.Error(t, replication.HandlerConfig{}.Validate(), "the secret has no default")
}

// TestConfigMessages pins the message of a few fields (internal/fielderr),
// and keeps the rows of memory's former config test.
func TestConfigMessages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.Interval = time.Millisecond }).Validate(), "replication: invalid config: interval = 1ms: allowed [100ms, 1h]"},
		{lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.DegradedAfter = 101 }).Validate(), "replication: invalid config: degradedAfter = 101: allowed [1, 100]"},
		{lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.Zones = []string{"a.test", "A.test."} }).Validate(), `replication: invalid config: zones[1] = "A.test.": allowed each zone once`},
		{lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.Auth.Secret = "short" }).Validate(), "replication: invalid config: auth.secret = 5 bytes: allowed [16, 1024] bytes"},
		{replication.HandlerConfig{Secret: secret, Header: "X Bad"}.Validate(), `replication: invalid config: header = "X Bad": allowed an HTTP header name (default X-Gslb-Replication-Secret)`},
	} {
		if assert.Error(t, tc.err) {
			assert.Equal(t, tc.want, tc.err.Error())
			assert.ErrorIs(t, tc.err, replication.ErrInvalidConfig)
		}
	}
	for name, c := range map[string]struct {
		cfg   replication.ReplicaConfig
		field string
	}{
		"valid":                          {lifeReplicaConfig(func(*replication.ReplicaConfig) {}), ""},
		"url":                            {lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.URL = "ftp://x" }), "url"},
		"timeout":                        {lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.Timeout = -time.Second }), "timeout"},
		"zero timeout takes the default": {lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.Timeout = 0 }), ""},
		"secret with a space":            {lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.Auth.Secret = secret + " " }), "auth.secret"},
		"no zones":                       {lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.Zones = nil }), "zones"},
		"root zone":                      {lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.Zones = []string{"."} }), "zones[0]"},
		"maxBody":                        {lifeReplicaConfig(func(c *replication.ReplicaConfig) { c.MaxBody = 10 }), "maxBody"},
	} {
		err := c.cfg.Validate()
		if c.field == "" {
			assert.NoError(t, err, name)
			continue
		}
		var fe *replication.FieldError
		if assert.ErrorAs(t, err, &fe, name) {
			assert.Equal(t, c.field, fe.Path, name)
		}
	}
}

// TestReplicaConfigJSON: durations read and write as strings, zero fields
// take their defaults, unknown fields are errors.
func TestReplicaConfigJSON(t *testing.T) {
	var rc replication.ReplicaConfig
	require.NoError(t, json.Unmarshal([]byte(`{"url":"http://c/r","zones":["example.test."],"interval":"250ms","timeout":2,"auth":{"secret":"0123456789abcdef"}}`), &rc))
	assert.Equal(t, 250*time.Millisecond, rc.Interval)
	assert.Equal(t, 2*time.Second, rc.Timeout)
	require.NoError(t, rc.Validate(), "zero degradedAfter, maxBody and header take their defaults")
	b, err := json.Marshal(rc)
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(b), `"interval":"250ms"`))
	assert.Error(t, json.Unmarshal([]byte(`{"intervall":"1s"}`), &rc), "unknown fields are errors")
}
