//go:build linux

package main

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// reflectFrom sends queries for name from one UDP socket (one source address,
// as a spoofed victim's would be) at the attacker's pace, perSecond for d,
// and counts the bytes sent and received and the replies with records. It
// stops reading once a second has passed without a reply after the last
// query (the end of the measurement, not a wait for an event).
func reflectFrom(t *testing.T, server, name string, perSecond int, d time.Duration) (in, out, full, tc int) {
	t.Helper()
	c, err := net.Dial("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.UDPConn).SetReadBuffer(4 << 20)
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	m.SetEdns0(1232, false)
	q, _ := m.Pack()
	var wg sync.WaitGroup
	var last time.Time
	var mu sync.Mutex
	wg.Go(func() {
		buf := make([]byte, 4096)
		for {
			mu.Lock()
			end := last
			mu.Unlock()
			dl := time.Now().Add(time.Second)
			if !end.IsZero() && end.Add(time.Second).After(dl) {
				dl = end.Add(time.Second)
			}
			_ = c.SetReadDeadline(dl)
			n, err := c.Read(buf)
			if err != nil {
				mu.Lock()
				done := !last.IsZero()
				mu.Unlock()
				if done {
					return
				}
				continue
			}
			out += n
			if n >= 12 && buf[2]&0x02 != 0 {
				tc++
			} else if n >= 12 && buf[6]|buf[7] != 0 {
				full++
			}
		}
	})
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	per := max(perSecond/1000, 1)
	start := time.Now()
	for id := uint16(0); time.Since(start) < d; {
		<-tick.C // the attacker's pace
		for range per {
			id++
			q[0], q[1] = byte(id>>8), byte(id)
			if _, err := c.Write(q); err == nil {
				in += len(q)
			}
		}
	}
	mu.Lock()
	last = time.Now()
	mu.Unlock()
	wg.Wait()
	return in, out, full, tc
}

// TestRRLLimitsReflection: dns.rrl is configurable and
// on by default (rate 200, slip 2). One source sending 10,000 queries a
// second for a large answer: with rrl off every query is answered in full
// (the amplification a reflection attack buys); with the default, no more
// full answers than the bucket's burst (4 × rate) plus rate per second
// elapsed, the rest dropped or slipped (truncated, so a real resolver
// retries over TCP), and the metrics count them. Before, dns.rrl was an
// unknown key and nothing was limited.
func TestRRLLimitsReflection(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 20,000 queries twice")
	}
	b := newBackend(t)
	var recs strings.Builder
	recs.WriteString("  - name: big.example.test.\n    ttl: 30s\n    addresses:\n")
	const addrs = 60
	for i := 1; i <= addrs; i++ {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, probeAddr: %q}\n", i, b.addr())
	}
	const rate, dur = 10_000, 2 * time.Second
	amp := map[string]float64{}
	for _, tc := range []struct{ name, dns string }{
		{"off", `dns: {addr: "127.0.0.1:0", rrl: {rate: 0}}`},
		{"default", `dns: {addr: "127.0.0.1:0", rrl: {exempt: []}}`}, // loopback is exempt by default
	} {
		y := strings.Replace(controllerYAML("", recs.String()), `dns: {addr: "127.0.0.1:0"}`, tc.dns, 1)
		d := startDaemon(t, y)
		waitFor(t, 60*time.Second, "every address answered", func() bool {
			got, err := tcpAnswer(d.dns, "big.example.test.")
			return err == nil && len(got) == addrs
		})
		start := time.Now()
		in, out, full, trunc := reflectFrom(t, d.dns, "big.example.test.", rate, dur)
		elapsed := time.Since(start)
		amp[tc.name] = float64(out) / float64(in)
		_, met := get(t, d.http, "/metrics")
		t.Logf("rrl %s: %d bytes in, %d bytes out: amplification %.2f×; %d full answers, %d truncated, in %v\n%s",
			tc.name, in, out, amp[tc.name], full, trunc, elapsed.Round(time.Millisecond), grepLines(met, "gslbkit_dns_rrl_responses_total{"))
		switch tc.name {
		case "off":
			if trunc != 0 || !strings.Contains(met, `gslbkit_dns_rrl_responses_total{action="slipped"} 0`) {
				t.Errorf("rrl off: %d truncated replies", trunc)
			}
		case "default":
			if bound := 4*DefaultRRLRate + int(elapsed.Seconds()+2)*DefaultRRLRate; full > bound {
				t.Errorf("rrl on: %d full answers in %v, more than the bucket allows (%d)", full, elapsed, bound)
			}
			if trunc == 0 || strings.Contains(met, `gslbkit_dns_rrl_responses_total{action="slipped"} 0`) ||
				strings.Contains(met, `gslbkit_dns_rrl_responses_total{action="dropped"} 0`) {
				t.Errorf("rrl on: nothing slipped or dropped (%d truncated)\n%s", trunc, grepLines(met, "gslbkit_dns_rrl"))
			}
		}
		d.stop(t)
	}
	if amp["default"] >= amp["off"] {
		t.Errorf("amplification with rrl %.2f×, without %.2f×", amp["default"], amp["off"])
	}
}
