package memory_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testknot"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// diffZone is the zone TestKnotDifferential serves from knotd and from the
// memory zone: addresses, CNAME chains (in zone, out of zone, dangling,
// looping), TXT with several strings and a long one, MX and SRV with in-zone
// and out-of-zone targets, empty non-terminals, wildcards (RFC 4592's cases:
// blocking by an existing name and by an empty non-terminal, a wildcard
// CNAME, NODATA at a wildcard) and delegations (glue, a CNAME into one, a
// delegation whose server is in the parent's data).
var diffZone = `$ORIGIN example.test.
$TTL 300
; serial 2: the memory zone bumps serial 1 once, loading the records in one AppendRecords
@          SOA   ns1 hostmaster 2 60 60 600 30
@          NS    ns1
@          NS    ns2.other.test.
@          MX    10 mail
@          MX    20 mx.other.test.
@          TXT   "v=spf1 -all"
ns1        A     192.0.2.53
ns1        AAAA  2001:db8::53
www        A     192.0.2.1
www        A     192.0.2.2
www        AAAA  2001:db8::1
mail       A     192.0.2.25
app        CNAME www
chain1     CNAME chain2
chain2     CNAME www
out        CNAME www.example.net.
dangling   CNAME nothere
loop1      CNAME loop2
loop2      CNAME loop1
towild     CNAME foo.wild
towc       CNAME bar.wc
txt        TXT   "first" "second" "third"
txt1       TXT   "one string"
txtempty   TXT   ""
txtq       TXT   "say \"hi\"" "back\\slash"
long       TXT   "` + strings.Repeat("a", 255) + `" "` + strings.Repeat("b", 255) + `" "` + strings.Repeat("c", 255) + `" "` + strings.Repeat("d", 255) + `" "` + strings.Repeat("e", 255) + `" "` + strings.Repeat("f", 255) + `" "` + strings.Repeat("g", 255) + `" "` + strings.Repeat("h", 255) + `" "` + strings.Repeat("i", 255) + `" "` + strings.Repeat("j", 255) + `" "` + strings.Repeat("k", 255) + `" "` + strings.Repeat("l", 255) + `"
a.b.c      A     192.0.2.3
_sip._tcp  SRV   0 5 5060 www
_out._tcp  SRV   0 5 443 srv.other.test.
mx2        MX    10 www
mx2        MX    20 ns.sub
caa        CAA   0 issue "ca.example.net"
ptr        PTR   www
*.wild     A     192.0.2.100
*.wild     TXT   "wild"
x.wild     A     192.0.2.101
*.wc       CNAME www
*.wchain   CNAME app
*.deep     A     192.0.2.8
y.ent.deep A     192.0.2.7
*.nod      MX    10 mail
*.srvw     SRV   0 0 80 www
*.mxw      MX    10 www
sub        NS    ns.sub
sub        NS    ns.other.test.
ns.sub     A     192.0.2.200
ns.sub     AAAA  2001:db8::200
tosub      CNAME host.sub
sub2       NS    ns1
sub3       NS    ns3.other.test.
`

// manyAddrs adds a name with 240 addresses (an amplification case).
func manyAddrs() string {
	var b strings.Builder
	for i := range 240 {
		fmt.Fprintf(&b, "many A 198.51.%d.%d\n", i/200, i%200+1)
	}
	return b.String()
}

// loadZone fills a memory Provider with zone text: the SOA and apex NS
// through AddZoneWith, every other record through AppendRecords as a
// libdns.RR in presentation form.
func loadZone(t *testing.T, p *memory.Provider, origin, text string) {
	t.Helper()
	zp := dns.NewZoneParser(strings.NewReader(text), origin, "")
	cfg := memory.DefaultZoneConfig()
	cfg.TTL *= 5 // 300s, as the zone file's
	cfg.NS = nil
	var recs []libdns.Record
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		h := rr.Header()
		switch {
		case h.Rrtype == dns.TypeSOA:
		case h.Rrtype == dns.TypeNS && h.Name == origin:
			cfg.NS = append(cfg.NS, rr.(*dns.NS).Ns)
		default:
			data := strings.TrimPrefix(rr.String(), h.String())
			recs = append(recs, libdns.RR{Name: h.Name, TTL: time.Duration(h.Ttl) * time.Second, Type: dns.TypeToString[h.Rrtype], Data: data})
		}
	}
	if err := zp.Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.AddZoneWith(origin, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendRecords(context.Background(), origin, recs); err != nil {
		t.Fatal(err)
	}
}

// diffQuery is one query of the differential test.
type diffQuery struct {
	label string
	wire  []byte
	tcp   bool
}

func mkQuery(name string, qtype uint16, edns int, do bool) []byte {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = false
	m.Id = 0x1234
	if edns > 0 {
		m.SetEdns0(uint16(edns), do)
	}
	b, err := m.Pack()
	if err != nil {
		panic(err)
	}
	return b
}

// diffQueries builds the query mix: every name with every type over UDP
// with EDNS 1232, a subset without EDNS, with a 4096-byte buffer, with DO,
// over TCP, and hand-made malformed messages.
func diffQueries() []diffQuery {
	names := []string{
		"example.test.", "ns1", "www", "WwW", "mail", "app", "chain1", "out", "dangling", "loop1",
		"towild", "towc", "txt", "txt1", "txtempty", "txtq", "long", "a.b.c", "b.c", "c", "x.a.b.c",
		"_sip._tcp", "_tcp", "_out._tcp", "mx2", "caa", "ptr", "nope", "below.www", "below.app",
		"foo.wild", "a.b.wild", "x.wild", "y.x.wild", "*.wild", "wild", "foo.wc", "a.b.wc", "FOO.wc",
		"q.wchain", "foo.deep", "ent.deep", "z.ent.deep", "y.ent.deep", "foo.nod", "foo.srvw", "_x._tcp.srvw",
		"foo.mxw", "sub", "ns.sub", "host.sub", "a.b.sub", "tosub", "sub2", "x.sub2", "sub3", "many",
	}
	types := []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeMX, dns.TypeNS, dns.TypeCNAME,
		dns.TypeSOA, dns.TypeSRV, dns.TypeANY, dns.TypeDS}
	fq := func(n string) string {
		if strings.HasSuffix(n, ".") {
			return n
		}
		return n + ".example.test."
	}
	var qs []diffQuery
	for _, n := range names {
		for _, t := range types {
			qs = append(qs, diffQuery{label: fmt.Sprintf("%s/%s/edns", n, dns.TypeToString[t]), wire: mkQuery(fq(n), t, 1232, false)})
		}
	}
	for _, c := range []struct {
		n string
		t uint16
	}{{"www", dns.TypeA}, {"foo.wild", dns.TypeA}, {"host.sub", dns.TypeA}, {"example.test.", dns.TypeANY},
		{"example.test.", dns.TypeNS}, {"mx2", dns.TypeMX}, {"long", dns.TypeTXT}, {"many", dns.TypeA},
		{"txt", dns.TypeTXT}, {"nope", dns.TypeA}, {"tosub", dns.TypeA}, {"www", dns.TypeANY}} {
		qs = append(qs,
			diffQuery{label: c.n + "/" + dns.TypeToString[c.t] + "/noedns", wire: mkQuery(fq(c.n), c.t, 0, false)},
			diffQuery{label: c.n + "/" + dns.TypeToString[c.t] + "/4096", wire: mkQuery(fq(c.n), c.t, 4096, false)},
			diffQuery{label: c.n + "/" + dns.TypeToString[c.t] + "/512", wire: mkQuery(fq(c.n), c.t, 512, false)},
			diffQuery{label: c.n + "/" + dns.TypeToString[c.t] + "/do", wire: mkQuery(fq(c.n), c.t, 1232, true)},
			diffQuery{label: c.n + "/" + dns.TypeToString[c.t] + "/tcp", wire: mkQuery(fq(c.n), c.t, 1232, false), tcp: true},
		)
	}
	qs = append(qs, malformedQueries()...)
	return qs
}

// malformedQueries are the wire-hygiene cases: errors with and without
// EDNS, truncated questions, trailing bytes, counts that name missing
// records.
func malformedQueries() []diffQuery {
	base := mkQuery("www.example.test.", dns.TypeA, 0, false)
	withOPT := mkQuery("www.example.test.", dns.TypeA, 1232, false)
	set := func(b []byte, f func(b []byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	qend := len(base) // end of the question
	return []diffQuery{
		{label: "bad/notify-edns", wire: set(withOPT, func(b []byte) []byte { b[2] = b[2]&^0x78 | dns.OpcodeNotify<<3; return b })},
		{label: "bad/status-edns", wire: set(withOPT, func(b []byte) []byte { b[2] = b[2]&^0x78 | dns.OpcodeStatus<<3; return b })},
		{label: "bad/status", wire: set(base, func(b []byte) []byte { b[2] = b[2]&^0x78 | dns.OpcodeStatus<<3; return b })},
		{label: "bad/opcode15-edns", wire: set(withOPT, func(b []byte) []byte { b[2] |= 15 << 3; return b })},
		{label: "bad/qdcount0-edns", wire: set(withOPT, func(b []byte) []byte {
			b[5] = 0
			return append(b[:12], b[qend:]...)
		})},
		{label: "bad/qdcount2-edns", wire: set(withOPT, func(b []byte) []byte {
			b[5] = 2
			q := append([]byte(nil), b[12:qend]...)
			return append(append(b[:qend:qend], q...), withOPT[qend:]...)
		})},
		{label: "bad/question-cut-after-name", wire: set(base, func(b []byte) []byte { return b[:qend-4] })},
		{label: "bad/question-cut-in-type", wire: set(base, func(b []byte) []byte { return b[:qend-3] })},
		{label: "bad/question-cut-in-name", wire: set(base, func(b []byte) []byte { return b[:16] })},
		{label: "bad/trailing-byte", wire: set(base, func(b []byte) []byte { return append(b, 0) })},
		{label: "bad/trailing-garbage-edns", wire: set(withOPT, func(b []byte) []byte { return append(b, 1, 2, 3, 4) })},
		{label: "bad/arcount-too-big", wire: set(base, func(b []byte) []byte { b[11] = 1; return b })},
		{label: "bad/ancount-too-big-edns", wire: set(withOPT, func(b []byte) []byte { b[7] = 2; return b })},
		{label: "bad/nscount-too-big", wire: set(base, func(b []byte) []byte { b[9] = 1; return b })},
		{label: "bad/two-opt", wire: set(withOPT, func(b []byte) []byte { b[11] = 2; return append(b, withOPT[qend:]...) })},
		{label: "bad/edns-version-1", wire: set(withOPT, func(b []byte) []byte { b[qend+6] = 1; return b })},
		{label: "bad/opt-truncated", wire: set(withOPT, func(b []byte) []byte { return b[:len(b)-3] })},
		{label: "bad/chaos-class", wire: mkChaos()},
		{label: "bad/class-none-edns", wire: set(withOPT, func(b []byte) []byte { b[qend-1] = 254; return b })},
		{label: "bad/qtype-opt-edns", wire: set(withOPT, func(b []byte) []byte { b[qend-3] = 41; return b })},
		{label: "bad/label-too-long", wire: set(base, func(b []byte) []byte { b[12] = 64; return b })},
		{label: "bad/pointer-loop", wire: set(base, func(b []byte) []byte {
			return append(b[:12], 0xC0, 12, 0, 1, 0, 1)
		})},
		{label: "ok/rd-set", wire: set(base, func(b []byte) []byte { b[2] |= 1; return b })},
		{label: "ok/cd-set-edns", wire: set(withOPT, func(b []byte) []byte { b[3] |= 0x10; return b })},
		{label: "ok/outside-zone", wire: mkQuery("www.example.net.", dns.TypeA, 1232, false)},
		{label: "ok/axfr-udp", wire: mkQuery("example.test.", dns.TypeAXFR, 1232, false)},
	}
}

func mkChaos() []byte {
	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	m.RecursionDesired = false
	b, _ := m.Pack()
	return b
}

// norm is a reply reduced to what the comparison looks at: header fields,
// the question, each section as a sorted list of records (RRset order is
// not compared) and the OPT's shape.
func norm(b []byte) string {
	if b == nil {
		return "no reply"
	}
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		return "unparsable: " + err.Error()
	}
	var s strings.Builder
	rcode := m.Rcode
	fmt.Fprintf(&s, "opcode=%s rcode=%s aa=%v tc=%v rd=%v ra=%v cd=%v ad=%v\n", dns.OpcodeToString[m.Opcode],
		dns.RcodeToString[rcode], m.Authoritative, m.Truncated, m.RecursionDesired, m.RecursionAvailable, m.CheckingDisabled, m.AuthenticatedData)
	for _, q := range m.Question {
		fmt.Fprintf(&s, "question %s\n", q.String())
	}
	sec := func(name string, rrs []dns.RR) {
		var lines []string
		for _, rr := range rrs {
			if o, ok := rr.(*dns.OPT); ok {
				var codes []string
				for _, op := range o.Option {
					codes = append(codes, fmt.Sprint(op.Option()))
				}
				fmt.Fprintf(&s, "opt size=%d do=%v version=%d extrcode=%d options=%v\n", o.UDPSize(), o.Do(), o.Version(), o.ExtendedRcode(), codes)
				continue
			}
			lines = append(lines, rr.String())
		}
		slices.Sort(lines)
		for _, l := range lines {
			fmt.Fprintf(&s, "%s %s\n", name, l)
		}
	}
	sec("answer", m.Answer)
	sec("authority", m.Ns)
	sec("additional", m.Extra)
	return s.String()
}

// deliberate lists the queries whose answers differ from Knot's on
// purpose, with the reason.
var deliberate = map[string]string{
	// RFC 8482 section 4.1 lets a server answer ANY with any non-empty
	// subset; over TCP the memory zone answers with every RRset, where Knot
	// answers with one as over UDP.
	"example.test./ANY/tcp": "RFC 8482 4.1: full ANY over TCP",
	"www/ANY/tcp":           "RFC 8482 4.1: full ANY over TCP",
	// Knot drops these malformed queries; the memory zone answers FORMERR,
	// "the name server was unable to interpret the query" (RFC 1035
	// section 4.1.1), so the client does not wait for a timeout.
	"bad/question-cut-after-name": "RFC 1035 4.1.1: FORMERR, Knot drops",
	"bad/question-cut-in-type":    "RFC 1035 4.1.1: FORMERR, Knot drops",
	"bad/question-cut-in-name":    "RFC 1035 4.1.1: FORMERR, Knot drops",
	"bad/label-too-long":          "RFC 1035 4.1.1: FORMERR, Knot drops",
	"bad/pointer-loop":            "RFC 1035 4.1.1: FORMERR, Knot drops",
	"bad/qdcount2-edns":           "RFC 9619: FORMERR for QDCOUNT 2, Knot drops",
	// Knot's FORMERR carries no OPT even when the query had a whole one;
	// RFC 6891 section 6.1.1 says a reply to a query with OPT carries one.
	"bad/two-opt":               "RFC 6891 6.1.1: OPT in the FORMERR",
	"bad/trailing-garbage-edns": "RFC 6891 6.1.1: OPT in the FORMERR",
	// Knot clears CD; RFC 4035 section 3.1.6 says an authoritative server
	// copies it from the query.
	"ok/cd-set-edns": "RFC 4035 3.1.6: CD copied",
	// The memory zone serves class IN only: CH-class version.bind (a BIND
	// convention, no standard) is REFUSED (RFC 1035 section 4.1.1).
	"bad/chaos-class": "no CH class: REFUSED",
	// NOTIFY is not implemented by the answering path (RFC 1035 4.1.1
	// NOTIMP); Knot, a primary here, answers NOTAUTH (RFC 1996).
	"bad/notify-edns": "RFC 1035 4.1.1: NOTIMP for NOTIFY",
}

// TestKnotDifferential answers the same queries from knotd and from the
// memory zone (RespondWire, and RespondUDP twice: filling the fast cache
// and from it, with and without a zone-wide answer hook that has no
// opinion) and requires the same replies, except those listed in
// deliberate with their RFC reference.
func TestKnotDifferential(t *testing.T) {
	zoneText := diffZone + manyAddrs()
	k := testknot.Start(t, testknot.Config{Zone: "example.test.", ZoneText: zoneText})
	p := new(memory.Provider)
	loadZone(t, p, "example.test.", zoneText)
	hooked := new(memory.Provider)
	loadZone(t, hooked, "example.test.", zoneText)
	hooked.SetZoneAnswerFunc("example.test.", func(netip.Prefix, string, string, []libdns.Record) ([]libdns.Record, int) { return nil, 0 })

	src := netip.MustParseAddr("127.0.0.1")
	qs := diffQueries()
	buf := make([]byte, 4096)
	// Ask knotd first, 16 queries at a time (the 2 s wait for the messages
	// it drops then overlaps; it is a hang guard, not a speed assertion).
	replies := make([][]byte, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, q := range qs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			replies[i], errs[i] = exchange(k.Addr, q.wire, q.tcp, 2*time.Second)
		}()
	}
	wg.Wait()
	differ, allowed := 0, 0
	for i, q := range qs {
		if errs[i] != nil {
			t.Fatalf("%s: knotd: %v", q.label, errs[i])
		}
		want := norm(replies[i])
		got := p.RespondWire(q.wire, src, q.tcp)
		if !q.tcp {
			for _, prov := range []*memory.Provider{p, hooked} {
				for i := range 2 {
					if fast := prov.RespondUDP(q.wire, buf, src); !bytes.Equal(fast, got) {
						t.Errorf("%s: RespondUDP (round %d, hooked %v) differs from RespondWire:\n%s\nvs\n%s", q.label, i, prov == hooked, norm(fast), norm(got))
					}
				}
			}
		} else if h := hooked.RespondWire(q.wire, src, true); !bytes.Equal(h, got) {
			t.Errorf("%s: with a hook the reply differs:\n%s\nvs\n%s", q.label, norm(h), norm(got))
		}
		if g := norm(got); g != want {
			if why, ok := deliberate[q.label]; ok {
				allowed++
				t.Logf("%s: differs on purpose (%s)", q.label, why)
				continue
			}
			differ++
			t.Errorf("%s: memory and knotd differ\nmemory:\n%sknotd:\n%s", q.label, g, want)
		}
	}
	t.Logf("%d queries: %d differ from knotd, %d of them on purpose", len(qs), differ+allowed, allowed)
}
