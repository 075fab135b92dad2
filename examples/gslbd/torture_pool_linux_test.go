//go:build linux

package main

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/internal/testbind"
)

// bindPoolSeen is one answer the BIND watcher saw.
type bindPoolSeen struct {
	at    time.Time
	rcode int
	got   []string
}

// startBindPool starts a real BIND and gslbd publishing app.example.test.
// (two live backends, failover name failover, "" for none) to it over RFC
// 2136 with the dependency hold shortened to hold; it waits for the name's
// CNAME to its pool and returns BIND, the daemon and the pool's name.
func startBindPool(t *testing.T, failover string, hold time.Duration) (*testbind.Server, *daemon, string) {
	t.Helper()
	bind := testbind.Start(t, "example.test.")
	old := dependencyHold
	dependencyHold = hold
	t.Cleanup(func() { dependencyHold = old })
	bs := []*backend{newBackend(t), newBackend(t)}
	d := startDaemon(t, bindControllerYAML(bind, bs, failover))
	var pool string
	waitFor(t, 60*time.Second, "BIND answers both addresses through the pool", func() bool {
		got, _ := answer(bind.Addr, "app.example.test.")
		if !slices.Equal(addrsOf(got), []string{"192.0.2.1", "192.0.2.2"}) {
			return false
		}
		for _, g := range got {
			if p, ok := strings.CutPrefix(g, "CNAME "); ok {
				pool = p
			}
		}
		return pool != ""
	})
	return bind, d, pool
}

// watchBind asks BIND for name every 20 ms (the torture watcher's pace)
// until the returned function is called, which returns what it saw.
func watchBind(bind *testbind.Server, name string) func() []bindPoolSeen {
	var (
		mu   sync.Mutex
		obs  []bindPoolSeen
		stop = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, rcode := answer(bind.Addr, name)
			if rcode >= 0 {
				mu.Lock()
				obs = append(obs, bindPoolSeen{time.Now(), rcode, got})
				mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond) // the watcher's pace
		}
	})
	return func() []bindPoolSeen {
		close(stop)
		wg.Wait()
		return obs
	}
}

// bindUpdate sends m, an RFC 2136 update, to BIND with the zone's key: a
// third party writing at the provider.
func bindUpdate(t *testing.T, bind *testbind.Server, m *dns.Msg) {
	t.Helper()
	key := dns.Fqdn(bind.KeyName)
	m.SetTsig(key, dns.HmacSHA256, 300, time.Now().Unix())
	c := &dns.Client{Net: "tcp", TsigSecret: map[string]string{key: bind.Secret}, Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, bind.Addr)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		t.Fatalf("the third party's update: %v %v", err, r)
	}
}

// tortureItem12 is the walk's RFC 2136 variant (item 12): gslbd publishes
// to a real BIND (the name a CNAME to its pool name, which holds the
// addresses and gslbd's owner marker); a third party takes the pool over
// by writing its own owner marker there (RFC 2136, with the zone's key).
// Watching BIND every 20 ms: the name keeps its last good answer (its
// addresses, through the pool) for the documented hold, then answers its
// failover name; it never answers NODATA, NXDOMAIN or another failure;
// /readyz names pool_conflict from the takeover on. The hold is shortened
// to 3 s (DefaultDependencyHold is 2 minutes).
func tortureItem12(t *testing.T) {
	bind, d, pool := startBindPool(t, "app.backup.example.net.", 3*time.Second)
	const name = "app.example.test."
	last := []string{"192.0.2.1", "192.0.2.2"}
	guard := 60 * time.Second
	done := watchBind(bind, name)
	var obs []bindPoolSeen
	defer func() {
		if obs == nil {
			done()
		}
	}()

	// The takeover: another owner's marker at the pool name.
	marker := "_gslb-owner." + pool
	m := new(dns.Msg)
	m.SetUpdate(bind.Zone)
	m.RemoveRRset([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: marker, Rrtype: dns.TypeTXT, Class: dns.ClassINET}}})
	m.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: marker, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{"someone-else"}}})
	bindUpdate(t, bind, m)
	took := time.Now()

	waitFor(t, guard, "/readyz names pool_conflict", func() bool {
		code, body := get(t, d.http, "/readyz")
		return code == 503 && strings.Contains(body, "pool_conflict")
	})
	failover := []string{"CNAME app.backup.example.net."}
	waitFor(t, guard, "BIND answers the failover name", func() bool {
		got, _ := answer(bind.Addr, name)
		return slices.Equal(got, failover)
	})
	fell := time.Now()
	if code, body := get(t, d.http, "/readyz"); code != 503 || !strings.Contains(body, "pool_conflict") {
		t.Errorf("/readyz after the fallback: %d %s", code, body)
	}
	time.Sleep(time.Second) // the watcher sees the fallback stay
	obs = done()
	lastGood := time.Time{}
	for _, o := range obs {
		switch {
		case o.rcode != dns.RcodeSuccess || len(o.got) == 0:
			t.Errorf("at +%v after the takeover BIND answered %s %v (never NODATA or a failure)", o.at.Sub(took).Round(time.Millisecond), dns.RcodeToString[o.rcode], o.got)
		case slices.Equal(addrsOf(o.got), last) && slices.Contains(o.got, "CNAME "+pool):
			lastGood = o.at
		case slices.Equal(o.got, failover):
		default:
			t.Errorf("at +%v after the takeover BIND answered %v: neither the last good answer nor the failover name", o.at.Sub(took).Round(time.Millisecond), o.got)
		}
	}
	if hold := lastGood.Sub(took); hold < dependencyHold-500*time.Millisecond {
		t.Errorf("the last good answer held %v after the takeover, the documented hold is %v", hold, dependencyHold)
	}
	t.Logf("last good answer until +%v, failover name from +%v (hold %v); %d answers watched", lastGood.Sub(took).Round(time.Millisecond), fell.Sub(took).Round(time.Millisecond), dependencyHold, len(obs))
}

// tortureItem12b: as item 12, for a record without a failover name, and a
// third party that also deletes gslbd's addresses at the pool (the name, a
// CNAME into the emptied pool, would answer NODATA until the pool is
// freed). The pool moves at once to app.pool-gslb.example.test., the CNAME
// following it: from the first answer through it on, BIND answers the
// addresses again and never NODATA or a failure; /readyz names the
// relocation. The hold is an hour: only the emptied pool moves it. Then the
// third party frees the pool, and the pool moves back.
func tortureItem12b(t *testing.T) {
	bind, d, pool := startBindPool(t, "", time.Hour)
	const name = "app.example.test."
	const moved = "app.pool-gslb.example.test."
	guard := 60 * time.Second
	done := watchBind(bind, name)
	var obs []bindPoolSeen
	defer func() {
		if obs == nil {
			done()
		}
	}()
	// The takeover: gslbd's marker and addresses at the pool go, a
	// stranger's record comes.
	m := new(dns.Msg)
	m.SetUpdate(bind.Zone)
	m.RemoveName([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: "_gslb-owner." + pool, Rrtype: dns.TypeANY, Class: dns.ClassANY}}})
	m.RemoveName([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: pool, Rrtype: dns.TypeANY, Class: dns.ClassANY}}})
	m.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: pool, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{"someone else's"}}})
	bindUpdate(t, bind, m)
	took := time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gslbd's log:\n%s", d.stderr.String())
		}
	})
	waitFor(t, guard, "BIND answers the addresses through the relocated pool", func() bool {
		got, _ := answer(bind.Addr, name)
		return slices.Contains(got, "CNAME "+moved) && slices.Equal(addrsOf(got), []string{"192.0.2.1", "192.0.2.2"})
	})
	if code, body := get(t, d.http, "/readyz"); code != 503 || !strings.Contains(body, "its pool moved to "+moved) {
		t.Errorf("/readyz after the relocation: %d %s", code, body)
	}
	time.Sleep(time.Second) // the watcher sees the relocation stay
	// The third party frees the pool: it moves back.
	m = new(dns.Msg)
	m.SetUpdate(bind.Zone)
	m.RemoveName([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: pool, Rrtype: dns.TypeANY, Class: dns.ClassANY}}})
	bindUpdate(t, bind, m)
	freed := time.Now()
	waitFor(t, guard, "BIND answers the addresses through the original pool again", func() bool {
		got, _ := answer(bind.Addr, name)
		return slices.Contains(got, "CNAME "+pool) && slices.Equal(addrsOf(got), []string{"192.0.2.1", "192.0.2.2"})
	})
	time.Sleep(time.Second)
	obs = done()
	relocated, nodata := time.Time{}, 0
	for _, o := range obs {
		through := slices.Equal(addrsOf(o.got), []string{"192.0.2.1", "192.0.2.2"})
		switch {
		case through && slices.Contains(o.got, "CNAME "+moved) && relocated.IsZero():
			relocated = o.at
		case o.at.Before(took):
		case o.rcode == dns.RcodeSuccess && through:
		case relocated.IsZero() || o.at.Before(relocated):
			nodata++ // the third party emptied the pool: until gslbd moves it
		default:
			t.Errorf("at +%v after the takeover (the pool relocated at +%v, freed at +%v) BIND answered %s %v", o.at.Sub(took).Round(time.Millisecond), relocated.Sub(took).Round(time.Millisecond), freed.Sub(took).Round(time.Millisecond), dns.RcodeToString[o.rcode], o.got)
		}
	}
	t.Logf("emptied pool answered NODATA %d times until the relocation at +%v; freed at +%v; %d answers watched", nodata, relocated.Sub(took).Round(time.Millisecond), freed.Sub(took).Round(time.Millisecond), len(obs))
}
