package memory_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
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

// FuzzParseSnapshot feeds arbitrary bytes to the snapshot parser and, when
// they parse, to Restore: errors are fine, panics are not, and a restored
// Provider answers queries.
func FuzzParseSnapshot(f *testing.F) {
	p := fixture(f)
	seed, _ := json.Marshal(p.Snapshot())
	f.Add(seed)
	f.Add([]byte(`{"version":1,"zones":[{"name":"a.","soa":{"ns":"ns.a.","mbox":"h.a."},"records":[{"name":"@","type":"CNAME","ttl":1,"data":"x."}]}]}`))
	f.Add([]byte(`{"zones":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := memory.ParseSnapshot(data)
		if err != nil {
			return
		}
		q := new(memory.Provider)
		if err := q.Restore(s); err != nil {
			return
		}
		for _, z := range q.Zones() {
			_ = q.Respond(query(z, dns.TypeANY), netip.Addr{}, false)
		}
	})
}

// FuzzParseChanges feeds arbitrary bytes to the changes parser and, when
// they parse, applies them to a copy of the fixture.
func FuzzParseChanges(f *testing.F) {
	src := fixture(f)
	_, _ = src.SetRecords(context.Background(), zone, []libdns.Record{cname("www", "t.example.test.")})
	ch, _ := src.Changes(2)
	seed, _ := json.Marshal(memory.ChangesResponse{Version: src.Version(), Changes: ch})
	f.Add(seed)
	snap := src.Snapshot()
	full, _ := json.Marshal(memory.ChangesResponse{Version: src.Version(), Full: true, Snapshot: &snap})
	f.Add(full)
	f.Add([]byte(`{"version":3,"changes":[{"version":3,"kind":"addZone","zone":"z.","serial":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := memory.ParseChanges(data)
		if err != nil {
			return
		}
		q := new(memory.Provider)
		if err := q.Restore(snap); err != nil {
			t.Fatal(err)
		}
		before := q.Version()
		if c.Full {
			_ = q.Restore(*c.Snapshot)
			return
		}
		if err := q.Apply(c.Changes); err != nil && q.Version() != before {
			t.Fatalf("a failed Apply changed the version")
		}
	})
}
