package replication

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
)

// forgedRecords is the size of the forged snapshot: 20,000 by default, the
// largest count in GSLBKIT_COPY_MEMORY when set (1,000,000 to check the
// streamed case at scale; it takes a few GiB and a minute).
func forgedRecords(t *testing.T) int {
	n := 20_000
	for _, f := range strings.Split(os.Getenv("GSLBKIT_COPY_MEMORY"), ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && v > n {
			n = v
		}
	}
	t.Logf("%d records", n)
	return n
}

// TestForgedSnapshotRefused: a replica builds a streamed snapshot as it
// reads it, but publishes it only once the body's MAC verifies. A full
// snapshot of many valid records signed with another key (through the
// changes endpoint and the snapshot endpoint) is refused as forged, and
// the replica keeps answering from its old copy.
func TestForgedSnapshotRefused(t *testing.T) {
	const secret = "the-real-shared-secret-0123"
	old := copyMemSource(t, 10)
	good, err := NewHandler(old, HandlerConfig{Secret: secret}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := copyMemSource(t, forgedRecords(t))
	forger, err := NewHandler(big, HandlerConfig{Secret: "a-forgers-own-secret-456"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var forging atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !forging.Load() {
			good.ServeHTTP(w, r)
			return
		}
		// The forger cannot check the replica's MAC; it answers anyway,
		// signing a whole valid snapshot with its own key.
		r.Header.Set(DefaultSecretHeader, "a-forgers-own-secret-456")
		forger.ServeHTTP(w, r)
	}))
	defer srv.Close()

	cfg := DefaultReplicaConfig()
	cfg.URL, cfg.Zones, cfg.Auth.Secret = srv.URL+"/replication", []string{copyMemZone}, secret
	cfg.MaxBody, cfg.Timeout = 1<<30, 10*time.Minute
	local := new(memory.Provider)
	r, err := NewReplica(local, cfg, srv.Client(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.syncOnce(ctx)
	if err := r.Status().LastErr; err != nil {
		t.Fatal(err)
	}
	answers := func() {
		t.Helper()
		copyMemCheck(t, local, 10)
		m := new(dns.Msg)
		m.SetQuestion("h0000000."+copyMemZone, dns.TypeA)
		resp := local.Respond(m, netip.Addr{}, false)
		if resp == nil || resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
			t.Fatalf("the old copy does not answer: %v", resp)
		}
	}
	answers()
	version := local.Version()

	forging.Store(true)
	for _, endpoint := range []string{"changes", "snapshot"} {
		if endpoint == "snapshot" {
			r.mu.Lock()
			r.st.Synced = false // the next sync asks for a whole snapshot
			r.mu.Unlock()
		}
		r.syncOnce(ctx)
		st := r.Status()
		var rej *RejectError
		if !errors.As(st.LastErr, &rej) || rej.Reason != RejectForged {
			t.Fatalf("%s: a forged snapshot: %v, want a %s refusal", endpoint, st.LastErr, RejectForged)
		}
		if local.Version() != version {
			t.Fatalf("%s: the local copy changed (version %d, was %d)", endpoint, local.Version(), version)
		}
		answers()
	}
}

// TestTruncatedSnapshotKeepsCopy: every truncation of a snapshot body fails
// with an error that says so, and the Provider keeps its old zones.
func TestTruncatedSnapshotKeepsCopy(t *testing.T) {
	src := copyMemSource(t, 40)
	var body bytes.Buffer
	if err := src.SnapshotView().WriteJSON(&body, nil); err != nil {
		t.Fatal(err)
	}
	data := body.Bytes()
	local := copyMemSource(t, 3)
	version := local.Version()
	for n := range len(data) - 1 {
		b := memory.NewSnapshotBuilder(context.Background())
		err := readSnapshotInto(bytes.NewReader(data[:n]), b)
		if err == nil {
			t.Fatalf("truncated to %d of %d bytes, still read", n, len(data))
		}
		if !strings.HasPrefix(err.Error(), "replication: parsing snapshot: ") {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
		if local.Version() != version {
			t.Fatal("the old copy changed")
		}
	}
	b := memory.NewSnapshotBuilder(context.Background())
	if err := readSnapshotInto(bytes.NewReader(data), b); err != nil {
		t.Fatal(err)
	}
	if err := local.RestoreBuilt(b); err != nil {
		t.Fatal(err)
	}
	copyMemCheck(t, local, 40)
}

// TestForgedInvalidSnapshot: a reply whose content fails while the copy is
// built is refused for its signature first: unsigned or forged, not
// invalid; a signed one is invalid.
func TestForgedInvalidSnapshot(t *testing.T) {
	const secret = "the-real-shared-secret-0123"
	body := `{"version":1000,"epoch":"forged","zones":[{"name":"big.test.","records":[{"name":"app","type":"A","ttl":5,"data":"203.0.113.66"}]}]}` + "\n"
	for _, tc := range []struct {
		name, key, want string
	}{
		{"unsigned", "", RejectUnsigned},
		{"forged", "a-forgers-own-secret-456", RejectForged},
		{"signed", secret, RejectInvalid},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.key != "" {
				w.Header().Set(SignatureHeader, HandlerConfig{Secret: tc.key}.SignReply(r.Header.Get(NonceHeader), []byte(body)))
			}
			_, _ = w.Write([]byte(body))
		}))
		cfg := DefaultReplicaConfig()
		cfg.URL, cfg.Zones, cfg.Auth.Secret = srv.URL+"/replication", []string{copyMemZone}, secret
		local := copyMemSource(t, 3)
		version := local.Version()
		r, err := NewReplica(local, cfg, srv.Client(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.syncOnce(context.Background())
		srv.Close()
		var rej *RejectError
		if err := r.Status().LastErr; !errors.As(err, &rej) || rej.Reason != tc.want {
			t.Errorf("%s: %v, want a %s refusal", tc.name, err, tc.want)
		}
		if local.Version() != version {
			t.Errorf("%s: the copy changed", tc.name)
		}
	}
}
