package replication_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// controller is an httptest replication source whose answers a test
// replaces: by default a replication.Handler over a Provider; override serves
// a fixed body (or a handler) instead, as a broken or hostile controller
// would.
type controller struct {
	srv  *httptest.Server
	mu   sync.Mutex
	h    http.Handler
	down bool
}

func newController(t *testing.T, source *memory.Provider) *controller {
	t.Helper()
	c := &controller{}
	c.setSource(t, source)
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		h, down := c.h, c.down
		c.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *controller) setSource(t *testing.T, source *memory.Provider) {
	h, err := replication.NewHandler(source, auth(), nil, nil)
	require.NoError(t, err)
	c.set(h)
}

func (c *controller) set(h http.Handler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.h = h
}

func (c *controller) setDown(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
}

// serveBody answers every request with body.
func serveBody(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(replication.SignatureHeader, auth().SignReply(r.Header.Get(replication.NonceHeader), []byte(body)))
		io.WriteString(w, body)
	})
}

// serveSnapshot answers GET snapshot with body and GET changes with a full
// response that carries body, as a source whose journal does not reach back.
func serveSnapshot(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/changes") {
			body = `{"version":9,"full":true,"snapshot":` + body + `}`
		}
		w.Header().Set(replication.SignatureHeader, auth().SignReply(r.Header.Get(replication.NonceHeader), []byte(body)))
		io.WriteString(w, body)
	})
}

// follower is a Replica of a controller over real sockets, driven by
// Notify, whose events arrive on a channel.
type follower struct {
	local   *memory.Provider
	replica *replication.Replica
	events  chan replication.ReplicaEvent
	stop    func()
	logs    *bytes.Buffer
}

func replicaConfig(url string, zones ...string) replication.ReplicaConfig {
	cfg := replication.DefaultReplicaConfig()
	cfg.URL, cfg.Zones, cfg.Auth = url, zones, auth()
	cfg.Interval = time.Hour // only Notify moves it
	cfg.Timeout = 30 * time.Second
	return cfg
}

func newFollower(t *testing.T, cfg replication.ReplicaConfig) *follower {
	t.Helper()
	f := &follower{local: new(memory.Provider), events: make(chan replication.ReplicaEvent, 64), logs: &bytes.Buffer{}}
	log := slog.New(slog.NewTextHandler(&logBuffer{w: f.logs}, nil))
	var err error
	f.replica, err = replication.NewReplica(f.local, cfg, nil, observerFunc(func(e replication.ReplicaEvent) { f.events <- e }), log)
	require.NoError(t, err)
	return f
}

func (f *follower) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.replica.Run(ctx) }()
	f.stop = func() { cancel(); require.NoError(t, <-done) }
	t.Cleanup(func() {
		if f.stop != nil {
			f.stop()
			f.stop = nil
		}
	})
}

// next returns the next sync's outcome (synced or sync-failed), skipping
// degraded and recovered, under a 60 s hang guard.
func (f *follower) next(t *testing.T) replication.ReplicaEvent {
	t.Helper()
	for {
		select {
		case e := <-f.events:
			if e.Kind == replication.ReplicaSynced || e.Kind == replication.ReplicaSyncFailed {
				return e
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no replica event within 60s")
			return replication.ReplicaEvent{}
		}
	}
}

func (f *follower) sync(t *testing.T) replication.ReplicaEvent {
	t.Helper()
	f.replica.Notify()
	return f.next(t)
}

type logBuffer struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func goodSource(t *testing.T) *memory.Provider {
	t.Helper()
	p := new(memory.Provider)
	require.NoError(t, p.AddZone(zone))
	_, err := p.SetRecords(context.Background(), zone, []libdns.Record{a("www", "192.0.2.1")})
	require.NoError(t, err)
	return p
}

func answers(p *memory.Provider, name string) []string {
	m := p.Respond(query(name, dns.TypeA), netip.Addr{}, false)
	var out []string
	for _, rr := range m.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	if m.Rcode != dns.RcodeSuccess {
		out = append(out, dns.RcodeToString[m.Rcode])
	}
	return out
}

const soaJSON = `"soa":{"ns":"ns1.%[2]s","mbox":"hostmaster.%[2]s","serial":9,"refresh":60,"retry":60,"expire":600,"minimum":30,"ttl":60}`

func zoneJSON(name string, recs ...string) string {
	suffix := name // what follows "ns1." and "hostmaster."
	if name == "." {
		suffix = ""
	}
	return fmt.Sprintf(`{"name":%q,`+soaJSON+`,"records":[{"name":"@","type":"NS","ttl":60,"data":"ns1.%[2]s"}%[3]s]}`, name, suffix, strings.Join(append([]string{""}, recs...), ","))
}

// TestReplicaRefusesBadSnapshots: a replica pinned to example.test. keeps
// its last good copy when its controller serves a snapshot it was not told
// to follow, and says why.
func TestReplicaRefusesBadSnapshots(t *testing.T) {
	evil := `{"name":"www.google.com.","type":"A","ttl":300,"data":"6.6.6.6"}`
	tests := []struct {
		name, body, reason, zone string
	}{
		{"no zones", `{"version":9,"zones":[]}`, replication.RejectEmpty, ""},
		{"root zone", `{"version":9,"zones":[` + zoneJSON(".", evil) + `]}`, replication.RejectRoot, "."},
		{"root zone beside the configured one", `{"version":9,"zones":[` + zoneJSON(".", evil) + `,` + zoneJSON(zone) + `]}`, replication.RejectRoot, "."},
		{"another zone instead", `{"version":9,"zones":[` + zoneJSON("other.test.") + `]}`, replication.RejectOtherZone, "other.test."},
		{"another zone beside", `{"version":9,"zones":[` + zoneJSON(zone) + `,` + zoneJSON("google.com.", `{"name":"www","type":"A","ttl":300,"data":"6.6.6.6"}`) + `]}`, replication.RejectOtherZone, "google.com."},
		{"records that do not validate", `{"version":9,"zones":[` + zoneJSON(zone, `{"name":"www","type":"A","ttl":30,"data":"not-an-ip"}`) + `]}`, replication.RejectInvalid, ""},
		{"not JSON", `<html>`, replication.RejectInvalid, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctl := newController(t, goodSource(t))
			f := newFollower(t, replicaConfig(ctl.srv.URL, zone))
			f.run(t)
			require.Equal(t, replication.ReplicaSynced, f.next(t).Kind)
			require.Equal(t, []string{"192.0.2.1"}, answers(f.local, "www.example.test."))

			ctl.set(serveSnapshot(tc.body))
			e := f.sync(t)
			require.Equal(t, replication.ReplicaSyncFailed, e.Kind)
			var re *replication.RejectError
			require.ErrorAs(t, e.Err, &re, "%v", e.Err)
			assert.ErrorIs(t, e.Err, replication.ErrRejected)
			assert.Equal(t, tc.reason, re.Reason, "%v", e.Err)
			assert.Equal(t, tc.zone, re.Zone)
			assert.Equal(t, []string{"192.0.2.1"}, answers(f.local, "www.example.test."), "the last good copy is kept")
			assert.Equal(t, []string{"REFUSED"}, answers(f.local, "www.google.com."), "nothing outside the pinned zone is answered")
			assert.Equal(t, []string{zone}, f.local.Zones())
			st := f.replica.Status()
			assert.Equal(t, uint64(1), st.Rejected)
			assert.ErrorIs(t, st.LastRejected, replication.ErrRejected)
			assert.ErrorIs(t, st.LastErr, replication.ErrRejected)
			assert.Equal(t, 1, st.Missed)

			e = f.sync(t)
			require.Equal(t, replication.ReplicaSyncFailed, e.Kind)
			assert.True(t, f.replica.Status().Degraded, "refused twice: degraded, as any failed sync")
		})
	}
}

// TestReplicaRefusesBadChanges: a change set that removes the configured
// zone, adds another, or touches another zone is refused.
func TestReplicaRefusesBadChanges(t *testing.T) {
	tests := []struct {
		name, changes, reason, zone string
	}{
		{"removes the zone", `[{"version":3,"kind":"removeZone","zone":"example.test.","serial":1}]`, replication.RejectEmpty, zone},
		{"adds the root", `[{"version":3,"kind":"addZone","zone":".","serial":1,"soa":{"ns":"a.","mbox":"b."}}]`, replication.RejectRoot, "."},
		{"adds another zone", `[{"version":3,"kind":"addZone","zone":"google.com.","serial":1,"soa":{"ns":"a.","mbox":"b."}}]`, replication.RejectOtherZone, "google.com."},
		{"writes another zone", `[{"version":3,"kind":"rrset","zone":"google.com.","serial":1,"name":"www","type":"A","records":[{"name":"www","type":"A","ttl":1,"data":"6.6.6.6"}]}]`, replication.RejectOtherZone, "google.com."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			source := goodSource(t)
			ctl := newController(t, source)
			f := newFollower(t, replicaConfig(ctl.srv.URL, zone))
			f.run(t)
			require.Equal(t, replication.ReplicaSynced, f.next(t).Kind)

			ctl.set(serveBody(fmt.Sprintf(`{"version":3,"epoch":%q,"changes":%s}`, source.Epoch(), tc.changes)))
			e := f.sync(t)
			require.Equal(t, replication.ReplicaSyncFailed, e.Kind)
			var re *replication.RejectError
			require.ErrorAs(t, e.Err, &re, "%v", e.Err)
			assert.Equal(t, tc.reason, re.Reason, "%v", e.Err)
			assert.Equal(t, tc.zone, re.Zone)
			assert.Equal(t, []string{zone}, f.local.Zones())
			assert.Equal(t, []string{"192.0.2.1"}, answers(f.local, "www.example.test."))
		})
	}
}

// TestReplicaNeedsEveryConfiguredZone: with two zones configured, a
// snapshot of one is refused.
func TestReplicaNeedsEveryConfiguredZone(t *testing.T) {
	ctl := newController(t, goodSource(t))
	f := newFollower(t, replicaConfig(ctl.srv.URL, zone, "second.test."))
	f.run(t)
	e := f.next(t)
	var re *replication.RejectError
	require.ErrorAs(t, e.Err, &re)
	assert.Equal(t, replication.RejectMissingZone, re.Reason)
	assert.Equal(t, "second.test.", re.Zone)
	assert.Empty(t, f.local.Zones())
}

// countingBody streams size bytes of a snapshot-shaped body and counts what
// the client took.
type countingBody struct {
	size    int
	length  bool // send Content-Length
	written atomic.Int64
}

func (c *countingBody) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if c.length {
		w.Header().Set("Content-Length", fmt.Sprint(c.size))
	}
	head := `{"version":9,"zones":[` + zoneJSON(zone)[:len(zoneJSON(zone))-2]
	n, _ := io.WriteString(w, head)
	c.written.Add(int64(n))
	chunk := []byte(strings.Repeat(`,{"name":"www","type":"TXT","ttl":30,"data":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`, 128))
	for int(c.written.Load())+len(chunk) < c.size {
		n, err := w.Write(chunk)
		c.written.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// TestReplicaBodyLimit: a body over MaxBody is refused after reading at
// most MaxBody bytes (plus what the sockets buffer), and one announced
// larger is not read at all; the last good copy stays.
func TestReplicaBodyLimit(t *testing.T) {
	const limit = 1 << 20
	for _, withLength := range []bool{false, true} {
		t.Run(fmt.Sprintf("content-length=%v", withLength), func(t *testing.T) {
			ctl := newController(t, goodSource(t))
			cfg := replicaConfig(ctl.srv.URL, zone)
			cfg.MaxBody = limit
			f := newFollower(t, cfg)
			f.run(t)
			require.Equal(t, replication.ReplicaSynced, f.next(t).Kind)

			big := &countingBody{size: 256 << 20, length: withLength}
			ctl.set(big)
			e := f.sync(t)
			require.Equal(t, replication.ReplicaSyncFailed, e.Kind)
			var re *replication.RejectError
			require.ErrorAs(t, e.Err, &re, "%v", e.Err)
			assert.Equal(t, replication.RejectTooLarge, re.Reason)
			assert.ErrorIs(t, e.Err, replication.ErrTooLarge)
			ctl.srv.CloseClientConnections()
			// The server side stops once the client hangs up; what it wrote
			// is the limit plus the sockets' buffers, far below the body.
			t.Logf("server wrote %d KiB of a %d MiB body (limit %d KiB)", big.written.Load()>>10, big.size>>20, limit>>10)
			assert.Less(t, big.written.Load(), int64(48<<20), "the body was read far beyond the limit")
			assert.Equal(t, []string{"192.0.2.1"}, answers(f.local, "www.example.test."))
		})
	}
}

// legacyHandler serves changes without reading ?epoch=, as a controller
// that does not know epochs would, so that the replica's own check is what
// is tested.
func legacyHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !auth().VerifyRequest(r) {
			http.Error(w, "wrong MAC", http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		q.Del("epoch")
		r.URL.RawQuery = q.Encode() // which the MAC covered: the secret vouches instead
		r.Header.Set(auth().Header, auth().Secret)
		h.ServeHTTP(w, r)
	})
}

// TestReplicaEpoch: a controller restarted with a new history whose version
// has passed the replica's must not have its journal applied onto the old
// copy: the replica takes a full snapshot and ends up with exactly the new
// history's zone.
func TestReplicaEpoch(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("controller reads epoch=%v", !legacy), func(t *testing.T) {
			before := goodSource(t) // version 2: www A 192.0.2.1
			ctl := newController(t, before)
			f := newFollower(t, replicaConfig(ctl.srv.URL, zone))
			f.run(t)
			require.Equal(t, replication.ReplicaSynced, f.next(t).Kind)
			require.Equal(t, before.Epoch(), f.replica.Status().Epoch)

			// The restarted controller: another history, further along.
			after := new(memory.Provider)
			require.NoError(t, after.AddZone(zone))                                                        // 1
			_, err := after.SetRecords(context.Background(), zone, []libdns.Record{a("www", "192.0.2.9")}) // 2
			require.NoError(t, err)
			_, err = after.SetRecords(context.Background(), zone, []libdns.Record{a("api", "192.0.2.10")}) // 3
			require.NoError(t, err)
			require.NotEqual(t, before.Epoch(), after.Epoch())
			h, err := replication.NewHandler(after, auth(), nil, nil)
			require.NoError(t, err)
			if legacy {
				ctl.set(legacyHandler(h))
			} else {
				ctl.set(h)
			}
			e := f.sync(t)
			require.Equal(t, replication.ReplicaSynced, e.Kind, "%v", e.Err)
			assert.True(t, e.Full, "another epoch: a full snapshot, not the journal since version 2")
			assert.Equal(t, []string{"192.0.2.9"}, answers(f.local, "www.example.test."), "the new history's www, not the old copy's")
			assert.Equal(t, []string{"192.0.2.10"}, answers(f.local, "api.example.test."))
			st := f.replica.Status()
			assert.Equal(t, after.Epoch(), st.Epoch)
			assert.Equal(t, after.Version(), st.Version)

			// Then the new history's journal applies as usual.
			_, err = after.SetRecords(context.Background(), zone, []libdns.Record{a("www", "192.0.2.11")})
			require.NoError(t, err)
			e = f.sync(t)
			require.Equal(t, replication.ReplicaSynced, e.Kind)
			assert.False(t, e.Full)
			assert.Equal(t, []string{"192.0.2.11"}, answers(f.local, "www.example.test."))
		})
	}
}

func TestHandlerChangesOfAnotherEpoch(t *testing.T) {
	source := goodSource(t)
	h, err := replication.NewHandler(source, auth(), nil, nil)
	require.NoError(t, err)
	get := func(target string) replication.ChangesResponse {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set(replication.DefaultSecretHeader, secret)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, 200, rec.Code)
		c, err := replication.ParseChanges(rec.Body.Bytes())
		require.NoError(t, err)
		return c
	}
	c := get("/r/changes?since=1&epoch=" + source.Epoch())
	assert.False(t, c.Full)
	assert.Equal(t, source.Epoch(), c.Epoch)
	c = get("/r/changes?since=1&epoch=another")
	assert.True(t, c.Full, "another epoch's version means nothing here")
	assert.Equal(t, source.Epoch(), c.Snapshot.Epoch)
}

// TestReplicaRestartFromDisk: a replica saves its copy; a new one over the
// same directory answers from it before any sync, while the controller is
// down, degraded until a sync succeeds, which then continues the journal.
func TestReplicaRestartFromDisk(t *testing.T) {
	source := goodSource(t)
	ctl := newController(t, source)
	cfg := replicaConfig(ctl.srv.URL, zone)
	cfg.Dir = filepath.Join(t.TempDir(), "node") // created by NewReplica
	f := newFollower(t, cfg)
	f.run(t)
	require.Equal(t, replication.ReplicaSynced, f.next(t).Kind)
	_, err := source.SetRecords(context.Background(), zone, []libdns.Record{a("www", "192.0.2.2")})
	require.NoError(t, err)
	require.Equal(t, replication.ReplicaSynced, f.sync(t).Kind)
	assert.False(t, f.replica.Status().Saved.IsZero())
	assert.NoError(t, f.replica.Status().SaveErr)
	f.stop()
	f.stop = nil
	files, _ := os.ReadDir(cfg.Dir)
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	require.Equal(t, []string{"replica-copy", "replica-journal"}, names, "the copy and the journal of the change set since, no temporary left")

	ctl.setDown(true)
	start := time.Now()
	g := newFollower(t, cfg)
	t.Logf("loaded the saved copy in %v", time.Since(start))
	st := g.replica.Status()
	assert.True(t, st.FromDisk)
	assert.True(t, st.Degraded, "a copy from disk is degraded until a sync succeeds")
	assert.True(t, st.Synced)
	assert.Equal(t, source.Version(), st.Version)
	assert.Equal(t, source.Epoch(), st.Epoch)
	assert.NoError(t, st.LoadErr)
	assert.Equal(t, []string{"192.0.2.2"}, answers(g.local, "www.example.test."), "answers before Run, from disk")
	soa, _ := g.local.SOA(zone)
	want, _ := source.SOA(zone)
	assert.Equal(t, want.Serial, soa.Serial, "the serial is kept")

	g.run(t)
	e := g.next(t)
	require.Equal(t, replication.ReplicaSyncFailed, e.Kind)
	assert.Equal(t, []string{"192.0.2.2"}, answers(g.local, "www.example.test."), "the controller is down: the saved copy still answers")
	assert.True(t, g.replica.Degraded())

	_, err = source.SetRecords(context.Background(), zone, []libdns.Record{a("www", "192.0.2.3")})
	require.NoError(t, err)
	ctl.setDown(false)
	e = g.sync(t)
	require.Equal(t, replication.ReplicaSynced, e.Kind)
	assert.False(t, e.Full, "same epoch: the journal continues from the saved version")
	st = g.replica.Status()
	assert.False(t, st.FromDisk)
	assert.False(t, st.Degraded)
	assert.Equal(t, []string{"192.0.2.3"}, answers(g.local, "www.example.test."))
}

// TestReplicaIgnoresBadFiles: a corrupt, foreign, other-format or
// other-zone file is ignored with a log line and LoadErr; the replica
// starts empty and syncs.
func TestReplicaIgnoresBadFiles(t *testing.T) {
	source := goodSource(t)
	ctl := newController(t, source)
	// A good file to start from.
	goodDir := t.TempDir()
	cfg := replicaConfig(ctl.srv.URL, zone)
	cfg.Dir = goodDir
	f := newFollower(t, cfg)
	f.run(t)
	require.Equal(t, replication.ReplicaSynced, f.next(t).Kind)
	f.stop()
	f.stop = nil
	files, err := os.ReadDir(goodDir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	name := files[0].Name()
	good, err := os.ReadFile(filepath.Join(goodDir, name))
	require.NoError(t, err)

	flip := bytes.Clone(good)
	flip[len(flip)/2] ^= 1
	tests := []struct {
		name  string
		data  []byte
		zones []string
		want  string
	}{
		{"one bit flipped", flip, nil, "checksum"},
		{"truncated", good[:len(good)*2/3], nil, "checksum line"},
		{"empty", nil, nil, "no header"},
		{"foreign file", []byte("PK\x03\x04 not ours at all\n\x00\x01"), nil, "not a replica copy"},
		{"a JSON snapshot", []byte(`{"version":1,"zones":[]}` + "\n"), nil, "not a replica copy"},
		{"another format version", append([]byte("gslbkit-replica-copy 2\n"), good[bytes.IndexByte(good, '\n')+1:]...), nil, "format version"},
		{"saved for other zones", good, []string{"other.test."}, "saved for zones"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), tc.data, 0o600))
			cfg := replicaConfig(ctl.srv.URL, zone)
			if tc.zones != nil {
				cfg.Zones = tc.zones
			}
			cfg.Dir = dir
			g := newFollower(t, cfg)
			st := g.replica.Status()
			require.Error(t, st.LoadErr)
			assert.ErrorIs(t, st.LoadErr, replication.ErrSavedCopy)
			assert.Contains(t, st.LoadErr.Error(), tc.want)
			assert.False(t, st.Synced)
			assert.False(t, st.FromDisk)
			assert.Empty(t, g.local.Zones())
			assert.Contains(t, g.logs.String(), "ignoring the saved copy")
			if tc.zones == nil {
				g.run(t)
				require.Equal(t, replication.ReplicaSynced, g.next(t).Kind)
				assert.Equal(t, []string{"192.0.2.1"}, answers(g.local, "www.example.test."))
				again, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err)
				assert.True(t, bytes.HasPrefix(again, []byte("gslbkit-replica-copy 1\n")), "the bad file is replaced by a good copy")
			}
		})
	}
}

func TestReplicaDirErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cfg := replicaConfig("http://127.0.0.1:1/r", zone)
	cfg.Dir = filepath.Join(file, "sub")
	_, err := replication.NewReplica(new(memory.Provider), cfg, nil, nil, nil)
	require.Error(t, err, "a directory that cannot be created is a configuration error")
	assert.False(t, errors.Is(err, replication.ErrSavedCopy))
}
