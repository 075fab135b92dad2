package replication_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

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
		s, err := replication.ParseSnapshot(data)
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
	seed, _ := json.Marshal(replication.ChangesResponse{Version: src.Version(), Changes: ch})
	f.Add(seed)
	snap := src.Snapshot()
	full, _ := json.Marshal(replication.ChangesResponse{Version: src.Version(), Full: true, Snapshot: &snap})
	f.Add(full)
	f.Add([]byte(`{"version":3,"changes":[{"version":3,"kind":"addZone","zone":"z.","serial":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := replication.ParseChanges(data)
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
