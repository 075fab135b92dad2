//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startHTTPFlood keeps n HTTP connections to addr (connFlood: dialled
// again a second after the server closes one, until close). kind "idle":
// each sends one keep-alive request, reads the answer and stays idle;
// "slowloris": each sends a request line and then a header line every
// second, never finishing the header (busy, not idle).
func startHTTPFlood(addr string, n int, kind string) *connFlood {
	return startConnFlood(addr, n, func(c net.Conn, pause func(time.Duration) bool) {
		// Read until the server closes the connection (an idle one reads
		// its answer first and then waits), or the flood stops (close
		// closes it).
		closed := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, c)
			close(closed)
		}()
		if kind == "idle" {
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		} else {
			fmt.Fprintf(c, "GET /api/records HTTP/1.1\r\nHost: %s\r\n", addr)
			for i := 0; pause(time.Second); i++ { // the attacker's pace
				if _, err := fmt.Fprintf(c, "X-Slow-%d: 1\r\n", i); err != nil {
					break
				}
			}
		}
		<-closed
	})
}

// freshGet asks path on a new connection (no keep-alive), with a 5 s
// timeout (a kubelet probe's default is 1 s; this is a hang guard).
func freshGet(addr, path string) (int, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// freshMetric reads one unlabelled metric over a new connection (-1 if it
// cannot): a keep-alive connection of the test's own may be the one idle
// longest, which the flood evicts.
func freshMetric(addr, name string) float64 {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return -1
}

// TestHealthzUnderHTTPFlood: 300 idle keep-alive
// connections at http.maxConns 256 (the old fixed default), then 300
// connections stuck in their request header at maxConns 16: fresh
// /healthz requests are answered 200 every time (9 of 9), the idle ones
// by evicting the connection idle longest, the busy ones on a reserved
// slot, where /api/records gets 503. Before, 8 of 9 failed for 30 s.
func TestHealthzUnderHTTPFlood(t *testing.T) {
	b := newBackend(t)
	recs := fmt.Sprintf("  - name: app.example.test.\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n", b.addr())
	for _, tc := range []struct {
		name     string
		maxConns int
		kind     string
	}{{"idle keep-alive", 256, "idle"}, {"busy (slow headers)", 16, "slowloris"}} {
		t.Run(tc.name, func(t *testing.T) {
			y := strings.Replace(controllerYAML("", recs), `http: {addr: "127.0.0.1:0"}`, fmt.Sprintf(`http: {addr: "127.0.0.1:0", maxConns: %d}`, tc.maxConns), 1)
			d := startDaemon(t, y)
			f := startHTTPFlood(d.http, 300, tc.kind)
			defer f.close()
			waitFor(t, 30*time.Second, "the flood fills the table", func() bool {
				if tc.kind == "slowloris" { // a fresh request other than /healthz finds only a reserved slot
					code, err := freshGet(d.http, "/api/records")
					return err == nil && code == http.StatusServiceUnavailable
				}
				return freshMetric(d.http, "gslbkit_http_connections") >= float64(tc.maxConns)
			})
			ok := 0
			var fails []string
			for range 9 {
				code, err := freshGet(d.http, "/healthz")
				if err == nil && code == 200 {
					ok++
				} else {
					fails = append(fails, fmt.Sprint(code, err))
				}
			}
			other, oerr := freshGet(d.http, "/api/records")
			dialed := f.close()
			t.Logf("%s: %d flood connections dialed; fresh /healthz %d of 9 answered 200; a fresh /api/records: %d %v; evicted %v, reserved %v, refused %v",
				tc.name, dialed, ok, other, oerr, freshMetric(d.http, "gslbkit_http_connections_evicted_total"),
				freshMetric(d.http, "gslbkit_http_connections_reserved_total"), freshMetric(d.http, "gslbkit_http_connections_refused_total"))
			if ok != 9 {
				t.Errorf("fresh /healthz under the flood: %d of 9 answered 200; failures %v", ok, fails)
			}
			if tc.kind == "slowloris" && (oerr != nil || other != http.StatusServiceUnavailable) {
				t.Errorf("/api/records on a reserved slot: %d %v, want 503", other, oerr)
			}
		})
	}
}

// TestDNSTCPUnderHTTPFloodNofile300: gslbd with 300
// descriptors and the default limits, its HTTP port flooded by 400
// keep-alive connections: HTTP holds at most a quarter of the descriptors
// (75, plus 8 reserved), DNS TCP another quarter, and fresh DNS-over-TCP
// queries are answered 16 of 16. Before, HTTP's fixed 256 took the
// descriptors and 15 of 16 failed.
func TestDNSTCPUnderHTTPFloodNofile300(t *testing.T) {
	const nofile = 300
	b := newBackend(t)
	recs := fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n", b.addr())
	d := startSubDaemon(t, controllerYAML("", recs), nofile)
	want := []string{"192.0.2.1"}
	waitFor(t, 60*time.Second, "the address answered", func() bool {
		got, err := tcpAnswer(d.dns, "app.example.test.")
		return err == nil && len(got) == 1 && got[0] == want[0]
	})
	if lim := freshMetric(d.http, "gslbkit_http_connections_limit"); lim != nofile/4 {
		t.Fatalf("HTTP connection limit %v, want %d (a quarter of the descriptor limit)", lim, nofile/4)
	}
	f := startHTTPFlood(d.http, 400, "idle")
	defer f.close()
	waitFor(t, 60*time.Second, "the HTTP flood fills the table and evicts", func() bool {
		return freshMetric(d.http, "gslbkit_http_connections_evicted_total") > 0
	})
	ok, maxFDs := 0, 0
	var fails []string
	for range 16 {
		got, err := tcpAnswer(d.dns, "app.example.test.")
		if err == nil && len(got) == 1 && got[0] == want[0] {
			ok++
		} else {
			fails = append(fails, fmt.Sprint(got, err))
		}
		maxFDs = max(maxFDs, openFDs(d.cmd.Process.Pid))
	}
	hz := 0
	for range 4 {
		if code, err := freshGet(d.http, "/healthz"); err == nil && code == 200 {
			hz++
		}
	}
	dialed := f.close()
	t.Logf("nofile %d: %d HTTP flood connections dialed; fresh DNS-over-TCP %d of 16 answered; fresh /healthz %d of 4; at most %d descriptors open",
		nofile, dialed, ok, hz, maxFDs)
	if ok != 16 {
		t.Errorf("fresh DNS-over-TCP queries under the HTTP flood: %d of 16; failures %v", ok, fails)
	}
	if hz != 4 {
		t.Errorf("fresh /healthz under the HTTP flood: %d of 4", hz)
	}
}

// TestHealthzUnderDNSAndHTTPFloodNofile300: the torture's
// dns-tcp-flood-lownofile step, measured: gslbd with 300 descriptors, 300
// idle keep-alive HTTP connections and 200 DNS-over-TCP connections
// redialing every second; then fresh /healthz clients, each a liveness
// probe of 3 tries (3 s each). Every probe must pass.
func TestHealthzUnderDNSAndHTTPFloodNofile300(t *testing.T) {
	const nofile, probes = 300, 30
	b := newBackend(t)
	recs := fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n", b.addr())
	d := startSubDaemon(t, controllerYAML("", recs), nofile)
	waitFor(t, 60*time.Second, "the address answered", func() bool {
		got, err := tcpAnswer(d.dns, "app.example.test.")
		return err == nil && len(got) == 1
	})
	hf := startHTTPFlood(d.http, 300, "idle")
	defer hf.close()
	df := startFlood(d.dns, 200)
	defer df.close()
	var tries, failedTries, failedProbes, maxFDs int
	var errs []string
	for range probes {
		ok := false
		for range 3 {
			tries++
			code, _, err := httpDo("GET", d.http, "/healthz", "", 3*time.Second)
			maxFDs = max(maxFDs, openFDs(d.cmd.Process.Pid))
			if err == nil && code == 200 {
				ok = true
				break
			}
			failedTries++
			errs = append(errs, fmt.Sprint(code, " ", err))
		}
		if !ok {
			failedProbes++
		}
	}
	_, m, _ := httpDo("GET", d.http, "/metrics", "", 3*time.Second)
	t.Logf("nofile %d: %d probes of 3 tries: %d probes failed, %d of %d tries failed; at most %d descriptors open; %s", nofile, probes, failedProbes, failedTries, tries, maxFDs, compact(grepLines(m, "gslbkit_http_connections_")))
	if len(errs) > 0 {
		t.Logf("failed tries: %v", errs[:min(len(errs), 10)])
	}
	if failedProbes > 0 {
		t.Errorf("%d of %d liveness probes (3 tries each) failed", failedProbes, probes)
	}
}

// TestHealthzAmidABacklogUnderFloodNofile300: the flood of
// TestHealthzUnderDNSAndHTTPFloodNofile300 arriving while gslbd is not
// scheduled (SIGSTOP: a loaded host), each try of a liveness probe among
// the arrivals (300 keep-alive connections before it, 30 after it: a
// node's syncs, monitoring), then SIGCONT: gslbd accepts the backlog
// faster than it reads the connections, so every slot, the reserved ones
// included, holds a connection not read yet. Every try of every probe
// (3 tries of 3 s) must be answered. Before, a try was reset (closed
// unread to make room for a later arrival) about one time in two: 6 of 12
// tries, 14 of 24 (0 and 2 of the 6 and 8 probes failed all three).
func TestHealthzAmidABacklogUnderFloodNofile300(t *testing.T) {
	const nofile, probes = 300, 8
	b := newBackend(t)
	recs := fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n", b.addr())
	d := startSubDaemon(t, controllerYAML("", recs), nofile)
	t.Cleanup(func() { _ = d.cmd.Process.Signal(syscall.SIGCONT) }) // before its SIGTERM
	waitFor(t, 60*time.Second, "the address answered", func() bool {
		got, err := tcpAnswer(d.dns, "app.example.test.")
		return err == nil && len(got) == 1
	})
	df := startFlood(d.dns, 200)
	defer df.close()
	// One try: its connection accepted behind 300 of the flood's and
	// before 30 more (each dial returns once the kernel queued the
	// connection, so the order is the accept queue's), its request sent,
	// then gslbd resumed; the answer read within 3 s.
	try := func() (int, error) {
		if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		before := startHTTPFlood(d.http, 300, "idle")
		defer before.close()
		c, err := net.DialTimeout("tcp", d.http, time.Second)
		if err != nil {
			_ = d.cmd.Process.Signal(syscall.SIGCONT)
			return 0, err
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", d.http)
		after := startHTTPFlood(d.http, 30, "idle")
		defer after.close()
		if err := d.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	var tries, failedTries, failedProbes int
	var errs []string
	for range probes {
		ok := false
		for range 3 {
			tries++
			code, err := try()
			if ok = err == nil && code == 200; ok {
				break
			}
			failedTries++
			errs = append(errs, fmt.Sprint(code, " ", err))
		}
		if !ok {
			failedProbes++
		}
	}
	_, m, _ := httpDo("GET", d.http, "/metrics", "", 3*time.Second)
	var figures []string
	for _, l := range strings.Split(m, "\n") {
		if strings.HasPrefix(l, "gslbkit_http_connections_") {
			figures = append(figures, l)
		}
	}
	t.Logf("nofile %d: %d liveness probes (3 tries each, each amid a backlog): %d failed, %d of %d tries failed; %v", nofile, probes, failedProbes, failedTries, tries, figures)
	if len(errs) > 0 {
		t.Logf("failed tries: %v", errs[:min(len(errs), 4)])
	}
	if failedTries > 0 {
		t.Errorf("%d of %d tries failed (%d of %d liveness probes of 3 tries)", failedTries, tries, failedProbes, probes)
	}
}
