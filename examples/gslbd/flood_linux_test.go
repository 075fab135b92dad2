//go:build linux

package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// metricSum adds up every sample of the named metric on /metrics.
func metricSum(t *testing.T, base, name string) float64 {
	t.Helper()
	_, body := get(t, base, "/metrics")
	var sum float64
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// tcpAnswer asks name's A records over a new TCP connection.
func tcpAnswer(server, name string) ([]string, error) {
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	r, _, err := c.Exchange(m, server)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	slices.Sort(out)
	return out, nil
}

// connFlood keeps n TCP connections to addr, as an attacker does: each is
// handed to use until use returns (the server closed it, or the flood
// stops), then closed and dialled again a second later (the attacker's
// pace), until close. The first n dials are made before startConnFlood
// returns, one after the other, so that they reach the server's accept
// queue in that order, before anything the caller dials next. pause, given
// to use, waits d or until close (the attacker's pace, not a wait for an
// event) and is false once stopped.
type connFlood struct {
	stop   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	dialed int
	once   sync.Once
}

func startConnFlood(addr string, n int, use func(c net.Conn, pause func(time.Duration) bool)) *connFlood {
	f := &connFlood{stop: make(chan struct{}), conns: map[net.Conn]bool{}}
	pause := func(d time.Duration) bool {
		select {
		case <-f.stop:
			return false
		case <-time.After(d):
			return true
		}
	}
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return nil
		}
		f.mu.Lock()
		f.conns[c] = true
		f.dialed++
		f.mu.Unlock()
		return c
	}
	for range n {
		c := dial()
		f.wg.Go(func() {
			for {
				if c != nil {
					use(c, pause)
					f.mu.Lock()
					delete(f.conns, c)
					f.mu.Unlock()
					c.Close()
				}
				if !pause(time.Second) {
					return
				}
				c = dial()
			}
		})
	}
	return f
}

// close stops the flood, closes its connections and returns how many it
// dialled.
func (f *connFlood) close() int {
	f.once.Do(func() { close(f.stop) })
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return f.dialed
}

// startFlood keeps n DNS-over-TCP connections open to addr, each sending a
// query every 2 s so that no idle timeout closes it, as a slowloris
// attacker does, and reconnecting a second after the server closes it.
func startFlood(addr string, n int) *connFlood {
	m := new(dns.Msg)
	m.SetQuestion("app.example.test.", dns.TypeA)
	q, _ := m.Pack()
	msg := binary.BigEndian.AppendUint16(nil, uint16(len(q)))
	msg = append(msg, q...)
	return startConnFlood(addr, n, func(c net.Conn, pause func(time.Duration) bool) {
		var hdr [2]byte
		for {
			if _, err := c.Write(msg); err != nil {
				return
			}
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint16(hdr[:]))); err != nil {
				return
			}
			if !pause(2 * time.Second) {
				return
			}
		}
	})
}

// openFDs counts the descriptors of process pid.
func openFDs(pid int) int {
	es, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(es)
}

// TestFloodNoFalseFailover runs gslbd with 256 descriptors (so its DNS
// server holds at most 64 TCP connections) and floods its DNS port with
// 356 connections that keep sending queries and reconnect when closed. While the flood lasts and
// the probes go on (at least 40 more probes), no address changes state,
// every answer over UDP and over a new TCP connection (retried up to
// three times, as a resolver would) stays both addresses, /readyz answers 503 naming dns_tcp_full, /healthz answers
// 200, and gslbkit_problem says the same; after the flood /readyz is 200.
func TestFloodNoFalseFailover(t *testing.T) {
	const nofile = 256
	bs := []*backend{newBackend(t), newBackend(t)}
	recs := "  - name: app.example.test.\n    ttl: 1s\n    addresses:\n"
	for i, b := range bs {
		recs += fmt.Sprintf("      - {ip: 192.0.2.%d, probeAddr: %q}\n", i+1, b.addr())
	}
	y := strings.Replace(controllerYAML("", recs), `dns: {addr: "127.0.0.1:0"}`, `dns: {addr: "127.0.0.1:0", tcpIdleTimeout: 1m}`, 1)
	// The backends share this process with the flood: under -race on a
	// busy machine one of their answers can take longer than 200 ms. Three
	// failures in a row make a transition, so a slow backend (which this
	// test is not about) does not pass for a false failover.
	y = strings.Replace(y, "warningThreshold: 1, criticalThreshold: 2", "warningThreshold: 3, criticalThreshold: 4", 1)
	d := startSubDaemon(t, y, nofile)
	guard := 60 * time.Second
	want := []string{"192.0.2.1", "192.0.2.2"}
	waitFor(t, guard, "both addresses answered", func() bool {
		got, _ := answer(d.dns, "app.example.test.")
		return slices.Equal(got, want)
	})
	waitFor(t, guard, "ready", func() bool { code, _ := get(t, d.http, "/readyz"); return code == 200 })
	transitions := metricSum(t, d.http, "gslbkit_state_transitions_total")
	probes := metricSum(t, d.http, "gslbkit_probes_total")
	if lim := metricSum(t, d.http, "gslbkit_dns_tcp_connections_limit"); lim != nofile/4 {
		t.Fatalf("TCP connection limit %v, want %d (a quarter of the descriptor limit)", lim, nofile/4)
	}

	const flood = nofile + 100
	f := startFlood(d.dns, flood)
	defer f.close()
	waitFor(t, guard, "the flood evicts connections", func() bool {
		return metricSum(t, d.http, "gslbkit_dns_tcp_evicted_total") >= flood-nofile/4
	})
	var worst time.Duration
	maxFDs, tcpQueries, tcpRetries := 0, 0, 0
	var readyBody string
	for metricSum(t, d.http, "gslbkit_probes_total") < probes+40 {
		start := time.Now()
		got, rc := answer(d.dns, "app.example.test.")
		if !slices.Equal(got, want) {
			t.Fatalf("UDP answer during the flood: %v (rcode %d), want %v", got, rc, want)
		}
		// A fresh TCP connection competes with the flood's reconnections
		// for a place in the table: in a burst of them it can be refused
		// or evicted before its query is read. A resolver retries; so
		// does this client, up to three times, and the retries are
		// reported. The answer itself must never change.
		var tgot []string
		var err error
		for range 3 {
			tcpQueries++
			if tgot, err = tcpAnswer(d.dns, "app.example.test."); err == nil {
				break
			}
			tcpRetries++
		}
		if err != nil || !slices.Equal(tgot, want) {
			t.Fatalf("TCP answer during the flood (3 tries): %v, %v; want %v", tgot, err, want)
		}
		worst = max(worst, time.Since(start))
		maxFDs = max(maxFDs, openFDs(d.cmd.Process.Pid))
		code, body := get(t, d.http, "/readyz")
		if code != 503 || !strings.Contains(body, "dns_tcp_full") {
			t.Fatalf("/readyz during the flood: %d %s", code, body)
		}
		readyBody = body
		if code, body := get(t, d.http, "/healthz"); code != 200 {
			t.Fatalf("/healthz during the flood: %d %s", code, body)
		}
		if tr := metricSum(t, d.http, "gslbkit_state_transitions_total"); tr != transitions {
			t.Fatalf("state transitions during the flood: %v before, %v now\n%s", transitions, tr, d.stderr.String())
		}
	}
	_, m := get(t, d.http, "/metrics")
	if !strings.Contains(m, `gslbkit_problem{problem="dns_tcp_full"} 1`) || !strings.Contains(m, "gslbkit_ready 0") {
		t.Errorf("metrics do not show the full table:\n%s", m)
	}
	dialed := f.close()
	t.Logf("flood: %d connections dialed; %d fresh TCP queries, %d of them cut by the flood and retried; worst UDP+TCP answer %v; at most %d descriptors open of %d; /readyz said %s",
		dialed, tcpQueries, tcpRetries, worst, maxFDs, nofile, readyBody)
	waitFor(t, guard, "ready again after the flood", func() bool { code, _ := get(t, d.http, "/readyz"); return code == 200 })
	if tr := metricSum(t, d.http, "gslbkit_state_transitions_total"); tr != transitions {
		t.Errorf("state transitions: %v before the flood, %v after", transitions, tr)
	}
	if st := d.stderr.String(); strings.Contains(st, `"msg":"address state"`) && strings.Count(st, `"msg":"address state"`) > 0 {
		// Transitions before the baseline would be counted in it; the
		// metric comparison above is the assertion. Log them for the record.
		t.Logf("address state lines:\n%s", grepLines(st, `"msg":"address state"`))
	}
}

// TestDescriptorsExhaustedNoFalseFailover lets a flood take every
// descriptor of a gslbd limited to 128 (dns.maxTCPConns set far above
// that): the probes then fail with "too many open files", which is this
// host's failure, not the backends'. No address changes state; the prober
// reports itself degraded (log, then /readyz, status and metrics once
// descriptors are free again). Before, every address went critical.
func TestDescriptorsExhaustedNoFalseFailover(t *testing.T) {
	const nofile = 128
	bs := []*backend{newBackend(t), newBackend(t)}
	recs := "  - name: app.example.test.\n    ttl: 1s\n    addresses:\n"
	for i, b := range bs {
		recs += fmt.Sprintf("      - {ip: 192.0.2.%d, probeAddr: %q}\n", i+1, b.addr())
	}
	y := strings.Replace(controllerYAML("", recs), `dns: {addr: "127.0.0.1:0"}`, `dns: {addr: "127.0.0.1:0", tcpIdleTimeout: 1m, maxTCPConns: 10000}`, 1)
	d := startSubDaemon(t, y, nofile)
	guard := 60 * time.Second
	want := []string{"192.0.2.1", "192.0.2.2"}
	waitFor(t, guard, "both addresses answered", func() bool {
		got, _ := answer(d.dns, "app.example.test.")
		return slices.Equal(got, want)
	})
	transitions := metricSum(t, d.http, "gslbkit_state_transitions_total")
	f := startFlood(d.dns, nofile+50)
	waitFor(t, guard, "the prober reports itself degraded", func() bool {
		return strings.Contains(d.stderr.String(), `"msg":"prober degraded`)
	})
	if got, _ := answer(d.dns, "app.example.test."); !slices.Equal(got, want) {
		t.Errorf("UDP answer with descriptors exhausted: %v, want %v", got, want)
	}
	f.close()
	var body string
	waitFor(t, guard, "/readyz reports prober_degraded", func() bool {
		var code int
		code, body = get(t, d.http, "/readyz")
		return code == 503 && strings.Contains(body, "prober_degraded")
	})
	t.Logf("/readyz: %s", body)
	if !strings.Contains(body, "too many open files") {
		t.Errorf("/readyz does not say why: %s", body)
	}
	if code, _ := get(t, d.http, "/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
	if v := metricSum(t, d.http, "gslbkit_probe_local_failures_total"); v == 0 {
		t.Error("no local failure counted")
	}
	if tr := metricSum(t, d.http, "gslbkit_state_transitions_total"); tr != transitions {
		t.Errorf("state transitions: %v before the flood, %v after\n%s", transitions, tr, grepLines(d.stderr.String(), `"msg":"address state"`))
	}
	if got, _ := answer(d.dns, "app.example.test."); !slices.Equal(got, want) {
		t.Errorf("answer after the flood: %v, want %v", got, want)
	}
}
