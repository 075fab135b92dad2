package memory

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/internal/answer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// admitFixture is a zone of n names with an A record each; its MX
// questions (NODATA) take the general path, whose answers the cache keeps.
func admitFixture(t testing.TB, n int) (*Provider, [][]byte) {
	p := new(Provider)
	if err := p.AddZone("example.test."); err != nil {
		t.Fatal(err)
	}
	var rs []libdns.Record
	var qs [][]byte
	for i := range n {
		name := fmt.Sprintf("h%d", i)
		rs = append(rs, libdns.Address{Name: name, TTL: time.Minute, IP: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})})
		qs = append(qs, buildQuery(uint16(i), 1, 0, []string{name, "example", "test"}, dns.TypeMX, dns.ClassINET, 1, 1232))
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
		t.Fatal(err)
	}
	return p, qs
}

// TestFastCacheAdmission: a question asked once never enters the cache;
// asked twice it does, and the third answer comes from the cache (no
// allocation) with the general path's bytes. A change of the zone starts
// a fresh cache whose admission starts afresh too.
func TestFastCacheAdmission(t *testing.T) {
	p, qs := admitFixture(t, 200)
	src := netip.MustParseAddr("192.0.2.1")
	buf := make([]byte, 4096)
	ask := func() {
		for _, q := range qs {
			if got, want := p.RespondUDP(q, buf, src), p.RespondWire(q, src, false); !bytes.Equal(got, want) {
				t.Fatalf("%x: fast path differs", q)
			}
		}
	}
	ask()
	if n, _, _ := p.eng.CacheStats(); n > 2 { // a false positive is 1 in 16 at worst, here far fewer
		t.Fatalf("%d entries after one sighting of %d questions: one-hit questions entered", n, len(qs))
	}
	ask()
	if n, _, _ := p.eng.CacheStats(); n < len(qs) {
		t.Fatalf("%d entries after two sightings of %d questions", n, len(qs))
	}
	if a := testing.AllocsPerRun(50, func() { _ = p.RespondUDP(qs[7], buf, src) }); a != 0 {
		t.Errorf("an admitted question: %v allocations, want a cache hit", a)
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", []libdns.Record{libdns.Address{Name: "new", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.9")}}); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := p.eng.CacheStats(); n != 0 {
		t.Fatalf("%d entries after a change of the zone", n)
	}
	ask()
	if n, _, _ := p.eng.CacheStats(); n > 2 {
		t.Fatalf("%d entries after one sighting in the new cache: the old sightings carried over", n)
	}
	ask()
	if n, _, _ := p.eng.CacheStats(); n < len(qs) {
		t.Fatalf("%d entries after two sightings in the new cache", n)
	}
}

// TestFastCacheBudgetFollowsView: a cache's budget is its floor for a
// small zone, grows with the zone's names past it, and never passes
// CacheBudget.
func TestFastCacheBudgetFollowsView(t *testing.T) {
	p, _ := admitFixture(t, 100)
	small := p.eng.CacheLimit()
	if small <= 0 || small > answer.CacheBudget() {
		t.Fatalf("budget %d for 100 names (ceiling %d)", small, answer.CacheBudget())
	}
	var rs []libdns.Record
	for i := range 20000 {
		rs = append(rs, libdns.Address{Name: fmt.Sprintf("more%d", i), TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.9")})
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs[:10000]); err != nil {
		t.Fatal(err)
	}
	mid := p.eng.CacheLimit()
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs[10000:]); err != nil {
		t.Fatal(err)
	}
	big := p.eng.CacheLimit()
	// Past the floor, in proportion to the names (give or take the apex's).
	if r := float64(big) / float64(mid); mid <= small || r < 1.98 || r > 2.0 {
		t.Fatalf("budgets %d, %d, %d for 100, 10,100 and 20,100 names: not following the names", small, mid, big)
	}
	defer answer.SetCacheBudget(answer.SetCacheBudget(mid))
	p.eng.DropCache()
	if got := p.eng.CacheLimit(); got != mid {
		t.Fatalf("budget %d with a ceiling of %d", got, mid)
	}
}

// TestFastCacheStaticBySize: a small view's cache keeps its static
// answers (A, AAAA, TXT, CNAME, NXDOMAIN) from their second sighting on,
// not their first, and answers them as hits; a view of more names than
// its budget holds answers of keeps none of them (staticReply answers
// each time) and has a hot table instead.
func TestFastCacheStaticBySize(t *testing.T) {
	src := netip.MustParseAddr("192.0.2.1")
	buf := make([]byte, 4096)
	for _, tc := range []struct {
		names  int
		stored bool
	}{{50, true}, {2000, true}, {3000, false}} {
		p, _ := admitFixture(t, tc.names)
		if _, err := p.AppendRecords(context.Background(), "example.test.", []libdns.Record{
			libdns.Address{Name: "h0", TTL: time.Minute, IP: netip.MustParseAddr("2001:db8::1")},
			libdns.TXT{Name: "h1", TTL: time.Minute, Text: "v=1"},
			libdns.CNAME{Name: "alias", TTL: time.Minute, Target: "h2.example.test."},
		}); err != nil {
			t.Fatal(err)
		}
		qs := [][]byte{
			buildQuery(1, 1, 0, []string{"h0", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232),
			buildQuery(2, 1, 0, []string{"h0", "example", "test"}, dns.TypeAAAA, dns.ClassINET, 1, 1232),
			buildQuery(3, 1, 0, []string{"H1", "example", "test"}, dns.TypeTXT, dns.ClassINET, 0, 0),
			buildQuery(4, 1, 0, []string{"alias", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232),
			buildQuery(5, 1, 0, []string{"nope", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232),
		}
		for _, q := range qs {
			if p.eng.StaticReply(q, buf, false) == nil {
				t.Fatalf("%d names: %x is not a static answer", tc.names, q)
			}
		}
		ask := func() {
			for _, q := range qs {
				if got, want := p.RespondUDP(q, buf, src), p.RespondWire(q, src, false); !bytes.Equal(got, want) {
					t.Fatalf("%d names: %x: fast path differs\nfast    %x\ngeneral %x", tc.names, q, got, want)
				}
			}
		}
		ask()
		if n, _, _ := p.eng.CacheStats(); n != 0 {
			t.Fatalf("%d names: %d entries after one sighting", tc.names, n)
		}
		ask()
		n, _, _ := p.eng.CacheStats()
		if tc.stored && n != len(qs) {
			t.Fatalf("%d names: %d entries after two sightings of %d static answers, want them all", tc.names, n, len(qs))
		}
		if !tc.stored && n != 0 {
			t.Fatalf("%d names: %d entries after two sightings of %d static answers, want none", tc.names, n, len(qs))
		}
		for id := range uint16(64) { // offered to the hot table one time in eight
			binary.BigEndian.PutUint16(qs[0], id)
			ask()
		}
		if h := p.eng.HotEntries(); tc.stored != (h == 0) {
			t.Fatalf("%d names: %d hot entries", tc.names, h)
		}
		if a := testing.AllocsPerRun(50, func() { _ = p.RespondUDP(qs[3], buf, src) }); a != 0 {
			t.Errorf("%d names: %v allocations", tc.names, a)
		}
	}
}

// TestFastHotTable: static answers asked often enter the hot table (and
// are answered from it with the general path's bytes and no allocation);
// asked once they do not; a small cache budget has no hot table.
func TestFastHotTable(t *testing.T) {
	p, _ := admitFixture(t, 3000) // too many names for the cache to keep their answers: 300 of them asked
	src := netip.MustParseAddr("192.0.2.1")
	buf := make([]byte, 4096)
	ask := func(id uint16) {
		for i := range 300 {
			q := buildQuery(id, 1, 0, []string{fmt.Sprintf("H%d", i), "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232)
			if i%3 == 0 {
				q = withECS(q, 1, 24, []byte{198, 51, 100}, false)
			}
			if got, want := p.RespondUDP(q, buf, src), p.RespondWire(q, src, false); !bytes.Equal(got, want) {
				t.Fatalf("%x: fast path differs\nfast    %x\ngeneral %x", q, got, want)
			}
		}
	}
	ask(1)
	if n := p.eng.HotEntries(); n > 2 {
		t.Fatalf("%d hot entries after one sighting of 300 answers", n)
	}
	for id := range uint16(64) {
		ask(id) // offered one time in eight: about eight offers each
	}
	if n := p.eng.HotEntries(); n < 200 { // 300 keys in 1,024 slots: some collide
		t.Fatalf("%d hot entries after 65 sightings of 300 answers", n)
	}
	q := buildQuery(5, 1, 0, []string{"h7", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232)
	if a := testing.AllocsPerRun(100, func() { _ = p.RespondUDP(q, buf, src) }); a != 0 {
		t.Errorf("%v allocations answering from the hot table", a)
	}
	defer answer.SetCacheBudget(answer.SetCacheBudget(2000))
	p.eng.DropCache()
	for id := range uint16(24) {
		ask(id)
	}
	if n := p.eng.HotEntries(); n != 0 {
		t.Fatalf("%d hot entries with a budget of 2,000 bytes", n)
	}
}
