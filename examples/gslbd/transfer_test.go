package main

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestRunTransfersToSecondaries runs gslbd with a transfer block: a
// transfer signed with the key gets the zone (its answer included), one
// without it is refused, and a change sends a NOTIFY carrying the new
// serial, after which an IXFR from the old serial brings the change.
func TestRunTransfersToSecondaries(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	notified := make(chan uint32, 100)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if r.Opcode == dns.OpcodeNotify && len(r.Answer) == 1 {
			notified <- r.Answer[0].(*dns.SOA).Serial
			m := new(dns.Msg)
			m.SetReply(r)
			_ = w.WriteMsg(m)
		}
	})}
	started := make(chan struct{})
	sink.NotifyStartedFunc = func() { close(started) }
	go func() { _ = sink.ActivateAndServe() }()
	<-started
	defer func() { _ = sink.Shutdown() }()

	b := newBackend(t)
	d := startDaemon(t, controllerYAML(fmt.Sprintf(`transfer:
  keys: [{name: xfr-key, secret: %q}]
  allow: [{key: xfr-key}]
  notify: [%q]
  notifyTimeout: 100ms`, secret, pc.LocalAddr().String()),
		fmt.Sprintf("  - name: app.example.test.\n    ttl: 1s\n    failover: app.backup.example.net.\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n      - {ip: 192.0.2.2, probeAddr: %q}\n", b.addr(), b.addr())))
	waitFor(t, 60*time.Second, "both addresses answered", func() bool {
		got, _ := answer(d.dns, "app.example.test.")
		return len(got) == 2
	})

	xfr := func(m *dns.Msg, signed bool) ([]dns.RR, error) {
		tr := &dns.Transfer{}
		if signed {
			m.SetTsig("xfr-key.", dns.HmacSHA256, 300, time.Now().Unix())
			tr.TsigSecret = map[string]string{"xfr-key.": secret}
		}
		ch, err := tr.In(m, d.dns)
		if err != nil {
			return nil, err
		}
		var out []dns.RR
		for env := range ch {
			if env.Error != nil {
				err = env.Error
			}
			out = append(out, env.RR...)
		}
		return out, err
	}
	axfr := new(dns.Msg)
	axfr.SetAxfr("example.test.")
	rrs, err := xfr(axfr, true)
	if err != nil {
		t.Fatalf("signed AXFR: %v", err)
	}
	var all []string
	for _, rr := range rrs {
		all = append(all, rr.String())
	}
	if !strings.Contains(strings.Join(all, "\n"), "192.0.2.2") {
		t.Fatalf("AXFR lacks the answer:\n%s", strings.Join(all, "\n"))
	}
	serial := rrs[0].(*dns.SOA).Serial
	axfr = new(dns.Msg)
	axfr.SetAxfr("example.test.")
	if _, err := xfr(axfr, false); err == nil {
		t.Fatal("an unsigned AXFR was not refused")
	}

	if code := post(t, d.http, "/api/records/app.example.test/addresses/192.0.2.1/drain"); code != http.StatusOK {
		t.Fatalf("drain: status %d", code)
	}
	guard := time.After(30 * time.Second)
	for got := uint32(0); !(got > serial); {
		select {
		case got = <-notified:
		case <-guard:
			t.Fatal("no NOTIFY with a newer serial within 30s")
		}
	}
	ixfr := new(dns.Msg)
	ixfr.SetIxfr("example.test.", serial, "ns1.example.test.", "hostmaster.example.test.")
	rrs, err = xfr(ixfr, true)
	if err != nil {
		t.Fatalf("IXFR: %v", err)
	}
	if len(rrs) < 4 || len(rrs) >= len(all) {
		t.Fatalf("IXFR of %d records (the AXFR had %d): %v", len(rrs), len(all), rrs)
	}
}
