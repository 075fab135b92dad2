//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// httpFlooder keeps n keep-alive HTTP connections to addr: each sends one
// request, reads the answer and stays idle; when the server closes it, it
// reconnects a second later (the attacker's pace), until stop. With slow
// set, each connection instead sends half a request header and nothing
// more (busy, not idle), reconnecting when closed.
type httpFlooder struct {
	stop   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	dialed int
	once   sync.Once
}

func startHTTPFlood(addr string, n int, slow bool) *httpFlooder {
	f := &httpFlooder{stop: make(chan struct{}), conns: map[net.Conn]bool{}}
	pause := func(d time.Duration) bool {
		select {
		case <-f.stop:
			return false
		case <-time.After(d):
			return true
		}
	}
	for range n {
		f.wg.Go(func() {
			for {
				if c, err := net.Dial("tcp", addr); err == nil {
					f.mu.Lock()
					f.conns[c] = true
					f.dialed++
					f.mu.Unlock()
					if slow {
						fmt.Fprintf(c, "GET /api/records HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr)
					} else {
						fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
					}
					// Read until the server closes the connection (an idle one
					// reads its answer first and then waits).
					br := bufio.NewReader(c)
					for {
						if _, err := br.ReadByte(); err != nil {
							break
						}
					}
					f.mu.Lock()
					delete(f.conns, c)
					f.mu.Unlock()
					c.Close()
				}
				if !pause(time.Second) {
					return
				}
			}
		})
	}
	return f
}

func (f *httpFlooder) close() int {
	f.once.Do(func() { close(f.stop) })
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return f.dialed
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
		slow     bool
	}{{"idle keep-alive", 256, false}, {"busy (slow headers)", 16, true}} {
		t.Run(tc.name, func(t *testing.T) {
			y := strings.Replace(controllerYAML("", recs), `http: {addr: "127.0.0.1:0"}`, fmt.Sprintf(`http: {addr: "127.0.0.1:0", maxConns: %d}`, tc.maxConns), 1)
			d := startDaemon(t, y)
			f := startHTTPFlood(d.http, 300, tc.slow)
			defer f.close()
			waitFor(t, 30*time.Second, "the flood fills the table", func() bool {
				if tc.slow { // a fresh request other than /healthz finds only a reserved slot
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
			if tc.slow && (oerr != nil || other != http.StatusServiceUnavailable) {
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
	f := startHTTPFlood(d.http, 400, false)
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
