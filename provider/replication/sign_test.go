package replication_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/replication"
)

// TestReplicaNeverSendsTheSecret: a replica's requests (and SendNotify's)
// carry a nonce and a MAC, never the shared secret, and the source
// accepts them.
func TestReplicaNeverSendsTheSecret(t *testing.T) {
	source := goodSource(t)
	ctl := newController(t, source)
	h, err := replication.NewHandler(source, auth(), nil, nil)
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []http.Header
	ctl.set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	f := newFollower(t, replicaConfig(ctl.srv.URL, zone))
	f.run(t)
	require.Equal(t, replication.ReplicaSynced, f.next(t).Kind)
	_, err = source.SetRecords(context.Background(), zone, []libdns.Record{a("api", "192.0.2.7")})
	require.NoError(t, err)
	e := f.sync(t)
	require.Equal(t, replication.ReplicaSynced, e.Kind, "%v", e.Err)
	assert.Equal(t, []string{"192.0.2.7"}, answers(f.local, "api.example.test."))
	// This source has no notify function: 404, which it answers only to an
	// authenticated request (401 else).
	var se *replication.StatusError
	require.ErrorAs(t, replication.SendNotify(context.Background(), nil, ctl.srv.URL, auth()), &se)
	assert.Equal(t, http.StatusNotFound, se.Code)
	mu.Lock()
	defer mu.Unlock()
	for _, hdr := range seen {
		for k, vs := range hdr {
			for _, v := range vs {
				assert.NotContains(t, v, auth().Secret, "header %s carries the secret", k)
			}
		}
		assert.NotEmpty(t, hdr.Get(replication.NonceHeader))
		assert.NotEmpty(t, hdr.Get(replication.MACHeader))
	}
}

// TestReplicaRefusesForgedSource: with the controller
// away, another process answers at its address: unsigned replies, replies
// signed with another key, a recorded reply replayed, and a stale source
// with the key serving an older version of the same epoch are all refused
// (unsigned, forged, forged, rollback) and the copy is kept. Before, the
// replica sent its secret in clear text and applied whatever came back.
func TestReplicaRefusesForgedSource(t *testing.T) {
	source := goodSource(t)
	old, err := json.Marshal(source.Snapshot())
	require.NoError(t, err)
	ctl := newController(t, source)
	// Record one genuine signed reply (to replay it later).
	var recBody []byte
	var recSig string
	h, err := replication.NewHandler(source, auth(), nil, nil)
	require.NoError(t, err)
	ctl.set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		recBody, recSig = rec.Body.Bytes(), rec.Header().Get(replication.SignatureHeader)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(recBody)
	}))
	f := newFollower(t, replicaConfig(ctl.srv.URL, zone))
	f.run(t)
	require.Equal(t, replication.ReplicaSynced, f.next(t).Kind)
	require.NotEmpty(t, recSig)
	_, err = source.SetRecords(context.Background(), zone, []libdns.Record{a("www", "192.0.2.2")})
	require.NoError(t, err)
	ctl.setSource(t, source)
	require.Equal(t, replication.ReplicaSynced, f.sync(t).Kind)
	require.Equal(t, []string{"192.0.2.2"}, answers(f.local, "www.example.test."))

	forged := `{"version":99,"epoch":"x","zones":[{"name":"example.test.","records":[{"name":"www","type":"A","ttl":30,"data":"203.0.113.66"}]}]}`
	other := replication.HandlerConfig{Secret: "another-secret-of-16-bytes", Header: replication.DefaultSecretHeader}
	for _, tc := range []struct {
		name, reason string
		h            http.Handler
	}{
		{"unsigned", replication.RejectUnsigned, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, forged) })},
		{"signed with another key", replication.RejectForged, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(replication.SignatureHeader, other.SignReply(r.Header.Get(replication.NonceHeader), []byte(forged)))
			io.WriteString(w, forged)
		})},
		{"a recorded reply replayed", replication.RejectForged, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set(replication.SignatureHeader, recSig)
			_, _ = w.Write(recBody)
		})},
		{"an older version of the same epoch, signed", replication.RejectRollback, serveBody(string(old))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctl.set(tc.h)
			e := f.sync(t)
			require.Equal(t, replication.ReplicaSyncFailed, e.Kind)
			var re *replication.RejectError
			require.ErrorAs(t, e.Err, &re, "%v", e.Err)
			assert.Equal(t, tc.reason, re.Reason, "%v", e.Err)
			assert.Equal(t, []string{"192.0.2.2"}, answers(f.local, "www.example.test."), "the copy is kept")
			assert.True(t, strings.Contains(e.Err.Error(), tc.reason))
		})
	}
}
