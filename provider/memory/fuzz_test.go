package memory_test

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// FuzzRespondWire throws arbitrary bytes at the handler: it must never
// panic, and whatever it returns is either nothing or a DNS response that
// parses, carries the query's ID and has QR set.
func FuzzRespondWire(f *testing.F) {
	p := fixture(f)
	for _, q := range []*dns.Msg{
		query("www.example.test.", dns.TypeA),
		query("APP.example.test.", dns.TypeA),
		query("big.example.test.", dns.TypeTXT),
		query("nope.example.test.", dns.TypeAAAA),
		query("example.test.", dns.TypeANY),
		query("www.example.net.", dns.TypeA),
	} {
		q.SetEdns0(1232, true)
		w, err := q.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(w, false)
	}
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c, 0, 1, 0, 1}, true)
	f.Fuzz(func(t *testing.T, in []byte, tcp bool) {
		out := p.RespondWire(in, netip.MustParseAddr("192.0.2.77"), tcp)
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
		if !tcp && len(out) > 4096 {
			t.Fatalf("UDP reply of %d bytes", len(out))
		}
	})
}
