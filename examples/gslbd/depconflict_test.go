package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider/memory"
)

const poolYAML = `ownerId: test
zone: example.test.
provider: {type: rfc2136, rfc2136: {server: "127.0.0.1:53"}, resyncInterval: 1s}
probe:
  policy: {interval: 10s, timeout: 1s, warningThreshold: 1, criticalThreshold: 3}
records:
  - name: app.example.test.
    ttl: 5s
    failover: app.backup.example.net.
    addresses:
      - {ip: 192.0.2.1, probeAddr: "10.0.0.1:80"}
`

// TestPoolTakenOverFallsBackToFailover: with an external provider, a
// third party takes over the record's pool name (and empties it, so the
// hold is cut short: TestPoolEmptiedFallsBackAtOnce), /readyz naming
// pool_conflict; the record is answered by its failover name (a CNAME that needs no pool),
// never a CNAME into the foreign pool, and the metrics count it; once the
// pool is free again the record answers from it. Before, the CNAME kept
// pointing into the empty pool (NODATA) indefinitely, reported only as
// records_refused.
func TestPoolTakenOverFallsBackToFailover(t *testing.T) {
	c, ext, pool, foreign := poolTakenOver(t, poolYAML, 500*time.Millisecond)
	guard := 30 * time.Second
	waitFor(t, guard, "/readyz names pool_conflict", func() bool {
		return strings.Contains(do(c.handler(), "GET", "/readyz", nil).Body.String(), "pool_conflict")
	})
	t.Logf("/readyz while held: %s", do(c.handler(), "GET", "/readyz", nil).Body.String())
	waitFor(t, guard, "app answered by its failover name", func() bool {
		got := zoneAnswer(ext, "app.example.test.")
		return len(got) == 1 && got[0] == "CNAME app.backup.example.net."
	})
	body := do(c.handler(), "GET", "/readyz", nil).Body.String()
	if !strings.Contains(body, "answering its failover name app.backup.example.net.") {
		t.Errorf("/readyz after the hold: %s", body)
	}
	if m := do(c.handler(), "GET", "/metrics", nil).Body.String(); !strings.Contains(m, `gslbkit_records_pool_conflict{state="failover"} 1`) {
		t.Errorf("metrics: %s", grepLines(m, "pool_conflict"))
	}
	// Retries of the pool (every hold) never point app into it while it
	// is taken.
	retries := c.poolRetries.Load()
	waitFor(t, guard, "three retries of the taken pool", func() bool {
		if got := zoneAnswer(ext, "app.example.test."); len(got) != 1 || got[0] != "CNAME app.backup.example.net." {
			t.Fatalf("during retries of the taken pool app answers %v", got)
		}
		return c.poolRetries.Load() >= retries+3
	})
	// The pool is freed: app answers from it again.
	if _, err := ext.DeleteRecords(context.Background(), "example.test.", foreign); err != nil {
		t.Fatal(err)
	}
	waitFor(t, guard, "app answered from its pool again", func() bool {
		got := strings.Join(zoneAnswer(ext, "app.example.test."), ",")
		return strings.Contains(got, "CNAME "+pool) && strings.Contains(got, "192.0.2.1")
	})
	waitFor(t, guard, "pool_conflict cleared", func() bool {
		return !strings.Contains(do(c.handler(), "GET", "/readyz", nil).Body.String(), "pool_conflict")
	})
}

// TestPoolEmptiedFallsBackAtOnce: a third party takes the pool name and
// deletes gslbd's addresses there. The name, a CNAME into the emptied
// pool, would answer NODATA for the whole hold: with nothing good left to
// keep, it answers its failover name at once. (Before: NODATA for the
// hold, 2 minutes by default.)
func TestPoolEmptiedFallsBackAtOnce(t *testing.T) {
	c, ext, _, _ := poolTakenOver(t, poolYAML, time.Hour) // far beyond the test's guard: only an emptied pool falls back
	guard := 30 * time.Second
	waitFor(t, guard, "app answered by its failover name long before the hold ends", func() bool {
		got := zoneAnswer(ext, "app.example.test.")
		return len(got) == 1 && got[0] == "CNAME app.backup.example.net."
	})
	if body := do(c.handler(), "GET", "/readyz", nil).Body.String(); !strings.Contains(body, "pool_conflict") {
		t.Errorf("/readyz after the fallback: %s", body)
	}
}

// poolTakenOver starts a controller publishing yaml's record (poolYAML) to an
// embedded zone used as an external provider, with the given dependency
// hold, waits for the record's CNAME to its pool, then plays the third
// party: gslbd's addresses and marker at the pool go, a stranger's record
// comes; it returns the pool's name and the stranger's records. The controller stops when the test ends.
func poolTakenOver(t *testing.T, yaml string, hold time.Duration) (c *controller, ext *memory.Provider, pool string, foreign []libdns.Record) {
	t.Helper()
	cfg, err := ParseConfig([]byte(withStateDir(yaml)))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ext, err = memory.New(memory.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.AddZone("example.test."); err != nil {
		t.Fatal(err)
	}
	c, err = newController(cfg, deps{prober: (&fakeProbers{}).prober, provider: ext}, newMetrics(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c.depHold = hold
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	guard := 30 * time.Second
	waitFor(t, guard, "app published as a CNAME to its pool", func() bool {
		got := zoneAnswer(ext, "app.example.test.")
		for _, g := range got {
			if p, ok := strings.CutPrefix(g, "CNAME "); ok && strings.Contains(strings.Join(got, ","), "192.0.2.1") {
				pool = p
				return true
			}
		}
		return false
	})
	relPool := libdns.RelativeName(pool, "example.test.")
	// The takeover: gslbd's addresses and marker at the pool go, a
	// stranger's record comes.
	recs, err := ext.GetRecords(ctx, "example.test.")
	if err != nil {
		t.Fatal(err)
	}
	var ours []libdns.Record
	for _, r := range recs {
		if n := r.RR().Name; n == relPool || n == "_gslb-owner."+relPool {
			ours = append(ours, r)
		}
	}
	if _, err := ext.DeleteRecords(ctx, "example.test.", ours); err != nil {
		t.Fatal(err)
	}
	foreign = []libdns.Record{libdns.TXT{Name: relPool, TTL: time.Minute, Text: "someone else's"}}
	if _, err := ext.AppendRecords(ctx, "example.test.", foreign); err != nil {
		t.Fatal(err)
	}
	return c, ext, pool, foreign
}

// TestPoolTakenOverWithoutFailoverRelocates: the third party empties the
// pool of a record without a failover name. The pool moves at once to
// app.pool-gslb.example.test. and the record's CNAME follows, so the name
// answers its address, never NODATA; /readyz names the relocation; once
// the original pool is freed the pool moves back and the relocated one
// goes. (Before: a CNAME into the emptied pool, NODATA until it was freed.)
func TestPoolTakenOverWithoutFailoverRelocates(t *testing.T) {
	y := strings.Replace(poolYAML, "    failover: app.backup.example.net.\n", "", 1)
	c, ext, pool, foreign := poolTakenOver(t, y, time.Hour) // only the emptied pool moves it
	guard := 30 * time.Second
	const moved = "app.pool-gslb.example.test."
	want := "192.0.2.1,CNAME " + moved
	waitFor(t, guard, "app answered through the relocated pool", func() bool {
		got := zoneAnswer(ext, "app.example.test.")
		if slices.Contains(got, "NOERROR") {
			t.Fatalf("app answers NODATA: %v", got)
		}
		return strings.Join(got, ",") == want
	})
	body := do(c.handler(), "GET", "/readyz", nil).Body.String()
	if !strings.Contains(body, "pool_conflict") || !strings.Contains(body, "its pool moved to "+moved) {
		t.Errorf("/readyz after the relocation: %s", body)
	}
	if m := do(c.handler(), "GET", "/metrics", nil).Body.String(); !strings.Contains(m, `gslbkit_records_pool_conflict{state="relocated"} 1`) {
		t.Errorf("metrics: %s", grepLines(m, "pool_conflict"))
	}
	// The pool is freed: it moves back (the relocated one goes after the
	// hold, an hour here).
	if _, err := ext.DeleteRecords(context.Background(), "example.test.", foreign); err != nil {
		t.Fatal(err)
	}
	waitFor(t, guard, "app answered from its own pool again", func() bool {
		got := zoneAnswer(ext, "app.example.test.")
		if slices.Contains(got, "NOERROR") {
			t.Fatalf("app answers NODATA while moving back: %v", got)
		}
		return strings.Join(got, ",") == "192.0.2.1,CNAME "+pool
	})
	if body := do(c.handler(), "GET", "/readyz", nil).Body.String(); !strings.Contains(body, "moving back from "+moved) {
		t.Errorf("/readyz while moving back: %s", body)
	}
}

// TestPoolRelocationMovesBackAndWithdraws: with a short hold, the relocated
// pool of a record without a failover name is withdrawn (its addresses and
// gslbd's marker) a hold after the pool moved back, and pool_conflict
// clears: nothing of the relocation is left at the provider.
func TestPoolRelocationMovesBackAndWithdraws(t *testing.T) {
	y := strings.Replace(poolYAML, "    failover: app.backup.example.net.\n", "", 1)
	c, ext, pool, foreign := poolTakenOver(t, y, 500*time.Millisecond)
	guard := 30 * time.Second
	const moved = "app.pool-gslb.example.test."
	waitFor(t, guard, "app answered through the relocated pool", func() bool {
		return strings.Join(zoneAnswer(ext, "app.example.test."), ",") == "192.0.2.1,CNAME "+moved
	})
	if _, err := ext.DeleteRecords(context.Background(), "example.test.", foreign); err != nil {
		t.Fatal(err)
	}
	waitFor(t, guard, "app answered from its own pool again", func() bool {
		got := zoneAnswer(ext, "app.example.test.")
		if slices.Contains(got, "NOERROR") {
			t.Fatalf("app answers NODATA while moving back: %v", got)
		}
		return strings.Join(got, ",") == "192.0.2.1,CNAME "+pool
	})
	waitFor(t, guard, "the relocated pool and its marker withdrawn, pool_conflict cleared", func() bool {
		recs, err := ext.GetRecords(context.Background(), "example.test.")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if strings.Contains(r.RR().Name, "pool-gslb") {
				return false
			}
		}
		return !strings.Contains(do(c.handler(), "GET", "/readyz", nil).Body.String(), "pool_conflict")
	})
	if got := strings.Join(zoneAnswer(ext, "app.example.test."), ","); got != "192.0.2.1,CNAME "+pool {
		t.Errorf("after the withdraw app answers %s", got)
	}
}
