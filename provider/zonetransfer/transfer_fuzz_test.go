package zonetransfer_test

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/miekg/dns"
)

// FuzzTransfer throws arbitrary bytes at the zone-transfer side, as a UDP
// query, a TCP query and a TCP transfer request: transfer requests (AXFR,
// IXFR with the client's SOA), TSIG-signed queries, and anything else. It
// must never panic, and everything it sends is a sequence of DNS responses
// that parse and carry the request's ID.
func FuzzTransfer(f *testing.F) {
	p := xfrProvider(f, 10)
	x, err := zonetransfer.NewTransfer(p, xfrConfig(), nil)
	if err != nil {
		f.Fatal(err)
	}
	seed := func(m *dns.Msg, sign bool) {
		if sign {
			m.SetTsig(xfrKeyName, dns.HmacSHA256, 300, time.Now().Unix())
			b, _, err := dns.TsigGenerate(m, xfrSecret, "", false)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
			return
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, sign := range []bool{false, true} {
		m := new(dns.Msg)
		m.SetAxfr(xfrZone)
		seed(m, sign)
		m = new(dns.Msg)
		m.SetIxfr(xfrZone, 2, "ns1."+xfrZone, "hostmaster."+xfrZone)
		seed(m, sign)
		m = new(dns.Msg)
		m.SetQuestion(xfrZone, dns.TypeSOA)
		m.SetEdns0(1232, false)
		seed(m, sign)
	}
	src := netip.MustParseAddr("127.0.0.1")
	check := func(t *testing.T, in, out []byte) {
		if out == nil {
			return
		}
		m := new(dns.Msg)
		if err := m.Unpack(out); err != nil {
			t.Fatalf("reply does not parse: %v\n%x", err, out)
		}
		if !m.Response || m.Id != uint16(in[0])<<8|uint16(in[1]) {
			t.Fatalf("reply header wrong: %v", m.MsgHdr)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		check(t, in, x.RespondWire(in, src, false))
		check(t, in, x.RespondUDP(in, make([]byte, 4096), src))
		check(t, in, x.RespondWire(in, src, true))
		var buf bytes.Buffer
		handled, err := x.ServeTCP(&buf, in, src, nil)
		if err != nil {
			t.Fatalf("ServeTCP into a buffer: %v", err)
		}
		if !handled && buf.Len() > 0 {
			t.Fatalf("ServeTCP wrote %d bytes for a message it did not handle", buf.Len())
		}
		for b := buf.Bytes(); len(b) > 0; {
			if len(b) < 2 {
				t.Fatalf("a stray byte after the last message")
			}
			n := int(binary.BigEndian.Uint16(b))
			if len(b) < 2+n {
				t.Fatalf("message of %d bytes cut short", n)
			}
			check(t, in, b[2:2+n])
			b = b[2+n:]
		}
	})
}
