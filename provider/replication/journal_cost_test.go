package replication

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
)

// TestJournalCost measures what a replica with Dir writes for a sync of a
// few changes over a large copy: GSLBKIT_JOURNAL_COST=N (records, e.g.
// 100000). It logs the bytes written per sync and the time of a sync
// (journal append, fsync, apply), and what rewriting the whole copy (the
// save before the journal, and a compaction now) writes and takes.
func TestJournalCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GSLBKIT_JOURNAL_COST"))
	if n == 0 {
		t.Skip("set GSLBKIT_JOURNAL_COST=<records> to measure")
	}
	ctx := context.Background()
	src := copyMemSource(t, n)
	auth := DefaultHandlerConfig()
	auth.Secret = "0123456789abcdef0123456789abcdef"
	h, err := NewHandler(src, auth, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/replication", h))
	defer srv.Close()
	cfg := DefaultReplicaConfig()
	cfg.URL, cfg.Zones, cfg.Dir = srv.URL+"/replication", []string{copyMemZone}, t.TempDir()
	cfg.Auth, cfg.Timeout = auth, time.Minute
	r, err := NewReplica(new(memory.Provider), cfg, srv.Client(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r.syncOnce(ctx)
	if err := r.Status().LastErr; err != nil {
		t.Fatal(err)
	}
	t.Logf("first sync (whole snapshot, written as read): %v, copy %d bytes", time.Since(start), r.copySize)
	const syncs = 50
	var total time.Duration
	var bytes int64
	for i := range syncs {
		for j := range 3 {
			if _, err := src.SetRecords(ctx, copyMemZone, []libdns.Record{libdns.RR{Name: fmt.Sprintf("h%07d", (i*3+j)*7), Type: "A", TTL: 300 * time.Second, Data: fmt.Sprintf("192.0.2.%d", i)}}); err != nil {
				t.Fatal(err)
			}
		}
		before := r.jsize
		start := time.Now()
		r.syncOnce(ctx)
		total += time.Since(start)
		if err := r.Status().LastErr; err != nil {
			t.Fatal(err)
		}
		bytes += r.jsize - before
	}
	t.Logf("%d syncs of 3 changes each over %d records: %d bytes written per sync (journal), %v per sync (fetch, append, fsync, apply); journal %d bytes, compaction at %d",
		syncs, n, bytes/syncs, total/syncs, r.jsize, max(r.copySize, journalCompactMin))
	var bare time.Duration
	dir := r.cfg.Dir
	r.cfg.Dir = "" // the same syncs without Dir: the journal's share is the difference
	for i := range syncs {
		for j := range 3 {
			if _, err := src.SetRecords(ctx, copyMemZone, []libdns.Record{libdns.RR{Name: fmt.Sprintf("h%07d", (i*3+j)*11), Type: "A", TTL: 300 * time.Second, Data: fmt.Sprintf("192.0.2.%d", i)}}); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		r.syncOnce(ctx)
		bare += time.Since(start)
	}
	r.cfg.Dir = dir
	t.Logf("the same syncs without Dir: %v per sync", bare/syncs)
	start = time.Now()
	if err := r.save(r.Status().Version, r.Status().Epoch); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(cfg.Dir, copyFile))
	t.Logf("rewriting the whole copy (what every such sync did before; a compaction now): %d bytes, %v", fi.Size(), time.Since(start))
}
