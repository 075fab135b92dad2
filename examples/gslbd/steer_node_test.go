package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
)

const steerTestYAML = `ownerId: test
zone: example.test.
replication: {secret: 0123456789abcdef0123}
probe:
  policy: {interval: 10s, timeout: 1s, warningThreshold: 1, criticalThreshold: 3}
records:
  - name: lat.example.test.
    ttl: 5s
    steps: [{latency: {switchMargin: 20, switchAfter: 2}}]
    addresses: &addrs
      - {ip: 192.0.2.1, regions: [eu], probeAddr: "10.0.0.1:80"}
      - {ip: 192.0.2.2, regions: [us], probeAddr: "10.0.0.2:80"}
      - {ip: 192.0.2.3, regions: [eu], probeAddr: "10.0.0.3:80"}
  - name: shed.example.test.
    ttl: 5s
    steps: [{loadShed: {pools: region, low: 0.5, high: 1.5, v4Bits: 24}}]
    addresses: *addrs
node: {url: "http://controller/replication"}
`

// zoneAnswerFrom is zoneAnswer for a query on behalf of client's /24
// (EDNS Client Subnet).
func zoneAnswerFrom(z *memory.Provider, name, client string) []string {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	o.SetUDPSize(1232)
	p := netip.PrefixFrom(netip.MustParseAddr(client), 24).Masked()
	o.Option = []dns.EDNS0{&dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IP(p.Addr().AsSlice())}}
	m.Extra = []dns.RR{o}
	q, err := m.Pack()
	if err != nil {
		return []string{err.Error()}
	}
	r := new(dns.Msg)
	if err := r.Unpack(z.RespondUDP(q, make([]byte, 4096), netip.MustParseAddr("127.0.0.1"))); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	slices.Sort(out)
	if out == nil {
		out = []string{dns.RcodeToString[r.Rcode]}
	}
	return out
}

// steerClients are client addresses in 32 distinct /24s.
var steerClients = func() []string {
	var out []string
	for i := range 32 {
		out = append(out, fmt.Sprintf("10.0.%d.7", i))
	}
	return out
}()

// steerDiff lists where a node answers otherwise than the controller.
func (c *cluster) steerDiff() []string {
	var out []string
	for _, name := range []string{"lat.example.test.", "shed.example.test."} {
		for _, cl := range steerClients {
			want := zoneAnswerFrom(c.ctl.zone, name, cl)
			for i, n := range c.nodes {
				if got := zoneAnswerFrom(n.zone, name, cl); !slices.Equal(got, want) {
					out = append(out, name+" from "+cl+": controller "+strings.Join(want, ",")+", node-"+string(rune('0'+i))+" "+strings.Join(got, ","))
				}
			}
		}
	}
	return out
}

// TestNodeSteersAsController: with a latency step and a loadShed step,
// after the controller's tables change (a latency switch, a pool's load
// raised), both nodes answer what the controller answers for every client
// network within one sync interval, and at once after a notify. Before,
// nodes had no steering data and answered every address.
func TestNodeSteersAsController(t *testing.T) {
	const syncEvery = 30 * time.Second
	synctest.Test(t, func(t *testing.T) {
		c := newClusterWith(t, steerTestYAML, syncEvery, true)
		var mu sync.Mutex
		rtt := map[string]time.Duration{"192.0.2.1": 40 * time.Millisecond, "192.0.2.2": 50 * time.Millisecond, "192.0.2.3": 60 * time.Millisecond}
		setRTT := func(ip string, d time.Duration) { mu.Lock(); rtt[ip] = d; mu.Unlock() }
		// The controller's probe rounds feed these too (latencyLoop).
		c.ctl.steer.rtt = func(id string) (time.Duration, bool) {
			mu.Lock()
			defer mu.Unlock()
			_, ip, _ := strings.Cut(id, "/")
			d, ok := rtt[ip]
			return d, ok
		}
		feed := func() { c.ctl.feedLatency(c.ctl.steer.rtt) }
		stop := c.run(t)
		defer stop()
		for start := time.Now(); !c.ctl.isAnswering() || zoneAnswer(c.ctl.zone, "lat.example.test.")[0] == "NXDOMAIN"; {
			if time.Since(start) > time.Minute {
				t.Fatal("the controller never published")
			}
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		for _, n := range c.nodes {
			if rec := do(n.handler(), "GET", "/readyz", nil); strings.Contains(rec.Body.String(), "steering_not_copied") {
				t.Errorf("node /readyz after its first sync: %s", rec.Body.String())
			}
		}
		// The controller's tables change: 192.0.2.2 measured fastest for
		// two rounds (the hysteresis switches), region eu loaded so a
		// share of client networks is shed to us.
		feed()
		setRTT("192.0.2.2", 5*time.Millisecond)
		feed()
		feed()
		c.ctl.steer.load.Set("eu", 1.0)
		if got := zoneAnswerFrom(c.ctl.zone, "lat.example.test.", "198.51.100.7"); !slices.Equal(got, []string{"192.0.2.2"}) {
			t.Fatalf("controller's latency answer %v, want 192.0.2.2", got)
		}
		changed := time.Now()
		for d := c.steerDiff(); len(d) > 0; d = c.steerDiff() {
			if time.Since(changed) > syncEvery {
				t.Fatalf("nodes do not answer as the controller within one sync (%v):\n%s", syncEvery, strings.Join(d, "\n"))
			}
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
		}
		t.Logf("nodes steer as the controller %v after its change (sync interval %v)", time.Since(changed), syncEvery)
		shedSome := false
		for _, cl := range steerClients {
			if got := zoneAnswerFrom(c.nodes[0].zone, "shed.example.test.", cl); slices.Equal(got, []string{"192.0.2.2"}) {
				shedSome = true
			}
		}
		if !shedSome {
			t.Errorf("no client network was shed from eu on the node: the test does not exercise loadShed (load %v)", c.ctl.steer.load.Loads())
		}

		// A notify (POST /api/notify's path) brings a new change at once.
		c.ctl.steer.load.Set("eu", 0)
		setRTT("192.0.2.2", 100*time.Millisecond)
		setRTT("192.0.2.3", time.Millisecond)
		feed()
		feed()
		c.ctl.notifyAll(t.Context())
		synctest.Wait()
		if d := c.steerDiff(); len(d) > 0 {
			t.Fatalf("nodes did not follow the notify:\n%s", strings.Join(d, "\n"))
		}
		if got := zoneAnswerFrom(c.nodes[1].zone, "lat.example.test.", "8.8.8.8"); !slices.Equal(got, []string{"192.0.2.3"}) {
			t.Errorf("node's latency answer after the notify %v, want 192.0.2.3", got)
		}
	})
}

// TestNodeRefusesForgedSteering: a steering reply that is unsigned, or
// signed with another secret, is refused; the node keeps its last copy
// and says why in its log, not on /readyz once it had one. GET
// /replication/steering without the secret is 401.
func TestNodeRefusesForgedSteering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClusterWith(t, steerTestYAML, time.Hour, false)
		ctlH := c.net.handlers["controller"]
		if rec := do(ctlH, "GET", "/replication/steering", nil); rec.Code != http.StatusUnauthorized && rec.Code != http.StatusServiceUnavailable {
			t.Errorf("unsigned GET /replication/steering: %d %s", rec.Code, rec.Body.String())
		}
		if rec := do(c.nodes[0].handler(), "GET", "/readyz", nil); !strings.Contains(rec.Body.String(), "steering_not_copied") {
			t.Errorf("/readyz of a node that never copied the steering data: %s", rec.Body.String())
		}
		stop := c.run(t)
		defer stop()
		for start := time.Now(); !c.ctl.isAnswering(); {
			if time.Since(start) > time.Minute {
				t.Fatal("the controller never published")
			}
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		if rec := do(ctlH, "GET", "/replication/steering", nil); rec.Code != http.StatusUnauthorized {
			t.Errorf("unsigned GET /replication/steering: %d %s", rec.Code, rec.Body.String())
		}
		n := c.nodes[0]
		n.replica.Notify()
		synctest.Wait()
		n.mu.Lock()
		had := n.steeredAt
		n.mu.Unlock()
		if had.IsZero() {
			t.Fatal("the node never copied the steering data")
		}
		other := replication.HandlerConfig{Secret: "another-secret-0123456789"}
		forged := `{"latency":[{"record":"lat.example.test.","step":0,"state":{"chosen":"192.0.2.3"}}],"load":{"eu":9}}`
		for _, sign := range []bool{false, true} {
			c.net.mu.Lock()
			c.net.handlers["controller"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/steering") {
					if sign {
						w.Header().Set(replication.SignatureHeader, other.SignReply(r.Header.Get(replication.NonceHeader), []byte(forged)))
					}
					io.WriteString(w, forged)
					return
				}
				ctlH.ServeHTTP(w, r)
			})
			c.net.mu.Unlock()
			n.replica.Notify()
			synctest.Wait()
			n.mu.Lock()
			err, at := n.steerErr, n.steeredAt
			n.mu.Unlock()
			if err == nil || !strings.Contains(err.Error(), "signature") || at != had {
				t.Errorf("signed with another secret %v: err %v, copied at %v (before %v)", sign, err, at, had)
			}
			if n.steer.load.Load("eu") == 9 || n.steer.latency[0].table.Chosen() == "192.0.2.3" {
				t.Errorf("signed with another secret %v: the node took the forged data", sign)
			}
			if rec := do(n.handler(), "GET", "/readyz", nil); strings.Contains(rec.Body.String(), "steering_not_copied") {
				t.Errorf("/readyz names steering_not_copied though the node has a copy: %s", rec.Body.String())
			}
		}
	})
}

// FuzzSteeringApply: whatever a (signed) steering reply holds, a node
// copies it without panicking and its steps still answer among the
// record's addresses.
func FuzzSteeringApply(f *testing.F) {
	f.Add([]byte(`{"latency":[{"record":"lat.example.test.","step":0,"state":{"chosen":"192.0.2.2","rtt":{"192.0.2.2":5000000}}}],"load":{"eu":1}}`))
	f.Add([]byte(`{"latency":[{"record":"lat.example.test.","step":0,"state":{"chosen":"nowhere","rtt":{"":-1,"x":9}}}],"load":{"eu":-1e308,"us":1e308}}`))
	f.Add([]byte(`{"latency":null,"load":null}`))
	cfg, err := ParseConfig([]byte(withStateDir(steerTestYAML)))
	if err != nil {
		f.Fatal(err)
	}
	if err := cfg.ValidateNode(); err != nil {
		f.Fatal(err)
	}
	zone, err := memory.New(memory.DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	st := newSteering()
	kinds, err := installAnswersWith(zone, cfg, st)
	if err != nil {
		f.Fatal(err)
	}
	var rrs []libdns.Record
	for _, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		rrs = append(rrs, libdns.Address{Name: "x", TTL: 5 * time.Second, IP: netip.MustParseAddr(ip)})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v steeringView
		if json.Unmarshal(data, &v) != nil {
			return
		}
		st.apply(v)
		for _, name := range []string{"lat.example.test.", "shed.example.test."} {
			fn := failover.StepChain(kinds[name].steps...)
			for _, cl := range []string{"10.0.0.0/24", "2001:db8::/56", "0.0.0.0/0"} {
				out, _ := fn(netip.MustParsePrefix(cl), name, "A", rrs)
				for _, r := range out {
					if !slices.ContainsFunc(rrs, func(x libdns.Record) bool { return x.RR() == r.RR() }) {
						t.Fatalf("%s for %s: %v is not one of the record's", name, cl, r)
					}
				}
			}
		}
	})
}
