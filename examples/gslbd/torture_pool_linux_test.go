//go:build linux

package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/internal/testbind"
)

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
	bind := testbind.Start(t, "example.test.")
	old := dependencyHold
	dependencyHold = 3 * time.Second
	t.Cleanup(func() { dependencyHold = old })
	bs := []*backend{newBackend(t), newBackend(t)}
	var recs strings.Builder
	recs.WriteString("  - name: app.example.test.\n    ttl: 1s\n    failover: app.backup.example.net.\n    addresses:\n")
	for i, b := range bs {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, probeAddr: %q}\n", i+1, b.addr())
	}
	provider := fmt.Sprintf(`provider:
  type: rfc2136
  resyncInterval: 1s
  rfc2136: {server: %q, keyName: %q, keyAlg: %q, secret: %q}`, bind.Addr, bind.KeyName, bind.KeyAlg, bind.Secret)
	yaml := strings.Replace(controllerYAML(provider, recs.String()), `dns: {addr: "127.0.0.1:0"}`, `dns: {addr: ""}`, 1)
	d := startDaemon(t, yaml)

	const name = "app.example.test."
	last := []string{"192.0.2.1", "192.0.2.2"}
	guard := 60 * time.Second
	var pool string
	waitFor(t, guard, "BIND answers both addresses through the pool", func() bool {
		got, _ := answer(bind.Addr, name)
		if !slices.Equal(addrsOf(got), last) {
			return false
		}
		for _, g := range got {
			if p, ok := strings.CutPrefix(g, "CNAME "); ok {
				pool = p
			}
		}
		return pool != ""
	})

	type seen struct {
		at    time.Time
		rcode int
		got   []string
	}
	var (
		mu   sync.Mutex
		obs  []seen
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
				obs = append(obs, seen{time.Now(), rcode, got})
				mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond) // the watcher's pace
		}
	})
	defer func() { close(stop); wg.Wait() }()

	// The takeover: another owner's marker at the pool name.
	marker := "_gslb-owner." + pool
	m := new(dns.Msg)
	m.SetUpdate(bind.Zone)
	m.RemoveRRset([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: marker, Rrtype: dns.TypeTXT, Class: dns.ClassINET}}})
	m.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: marker, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{"someone-else"}}})
	key := dns.Fqdn(bind.KeyName)
	m.SetTsig(key, dns.HmacSHA256, 300, time.Now().Unix())
	c := &dns.Client{Net: "tcp", TsigSecret: map[string]string{key: bind.Secret}, Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, bind.Addr)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		t.Fatalf("the takeover's update: %v %v", err, r)
	}
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
	mu.Lock()
	defer mu.Unlock()
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
