package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gslbkit/gslb/examples/internal/regionview"
	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/internal/testmoto"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/record"
)

// regionFailover takes every gateway of cluster us down and up again:
// every region answers the failover chain, then its own gateways again.
func (h *harness) regionFailover(t *testing.T, store string, us *testCluster, interval, healthy, refresh, queue, work time.Duration) {
	setReady(t, us, "app", false) // the Gateway's route backends
	setReady(t, us, "lb", false)
	failover := want(failoverN, cat(euGW1, euGW2)...)
	d := h.waitAnswers("us-east down", 60*time.Second, map[string]answer{"eu-west": failover, "us-east": failover})
	// us-1's leader stops beating on the watch event; its last beat is
	// stale after healthy + skew (one interval); eu-1's leader reads
	// every interval; with a rate limit, its write waits its turn.
	report(t, store+": region down → failover", d, healthy+2*interval+refresh+queue+work)
	setReady(t, us, "app", true)
	setReady(t, us, "lb", true)
	d = h.waitAnswers("us-east back", 60*time.Second, normalAnswers())
	// The next beat (within an interval), eu-1's next read; with a rate
	// limit, the beat and eu-1's write each wait their turn.
	report(t, store+": region back", d, 2*interval+refresh+2*queue+work)
}

// lateKind is which write of the leader lateWrite holds.
type lateKind string

const (
	lateRecords lateKind = "records" // its write of the regional record
	lateBeats   lateKind = "beats"   // its write of its beat in the local zone
)

// lateWrite freezes the leader of a and b in the middle of a write (of
// the regional record, or of its beat) and cuts it off its API server;
// the other replica takes over and publishes; the old leader's write,
// resumed, must be refused by the store and leave the new leader's
// records (read through local, eu-west's view of the store). The
// records and the beats of a term share one fence, so while one write
// is held the term's other writes wait for it, as in a frozen process.
func (h *harness) lateWrite(t *testing.T, store string, kind lateKind, a, b *testReplica, local *view) {
	old, next := a, b
	h.waitFor("a leader in eu-1", 30*time.Second, func() bool { return a.leading() || b.leading() })
	if !a.leading() {
		old, next = b, a
	}
	zone := "local." + domain + "."
	beatName := "health-001-" + old.cl.name
	// isHeld tells the write to hold: the regional record (after gw2 goes
	// not ready, the leader is about to publish gw1 alone), or the next
	// beat.
	isHeld := func(z string, recs []libdns.Record) bool {
		if z != zone {
			return false
		}
		for _, r := range recs {
			rr := r.RR()
			switch kind {
			case lateRecords:
				if rr.Name == "edge" && (rr.Type == "A" || rr.Type == "AAAA") {
					return true
				}
			case lateBeats:
				if strings.EqualFold(rr.Name, beatName) && rr.Type == "TXT" {
					return true
				}
			}
		}
		return false
	}
	beatNow := func() string {
		recs, err := local.GetRecords(ctxb, zone)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if rr := r.RR(); strings.EqualFold(rr.Name, beatName) && rr.Type == "TXT" {
				return rr.Data
			}
		}
		return ""
	}
	blocked, release := make(chan struct{}), make(chan struct{})
	lateErr := make(chan error, 1)
	var heldBeat string
	var once, onceAfter sync.Once
	// The held write is on the wire when the process freezes: the
	// end of its term cannot call it back.
	freeze := func(z string, recs []libdns.Record) bool {
		held := false
		if isHeld(z, recs) {
			once.Do(func() {
				held = true
				for _, r := range recs {
					if rr := r.RR(); strings.EqualFold(rr.Name, beatName) && rr.Type == "TXT" {
						heldBeat = rr.Data
					}
				}
				close(blocked)
				<-release
			})
		}
		return held
	}
	// The outcome of the held write: the first matching write to end once
	// it is held (the term's fenced writes take turns, so a write that
	// began before it ended before it began).
	after := func(z string, recs []libdns.Record, err error) {
		select {
		case <-blocked:
		default:
			return
		}
		if isHeld(z, recs) {
			onceAfter.Do(func() { lateErr <- err })
		}
	}
	old.after.Store(&after)
	old.freeze.Store(&freeze)
	if kind == lateRecords {
		setReady(t, old.cl, "gw2", false)
	}
	<-blocked
	beatBefore := beatNow()
	// The frozen leader's API server is gone as far as it knows; the
	// other replica takes over once the lease expires.
	cut := time.Now()
	old.px.cut()
	d := h.waitFor("takeover", 30*time.Second, next.leading)
	// client-go's candidate retries every retry period, jittered by up
	// to 1.2 × more: it sees the last renewal up to one jittered period
	// late and acquires up to one after the lease expires.
	report(t, fmt.Sprintf("%s: leader frozen (%s) → takeover", store, kind), d, tLease+2*tJitter+tWork)
	switch kind {
	case lateRecords:
		// The new leader publishes what the old one was about to (gw1
		// alone); then gw2 recovers and it publishes both. (Waiting for
		// gw1 alone first: the zone answered both before, since the old
		// leader's write is held.)
		h.waitAnswers("new leader publishes gw1 alone", 60*time.Second, map[string]answer{"eu-west": want(regionalN, euGW1...)})
		setReady(t, old.cl, "gw2", true)
		h.waitAnswers("new leader publishes", 60*time.Second, normalAnswers())
	case lateBeats:
		// The new leader beats (the old one's beat is held).
		h.waitFor("the new leader's beat", 30*time.Second, func() bool { return beatNow() != beatBefore })
	}
	t.Logf("new leader's write %v after the cut", time.Since(cut).Round(time.Millisecond))
	// The old leader resumes: its late write carries its older token.
	close(release)
	err := <-lateErr
	var fenced interface{ Fenced() bool }
	if !errors.Is(err, record.ErrFenced) && !(errors.As(err, &fenced) && fenced.Fenced()) {
		t.Fatalf("the deposed leader's late write of its %s: %v, want it refused (fenced)", kind, err)
	}
	t.Logf("the deposed leader's late write of its %s: %v", kind, err)
	switch kind {
	case lateRecords:
		recs, err := local.GetRecords(ctxb, zone)
		if err != nil {
			t.Fatal(err)
		}
		got := addrsAt(recs, zone, regionalN)
		sortAddrs(got)
		if len(got) != 4 {
			t.Fatalf("regional record after the late write: %v, want the new leader's 4 addresses", got)
		}
	case lateBeats:
		if got := beatNow(); got == heldBeat {
			t.Fatalf("beat after the late write: %q, the deposed leader's", got)
		}
	}
	if n := testutil.ToFloat64(old.r.met.fenced); n < 1 {
		t.Errorf("gslbkit_writes_fenced_total of the old leader = %v, want ≥ 1", n)
	}
	old.freeze.Store(nil)
	old.after.Store(nil)
	old.px.heal()
	h.waitAnswers("after the old leader resumed", 30*time.Second, normalAnswers())
}

// storeCase is an external DNS store the controllers write to instead of
// the embedded zone: its flags, and a provider of it for the test's reads.
type storeCase struct {
	name     string
	args     []string
	p        store
	interval time.Duration
	healthy  time.Duration
	refresh  time.Duration // the region servers' copy of the store
	// queue is how long a plan may wait for the reconciler's rate limit.
	queue time.Duration
	// work replaces tWork: the store's round trips (a plan's reads and
	// writes, the region servers' copies) are more of the work the
	// configuration does not bound.
	work time.Duration
	// lateWrite says why the late-write scenario cannot be shown against
	// this store, when it cannot.
	noLateWrite string
}

// storeScenarios runs replicas writing to sc (eu-1: two, us-1: one, on a
// Lease of their own) and the scenarios: a region down and back, and a
// deposed leader's late write. The DNS answers come from region servers
// that copy the store every tRefresh.
func (h *harness) storeScenarios(t *testing.T, sc storeCase) {
	eu, us := h.clusters[0], h.clusters[1]
	n := newNames(domain)
	saved := h.servers
	ctx, cancel := context.WithCancel(h.ctx)
	var wg sync.WaitGroup
	h.servers = map[string]*regionview.Server{}
	var replicas []*testReplica
	defer func() {
		for _, tr := range replicas {
			tr.stop()
		}
		cancel()
		wg.Wait()
		h.servers = saved
		h.provider, h.interval, h.healthy = nil, 0, 0
	}()
	for _, region := range []string{"eu-west", "us-east"} {
		v, err := subtreeView(sc.p, n, region)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newRegionServer(v, n, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h.servers[region] = s
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Run(ctx, sc.refresh) }()
	}
	h.provider = append(sc.args, "-lease-name", "gslb-"+sc.name)
	h.interval, h.healthy = sc.interval, sc.healthy
	a := h.startReplica(eu, sc.name+"-eu-a")
	b := h.startReplica(eu, sc.name+"-eu-b")
	u := h.startReplica(us, sc.name+"-us-a")
	replicas = append(replicas, a, b, u)
	d := h.waitAnswers(sc.name+": start", 60*time.Second, normalAnswers())
	t.Logf("%s: converged from start in %v", sc.name, d.Round(time.Millisecond))
	t.Run("region-failover", func(t *testing.T) {
		h.regionFailover(t, sc.name, us, sc.interval, sc.healthy, sc.refresh, sc.queue, sc.work)
	})
	t.Run("late-write", func(t *testing.T) {
		if sc.noLateWrite != "" {
			t.Skip(sc.noLateWrite)
		}
		local, err := subtreeView(sc.p, n, "eu-west")
		if err != nil {
			t.Fatal(err)
		}
		h.lateWrite(t, sc.name, lateRecords, a, b, local)
		h.lateWrite(t, sc.name, lateBeats, a, b, local)
	})
}

// bindCase starts BIND (named) serving the deployment's zone, updated
// and transferred with a TSIG key.
func bindCase(t *testing.T) storeCase {
	srv := testbind.Start(t, domain)
	c := rfc2136.DefaultConfig()
	c.Server, c.KeyName, c.KeyAlg, c.Secret = srv.Addr, srv.KeyName, srv.KeyAlg, srv.Secret
	p, err := rfc2136.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return storeCase{
		name: "rfc2136",
		args: []string{"-provider", "rfc2136", "-rfc2136-server", srv.Addr, "-rfc2136-key-name", srv.KeyName,
			"-rfc2136-key-alg", srv.KeyAlg, "-rfc2136-secret", srv.Secret},
		p: p, interval: tInterval, healthy: tHealthy, refresh: tRefresh,
		// A plan reads the zone by AXFR (twice: the global zone and the
		// region's subtree) and updates it; each copy transfers it twice.
		work: 400 * time.Millisecond,
	}
}

// motoCase starts moto_server (the Route 53 emulator) on 127.0.0.1 and
// creates the deployment's hosted zone; it skips when moto_server is not
// installed, unless GSLBKIT_REQUIRE_MOTO=1. A Route 53 reconciler calls
// at most twice a second (record.Route53Config); the records and the beats
// share that limit (the beats go through the reconciler's fenced store), so
// the interval is 2 s here (beats fresh for 8 s). A plan's calls wait their turn: a plan in
// both zones reads and writes each, 4 calls at 2 a second, 2 s. The
// region servers copy the zone every 250 ms.
func motoCase(t *testing.T) storeCase {
	p, id, err := testmoto.Start(t).Provider(context.Background(), domain+".")
	if err != nil {
		t.Fatal(err)
	}
	return storeCase{
		name: "route53", args: []string{"-provider", "route53", "-route53-zone-id", id},
		p: p, interval: 2 * time.Second, healthy: 8 * time.Second, refresh: 250 * time.Millisecond, queue: 2 * time.Second,
		work: time.Second, // moto's API calls
		noLateWrite: "moto 5.2.1 checks a change batch's DELETE against every RRset the zone ever held, not its current values, " +
			"and deletes by name and type: the deposed leader's batch (DELETE its old fence, CREATE the next) replaces the newer " +
			"leader's fence and lands. Route 53 refuses it (a DELETE must match the current values): provider/route53's " +
			"TestFencedReconcilersFake shows the refusal against a fake that follows Route 53's documentation",
	}
}
