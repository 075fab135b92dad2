package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/probecheck"
	"github.com/gslbkit/gslb/provider/memory"
)

// inProcess is an http.RoundTripper that hands each request to the handler
// registered for its host, with no sockets, so replication runs inside a
// synctest bubble. A host that is down fails like an unreachable server.
type inProcess struct {
	mu       sync.Mutex
	handlers map[string]http.Handler
	down     map[string]bool
}

func (p *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	p.mu.Lock()
	h, down := p.handlers[req.URL.Host], p.down[req.URL.Host]
	p.mu.Unlock()
	if h == nil || down {
		return nil, errors.New("in-process transport: " + req.URL.Host + " unreachable")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

func (p *inProcess) setDown(host string, down bool) {
	p.mu.Lock()
	p.down[host] = down
	p.mu.Unlock()
}

// fakeProbers are in-memory probers whose answer a test switches per address.
type fakeProbers struct{ failing sync.Map } // addr → bool

func (f *fakeProbers) prober(_ probecheck.Spec, addr string) (probe.Prober, error) {
	return probe.ProberFunc(func(context.Context) probe.Result {
		if v, ok := f.failing.Load(addr); ok && v.(bool) {
			return probe.Result{Status: probe.FailNow, Kind: probe.KindStatus, Code: 503, Detail: "status 503"}
		}
		return probe.Result{Status: probe.Pass, Latency: time.Millisecond}
	}), nil
}

// zoneAnswer asks a zone directly (no resolver, no TTL term) for name's A
// records.
func zoneAnswer(z *memory.Provider, name string) []string {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	r := z.Respond(m, netip.MustParseAddr("127.0.0.1"), false)
	var out []string
	if r == nil {
		return nil
	}
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.CNAME:
			out = append(out, "CNAME "+rr.Target)
		}
	}
	slices.Sort(out)
	if out == nil {
		out = []string{dns.RcodeToString[r.Rcode]}
	}
	return out
}

const syncTestYAML = `ownerId: test
zone: example.test.
replication: {secret: 0123456789abcdef0123}
probe:
  policy: {interval: 10s, timeout: 1s, warningThreshold: 1, criticalThreshold: 3}
records:
  - name: app.example.test.
    ttl: 5s
    addresses:
      - {ip: 192.0.2.1, probeAddr: "10.0.0.1:80"}
      - {ip: 192.0.2.2, probeAddr: "10.0.0.2:80"}
      - {ip: 192.0.2.3, probeAddr: "10.0.0.3:80"}
node: {url: "http://controller/replication"}
`

// cluster is a controller and two nodes in one bubble.
type cluster struct {
	ctl    *controller
	nodes  []*node
	probes *fakeProbers
	net    *inProcess
}

func newCluster(t *testing.T, sync time.Duration, notify bool) *cluster {
	t.Helper()
	return newClusterWith(t, syncTestYAML, sync, notify)
}

// newClusterWith is newCluster with the config yaml.
func newClusterWith(t *testing.T, yaml string, sync time.Duration, notify bool) *cluster {
	t.Helper()
	cfg, err := ParseConfig([]byte(withStateDir(yaml)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Node.Interval = sync
	if notify {
		cfg.Replication.Notify = []string{"http://node-0/replication", "http://node-1/replication"}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ncfg := cfg
	if err := ncfg.ValidateNode(); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	c := &cluster{probes: &fakeProbers{}, net: &inProcess{handlers: map[string]http.Handler{}, down: map[string]bool{}}}
	client := &http.Client{Transport: c.net}
	c.ctl, err = newController(cfg, deps{prober: c.probes.prober, client: client}, newMetrics(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	c.net.handlers["controller"] = c.ctl.handler()
	for i := range 2 {
		n, err := newNode(ncfg, client, newMetrics(), quiet)
		if err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, n)
		c.net.handlers[[]string{"node-0", "node-1"}[i]] = n.handler()
	}
	return c
}

// run starts everything; the returned function stops it and waits.
func (c *cluster) run(t *testing.T) func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.ctl.Run(ctx); err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	for _, n := range c.nodes {
		wg.Go(func() {
			if err := n.Run(ctx); err != nil {
				t.Errorf("node: %v", err)
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// agree reports whether both nodes answer what the controller answers.
func (c *cluster) agree(name string) bool {
	want := zoneAnswer(c.ctl.zone, name)
	for _, n := range c.nodes {
		if !slices.Equal(zoneAnswer(n.zone, name), want) {
			return false
		}
	}
	return true
}

// failAndWaitForController makes addr fail and advances virtual time in
// small steps until the controller's own answer changes; it returns that
// answer.
func (c *cluster) failAndWaitForController(t *testing.T, addr, name string) []string {
	before := zoneAnswer(c.ctl.zone, name)
	c.probes.failing.Store(addr, true)
	for deadline := time.Now().Add(time.Hour); time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if got := zoneAnswer(c.ctl.zone, name); !slices.Equal(got, before) {
			return got
		}
	}
	t.Fatal("the controller's answer never changed")
	return nil
}

// TestNodesConvergeWithinOneSync runs a controller and two nodes in a
// synctest bubble over an in-process transport, so the sync interval is
// virtual time: both nodes answer what the controller answers, within one
// sync interval after a change, and at once (no time passing) when the
// controller notifies them.
func TestNodesConvergeWithinOneSync(t *testing.T) {
	const name = "app.example.test."
	const syncEvery = 30 * time.Second
	all := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}

	t.Run("change, by the sync interval", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := newCluster(t, syncEvery, false)
			stop := c.run(t)
			defer stop()
			time.Sleep(syncEvery)
			synctest.Wait()
			if got := zoneAnswer(c.ctl.zone, name); !slices.Equal(got, all) || !c.agree(name) {
				t.Fatalf("after one sync: controller %v, nodes %v %v", got, zoneAnswer(c.nodes[0].zone, name), zoneAnswer(c.nodes[1].zone, name))
			}
			got := c.failAndWaitForController(t, "10.0.0.2:80", name)
			changed := time.Now()
			if want := []string{"192.0.2.1", "192.0.2.3"}; !slices.Equal(got, want) {
				t.Fatalf("controller answers %v, want %v", got, want)
			}
			// Within one sync interval of the change, step by step.
			for !c.agree(name) {
				if time.Since(changed) > syncEvery {
					t.Fatalf("nodes did not converge within one sync (%v): %v %v", syncEvery,
						zoneAnswer(c.nodes[0].zone, name), zoneAnswer(c.nodes[1].zone, name))
				}
				time.Sleep(100 * time.Millisecond)
				synctest.Wait()
			}
			t.Logf("nodes converged %v after the controller's change (sync interval %v)", time.Since(changed), syncEvery)
		})
	})

	t.Run("change, by notify", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := newCluster(t, time.Hour, true) // the interval never comes
			stop := c.run(t)
			defer stop()
			// The first publication waits for every address's first probe
			// result (the startup hold); replication opens once the zone
			// answers (which may come a tick after the zone holds the
			// records); then the notify brings the nodes.
			for start := time.Now(); !c.ctl.isAnswering() || len(zoneAnswer(c.ctl.zone, name)) == 0 || zoneAnswer(c.ctl.zone, name)[0] == "NXDOMAIN"; {
				if time.Since(start) > time.Minute {
					t.Fatal("the controller never published")
				}
				time.Sleep(10 * time.Millisecond)
				synctest.Wait()
			}
			synctest.Wait()
			if !c.agree(name) || !slices.Equal(zoneAnswer(c.nodes[0].zone, name), all) {
				t.Fatalf("after start and notify: controller %v, node %v", zoneAnswer(c.ctl.zone, name), zoneAnswer(c.nodes[0].zone, name))
			}
			c.failAndWaitForController(t, "10.0.0.3:80", name)
			synctest.Wait() // no time passes: the notify alone brings the nodes along
			if !c.agree(name) {
				t.Fatalf("nodes did not follow the notify: controller %v, nodes %v %v", zoneAnswer(c.ctl.zone, name),
					zoneAnswer(c.nodes[0].zone, name), zoneAnswer(c.nodes[1].zone, name))
			}
		})
	})

	t.Run("controller away: last good copy, degraded after two missed syncs", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := newCluster(t, syncEvery, false)
			stop := c.run(t)
			defer stop()
			time.Sleep(syncEvery)
			synctest.Wait()
			c.net.setDown("controller", true)
			time.Sleep(syncEvery + time.Millisecond)
			synctest.Wait()
			if c.nodes[0].replica.Degraded() {
				t.Fatal("degraded after one missed sync")
			}
			time.Sleep(syncEvery)
			synctest.Wait()
			for i, n := range c.nodes {
				if !n.replica.Degraded() {
					t.Fatalf("node %d not degraded after two missed syncs: %+v", i, n.replica.Status())
				}
				if got := zoneAnswer(n.zone, name); !slices.Equal(got, all) {
					t.Fatalf("node %d answers %v while the controller is away, want its last copy %v", i, got, all)
				}
			}
			c.net.setDown("controller", false)
			time.Sleep(syncEvery)
			synctest.Wait()
			if c.nodes[0].replica.Degraded() || !c.agree(name) {
				t.Fatal("node did not recover once the controller was back")
			}
		})
	})
}

// TestNeverEmptyHoldsTheLastSet fails every address of a record with no
// failover FQDN under the default keepLast policy: the embedded zone keeps
// answering the last published set and gslbkit_record_held_stale says so,
// until an address recovers.
func TestNeverEmptyHoldsTheLastSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, time.Minute, false)
		stop := c.run(t)
		defer stop()
		synctest.Wait()
		const name = "app.example.test."
		all := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
		for _, a := range []string{"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"} {
			c.probes.failing.Store(a, true)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, st := range c.ctl.mon.Snapshot() {
			if st.Served {
				t.Fatalf("%s still served after a minute of failures", st.ID)
			}
		}
		// The last set published before the last address went down stays.
		got := zoneAnswer(c.ctl.zone, name)
		if len(got) == 0 || !slices.ContainsFunc(all, func(a string) bool { return slices.Contains(got, a) }) {
			t.Fatalf("answer %v with every address down, want the last published set held", got)
		}
		for _, a := range got {
			if !slices.Contains(all, a) {
				t.Fatalf("answer %v holds something that is not an address of the record", got)
			}
		}
		if v := gaugeValue(t, c.ctl.met); v != 1 {
			t.Fatalf("gslbkit_record_held_stale = %v, want 1", v)
		}
		c.probes.failing.Store("10.0.0.2:80", false)
		time.Sleep(6 * time.Minute) // past the longest critical back-off
		synctest.Wait()
		if got := zoneAnswer(c.ctl.zone, name); !slices.Equal(got, []string{"192.0.2.2"}) {
			t.Fatalf("answer %v after one address recovered, want it alone", got)
		}
		if v := gaugeValue(t, c.ctl.met); v != 0 {
			t.Fatalf("gslbkit_record_held_stale = %v after recovery, want 0", v)
		}
	})
}

// gaugeValue reads gslbkit_record_held_stale.
func gaugeValue(t *testing.T, m *metrics) float64 {
	var d dto.Metric
	if err := m.heldStale.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetGauge().GetValue()
}

// lineCounter is a log destination that counts lines containing a text.
type lineCounter struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.Split(strings.TrimSpace(string(p)), "\n")...)
	return len(p), nil
}

func (l *lineCounter) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// TestNodeLogsAFailedSyncOnce: with the controller unreachable, each failed
// sync is one log line (the Replica and the node used to both log it).
func TestNodeLogsAFailedSyncOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := ParseConfig([]byte("zone: example.test.\nreplication: {secret: 0123456789abcdef0123}\nnode: {url: \"http://controller/replication\", interval: 1s, degradedAfter: 5}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.ValidateNode(); err != nil {
			t.Fatal(err)
		}
		net := &inProcess{handlers: map[string]http.Handler{}, down: map[string]bool{"controller": true}}
		logs := &lineCounter{}
		n, err := newNode(cfg, &http.Client{Transport: net}, newMetrics(), slog.New(slog.NewJSONHandler(logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- n.Run(ctx) }()
		time.Sleep(2500 * time.Millisecond) // virtual time: three syncs, all failing
		synctest.Wait()
		cancel()
		<-done
		missed := n.replica.Status().Missed
		if missed < 2 {
			t.Fatalf("only %d failed syncs", missed)
		}
		if got := logs.count("sync failed"); got != missed {
			t.Fatalf("%d failed syncs logged in %d lines, want one each:\n%s", missed, got, strings.Join(logs.lines, "\n"))
		}
	})
}
