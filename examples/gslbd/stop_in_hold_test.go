package main

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestStopBeforeTheFirstAnswerAnswersNothing: a fresh start binds its DNS
// port but reads nothing until the zone holds answers (README, "Fresh
// start"); the queries clients send meanwhile wait in the socket. A stop
// in that hold must close the sockets unread, not serve them on the way
// out from a zone with no answers yet (NXDOMAIN for a configured name,
// which I2 forbids).
func TestStopBeforeTheFirstAnswerAnswersNothing(t *testing.T) {
	// A backend that accepts connections and never answers: the first
	// probe waits its whole timeout, which holds the start.
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	d := startDaemon(t, controllerYAML("", `  - name: app.example.test.
    ttl: 1s
    probe: {policy: {interval: 10s, timeout: 4s, maxBackoff: 20s}}
    addresses:
      - {ip: 192.0.2.1, probeAddr: "`+hung.Addr().String()+`"}
`))
	c, err := net.Dial("udp", d.dns)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := new(dns.Msg)
	q.SetQuestion("app.example.test.", dns.TypeA)
	wire, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Write(wire); err != nil {
			t.Fatal(err)
		}
	}
	d.stop(t)
	// The daemon has returned: whatever it answered is in c's buffer.
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err == nil {
		r := new(dns.Msg)
		_ = r.Unpack(buf[:n])
		t.Fatalf("stopped in its startup hold, gslbd answered a query it had not read: %s", dns.RcodeToString[r.Rcode])
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("read: %v", err)
	}
}
