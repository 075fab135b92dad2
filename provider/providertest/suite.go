package providertest

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider"
	"github.com/libdns/libdns"
)

// callTimeout bounds every call the suite makes, so a hung provider fails
// the test instead of hanging it.
const callTimeout = 30 * time.Second

// apexTarget is the target of the apex CNAME the suite tries to set; only
// an apex CNAME with this target is ever cleaned up.
const apexTarget = "gslbct-apex-target.example.net."

// Run checks that p follows the libdns v1 semantics gslbkit relies on, in
// subtests of t, against zone (e.g. "example.test."):
//
//   - GetRecords returns typed records (libdns.Address, TXT, CNAME, …) with
//     relative names; the SOA (twice, as an AXFR returns it), the apex NS
//     and glue may appear and are tolerated;
//   - SetRecords replaces exactly the (name, type) RRsets it is given, one
//     or several per call, and leaves every other RRset alone; it changes
//     TTLs;
//   - AppendRecords adds without replacing and returns exactly the
//     records it created (not those already there);
//   - DeleteRecords deletes by name, type, TTL and value, an empty type,
//     TTL or value acting as a wildcard, ignores absent records, and
//     returns exactly the records it deleted, as they were in the zone;
//   - TXT text survives byte for byte: spaces, quotes, semicolons,
//     backslashes, non-ASCII, strings longer than 255 bytes; a TXT given
//     in presentation form (a libdns.RR whose data is quoted strings)
//     reads back in the same form, string for string (unless
//     caps.NoTXTStrings);
//   - a CNAME replaces a CNAME; a CNAME beside other data and a CNAME at
//     the apex are handled as caps says (refused, ignored, or accepted);
//   - concurrent writes to different names all land; a cancelled context
//     fails the call without changing the zone;
//   - ListZones lists the zone, when caps.ListZones.
//
// Run only creates names that start with caps.Prefix ("gslbct-" by
// default), deletes leftovers of such names before it starts, and deletes
// its records when it ends. Run must not be called in parallel on the same
// zone. Typical use:
//
//	providertest.Run(t, p, "example.test.", providertest.Capabilities{})
func Run(t *testing.T, p provider.Provider, zone string, caps Capabilities) {
	t.Helper()
	if caps.Prefix == "" {
		caps.Prefix = "gslbct-"
	}
	s := &suite{p: p, zone: zone, caps: caps}
	s.clean(t)
	t.Cleanup(func() { s.clean(t) })

	t.Run("GetRecords", s.testGetRecords)
	t.Run("SetRecords", func(t *testing.T) {
		t.Run("CreatesRRset", s.testSetCreates)
		t.Run("ReplacesOnlyGivenPairs", s.testSetReplacesOnlyGiven)
		t.Run("SeveralRRsetsAtOnce", s.testSetSeveral)
		t.Run("ChangesTTL", s.testSetTTL)
	})
	t.Run("AppendRecords", s.testAppend)
	t.Run("DeleteRecords", func(t *testing.T) {
		t.Run("Exact", s.testDeleteExact)
		t.Run("TTLWildcard", s.testDeleteTTLWildcard)
		t.Run("ValueWildcard", s.testDeleteValueWildcard)
		t.Run("TypeWildcard", s.testDeleteTypeWildcard)
		t.Run("AbsentIgnored", s.testDeleteAbsent)
	})
	t.Run("TXT", s.testTXT)
	t.Run("CNAME", func(t *testing.T) {
		t.Run("Replace", s.testCNAMEReplace)
		t.Run("BesideOtherData", s.testCNAMEBesideData)
		t.Run("AtApex", s.testApexCNAME)
	})
	t.Run("ConcurrentWrites", s.testConcurrent)
	t.Run("CancelledContext", s.testCancelled)
	if caps.ListZones {
		t.Run("ListZones", s.testListZones)
	}
}

type suite struct {
	p    provider.Provider
	zone string
	caps Capabilities
}

func (s *suite) name(n string) string { return s.caps.Prefix + n }

func (s *suite) ctx(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), callTimeout)
}

// ttl is the TTL the provider is expected to store for d.
func (s *suite) ttl(d time.Duration) time.Duration { return max(d, s.caps.MinTTL) }

func a(name, ip string, ttl time.Duration) libdns.Record {
	return libdns.Address{Name: name, IP: netip.MustParseAddr(ip), TTL: ttl}
}

func txt(name, text string, ttl time.Duration) libdns.Record {
	return libdns.TXT{Name: name, Text: text, TTL: ttl}
}

func cname(name, target string, ttl time.Duration) libdns.Record {
	return libdns.CNAME{Name: name, Target: target, TTL: ttl}
}

// read returns the zone's records, normalised, after checking they are
// typed and relative.
func (s *suite) read(t *testing.T) []rec {
	t.Helper()
	ctx, cancel := s.ctx(t)
	defer cancel()
	got, err := s.p.GetRecords(ctx, s.zone)
	fatalIfErr(t, err, "GetRecords(%q)", s.zone)
	out := make([]rec, 0, len(got))
	for _, r := range got {
		out = append(out, normalise(r, s.zone))
	}
	return out
}

func (s *suite) set(t *testing.T, recs ...libdns.Record) {
	t.Helper()
	ctx, cancel := s.ctx(t)
	defer cancel()
	_, err := s.p.SetRecords(ctx, s.zone, recs)
	fatalIfErr(t, err, "SetRecords(%v)", recs)
}

func (s *suite) appendRecs(t *testing.T, recs ...libdns.Record) []libdns.Record {
	t.Helper()
	ctx, cancel := s.ctx(t)
	defer cancel()
	got, err := s.p.AppendRecords(ctx, s.zone, recs)
	fatalIfErr(t, err, "AppendRecords(%v)", recs)
	return got
}

func (s *suite) del(t *testing.T, recs ...libdns.Record) []libdns.Record {
	t.Helper()
	ctx, cancel := s.ctx(t)
	defer cancel()
	got, err := s.p.DeleteRecords(ctx, s.zone, recs)
	fatalIfErr(t, err, "DeleteRecords(%v)", recs)
	return got
}

// expect asserts the data (and TTL, when ttl > 0) of the RRset at (name, typ).
func (s *suite) expect(t *testing.T, all []rec, name, typ string, ttl time.Duration, want ...string) {
	t.Helper()
	set := rrset(all, name, typ)
	w := make([]string, 0, len(want))
	for _, d := range want {
		w = append(w, normalise(libdns.RR{Name: name, Type: typ, Data: d}, s.zone).Data)
	}
	check(t, sameElements(datas(set), w), "RRset %s %s: got %q, want %q", name, typ, datas(set), w)
	if ttl > 0 {
		for _, r := range set {
			check(t, r.TTL == s.ttl(ttl), "TTL of %s %s %q: got %v, want %v", name, typ, r.Data, r.TTL, s.ttl(ttl))
		}
	}
}

// clean deletes every record whose name starts with the suite's prefix,
// record by record with exact values so it works on any provider.
func (s *suite) clean(t *testing.T) {
	t.Helper()
	ctx, cancel := s.ctx(t)
	defer cancel()
	got, err := s.p.GetRecords(ctx, s.zone)
	if err != nil {
		t.Errorf("providertest: cleaning up: GetRecords: %v", err)
		return
	}
	var mine []libdns.Record
	for _, r := range got {
		if n := normalise(r, s.zone); strings.HasPrefix(n.Name, s.caps.Prefix) ||
			(n.Name == "@" && n.Type == "CNAME" && n.Data == apexTarget) {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return
	}
	if _, err := s.p.DeleteRecords(ctx, s.zone, mine); err != nil {
		t.Errorf("providertest: cleaning up: DeleteRecords: %v", err)
	}
}

func (s *suite) testGetRecords(t *testing.T) {
	n := s.name("get")
	s.set(t, a(n, "192.0.2.1", time.Minute), txt(n, "hello", time.Minute))
	ctx, cancel := s.ctx(t)
	defer cancel()
	got, err := s.p.GetRecords(ctx, s.zone)
	fatalIfErr(t, err, "")
	seen := map[key]int{}
	for _, r := range got {
		rr := r.RR()
		check(t, rr.Name != "", "record %+v has an empty name (want \"@\" for the apex)", rr)
		check(t, !strings.HasSuffix(rr.Name, "."), "record %+v has a fully qualified name; libdns names are relative", rr)
		switch rr.Type {
		case "A", "AAAA", "CNAME", "TXT", "NS", "MX", "SRV", "CAA":
			_, isRR := r.(libdns.RR)
			check(t, !isRR, "GetRecords returned an opaque libdns.RR for type %s; want the typed struct", rr.Type)
		}
		k := normalise(r, s.zone).key
		seen[k]++
		// An AXFR starts and ends with the SOA: tolerate it twice.
		if k.Type != "SOA" {
			check(t, seen[k] <= 1, "record %+v returned twice", k)
		}
	}
	all := s.read(t)
	s.expect(t, all, n, "A", time.Minute, "192.0.2.1")
	s.expect(t, all, n, "TXT", time.Minute, "hello")
}

func (s *suite) testSetCreates(t *testing.T) {
	n := s.name("set-create")
	s.set(t, a(n, "192.0.2.1", time.Minute), a(n, "192.0.2.2", time.Minute))
	s.expect(t, s.read(t), n, "A", time.Minute, "192.0.2.1", "192.0.2.2")
}

func (s *suite) testSetReplacesOnlyGiven(t *testing.T) {
	n, m := s.name("set-replace"), s.name("set-replace-other")
	s.set(t, a(n, "192.0.2.1", time.Minute), a(n, "192.0.2.2", time.Minute),
		txt(n, "keep me", time.Minute), a(m, "192.0.2.3", time.Minute))
	s.set(t, a(n, "192.0.2.4", time.Minute))
	all := s.read(t)
	s.expect(t, all, n, "A", time.Minute, "192.0.2.4")
	s.expect(t, all, n, "TXT", time.Minute, "keep me")
	s.expect(t, all, m, "A", time.Minute, "192.0.2.3")
}

func (s *suite) testSetSeveral(t *testing.T) {
	n, m := s.name("set-several-a"), s.name("set-several-b")
	s.set(t, a(n, "192.0.2.1", time.Minute), a(m, "2001:db8::1", time.Minute), a(m, "2001:db8::2", time.Minute))
	s.set(t, a(n, "192.0.2.5", time.Minute), a(n, "192.0.2.6", time.Minute), a(m, "2001:db8::3", time.Minute))
	all := s.read(t)
	s.expect(t, all, n, "A", time.Minute, "192.0.2.5", "192.0.2.6")
	s.expect(t, all, m, "AAAA", time.Minute, "2001:db8::3")
}

func (s *suite) testSetTTL(t *testing.T) {
	n := s.name("set-ttl")
	s.set(t, a(n, "192.0.2.1", time.Minute))
	s.expect(t, s.read(t), n, "A", time.Minute, "192.0.2.1")
	s.set(t, a(n, "192.0.2.1", 2*time.Minute))
	s.expect(t, s.read(t), n, "A", 2*time.Minute, "192.0.2.1")
}

func (s *suite) testAppend(t *testing.T) {
	n := s.name("append")
	s.set(t, a(n, "192.0.2.1", time.Minute))
	got := s.appendRecs(t, a(n, "192.0.2.1", time.Minute), a(n, "192.0.2.2", time.Minute))
	s.returned(t, "AppendRecords", got, n+" A 192.0.2.2")
	got = s.appendRecs(t, txt(n, "appended", time.Minute))
	s.returned(t, "AppendRecords", got, n+" TXT appended")
	all := s.read(t)
	s.expect(t, all, n, "A", time.Minute, "192.0.2.1", "192.0.2.2")
	s.expect(t, all, n, "TXT", time.Minute, "appended")
}

// returned checks that a write returned exactly the records want, as
// "name type data" lines, each with a TTL.
func (s *suite) returned(t *testing.T, call string, got []libdns.Record, want ...string) {
	t.Helper()
	lines := make([]string, 0, len(got))
	for _, r := range got {
		n := normalise(r, s.zone)
		lines = append(lines, n.Name+" "+n.Type+" "+n.Data)
		check(t, n.TTL > 0, "%s returned %s %s with no TTL (libdns: the records as they were in the zone)", call, n.Name, n.Type)
	}
	check(t, sameElements(lines, want), "%s returned %q; want exactly %q (libdns: what was created or deleted)", call, lines, want)
}

func (s *suite) testDeleteExact(t *testing.T) {
	n := s.name("del-exact")
	s.set(t, a(n, "192.0.2.1", time.Minute), a(n, "192.0.2.2", time.Minute))
	got := s.del(t, a(n, "192.0.2.1", s.ttl(time.Minute)))
	s.returned(t, "DeleteRecords", got, n+" A 192.0.2.1")
	s.expect(t, s.read(t), n, "A", time.Minute, "192.0.2.2")
}

func (s *suite) testDeleteTTLWildcard(t *testing.T) {
	n := s.name("del-ttl")
	s.set(t, a(n, "192.0.2.1", time.Minute), a(n, "192.0.2.2", time.Minute))
	got := s.del(t, libdns.RR{Name: n, Type: "A", Data: "192.0.2.2"})
	s.returned(t, "DeleteRecords", got, n+" A 192.0.2.2")
	s.expect(t, s.read(t), n, "A", time.Minute, "192.0.2.1")
}

func (s *suite) testDeleteValueWildcard(t *testing.T) {
	n := s.name("del-value")
	s.set(t, a(n, "192.0.2.1", time.Minute), a(n, "192.0.2.2", time.Minute), txt(n, "stays", time.Minute))
	got := s.del(t, libdns.RR{Name: n, Type: "A"})
	s.returned(t, "DeleteRecords", got, n+" A 192.0.2.1", n+" A 192.0.2.2")
	all := s.read(t)
	s.expect(t, all, n, "A", 0)
	s.expect(t, all, n, "TXT", time.Minute, "stays")
}

func (s *suite) testDeleteTypeWildcard(t *testing.T) {
	n, m := s.name("del-type"), s.name("del-type-other")
	s.set(t, a(n, "192.0.2.1", time.Minute), txt(n, "goes", time.Minute), a(m, "192.0.2.9", time.Minute))
	got := s.del(t, libdns.RR{Name: n})
	s.returned(t, "DeleteRecords", got, n+" A 192.0.2.1", n+" TXT goes")
	all := s.read(t)
	check(t, len(rrset(all, n, "")) == 0, "records left at %s after deleting with an empty type: %v", n, rrset(all, n, ""))
	s.expect(t, all, m, "A", time.Minute, "192.0.2.9")
}

func (s *suite) testDeleteAbsent(t *testing.T) {
	n := s.name("del-absent")
	s.set(t, a(n, "192.0.2.1", time.Minute))
	got := s.del(t, a(n, "192.0.2.99", time.Minute), a(s.name("del-absent-nowhere"), "192.0.2.1", time.Minute))
	s.returned(t, "DeleteRecords", got)
	s.expect(t, s.read(t), n, "A", time.Minute, "192.0.2.1")
}

// txtCases are TXT values gslbkit writes (heartbeats carry key=value pairs
// separated by semicolons) and the quoting traps around them.
func txtCases() []struct{ name, text string } {
	long := strings.Repeat("0123456789abcdef", 20) // 320 bytes: two strings on the wire
	return []struct{ name, text string }{
		{"plain", "hello"},
		{"spaces", "hello  wide world "},
		{"quotes", `say "hi" and "bye"`},
		{"semicolons", "v=gslb1; cluster=eu-west; ts=1700000000"},
		{"backslash", `C:\path\to`},
		{"long", long},
		{"quote-at-chunk-edge", strings.Repeat("x", 254) + `"q"` + strings.Repeat("y", 10)},
		{"very-long", strings.Repeat("heartbeat;", 100)},
		{"non-ascii", "café ☕ \x00 tab\there"},
	}
}

// txtStringCases are TXT records given in presentation form (several
// character-strings, as a zone file writes them), with the form each reads
// back in: the same strings, each quoted, RFC 1035 escapes.
func txtStringCases() []struct{ name, data, want string } {
	s255 := strings.Repeat("s", 255)
	return []struct{ name, data, want string }{
		{"spf", `"v=spf1 include:a" " include:b ~all"`, `"v=spf1 include:a" " include:b ~all"`},
		{"escapes", `"say \"hi\"" "C:\\path" "caf\195\169"`, `"say \"hi\"" "C:\\path" "caf\195\169"`},
		{"empty-string", `"a" "" "b"`, `"a" "" "b"`},
		{"full-then-short", `"` + s255 + `" "x" "y"`, `"` + s255 + `" "x" "y"`},
		{"one-text", `"` + s255 + `" "tail"`, s255 + "tail"},
	}
}

func (s *suite) testTXT(t *testing.T) {
	for _, c := range txtCases() {
		t.Run(c.name, func(t *testing.T) {
			n := s.name("txt-" + c.name)
			s.set(t, txt(n, c.text, time.Minute))
			s.expect(t, s.read(t), n, "TXT", time.Minute, c.text)
		})
	}
	if !s.caps.NoTXTStrings {
		for _, c := range txtStringCases() {
			t.Run("strings-"+c.name, func(t *testing.T) {
				n := s.name("txts-" + c.name)
				s.set(t, libdns.RR{Name: n, Type: "TXT", TTL: time.Minute, Data: c.data})
				s.expect(t, s.read(t), n, "TXT", time.Minute, c.want)
			})
		}
	}
	t.Run("rrset", func(t *testing.T) {
		n := s.name("txt-rrset")
		s.set(t, txt(n, "one; two", time.Minute), txt(n, `"three"`, time.Minute))
		s.expect(t, s.read(t), n, "TXT", time.Minute, "one; two", `"three"`)
	})
}

func (s *suite) testCNAMEReplace(t *testing.T) {
	n := s.name("cname")
	s.set(t, cname(n, "first.example.net.", time.Minute))
	s.set(t, cname(n, "second.example.net.", time.Minute))
	s.expect(t, s.read(t), n, "CNAME", time.Minute, "second.example.net.")
}

func (s *suite) testCNAMEBesideData(t *testing.T) {
	n := s.name("cname-beside")
	s.set(t, a(n, "192.0.2.1", time.Minute))
	ctx, cancel := s.ctx(t)
	defer cancel()
	_, err := s.p.SetRecords(ctx, s.zone, []libdns.Record{cname(n, "elsewhere.example.net.", time.Minute)})
	all := s.read(t)
	switch s.caps.CNAMEBesideData {
	case Refuse:
		errorIfNoErr(t, err, "SetRecords accepted a CNAME beside an A record; capabilities say it refuses")
		s.expect(t, all, n, "CNAME", 0)
		s.expect(t, all, n, "A", time.Minute, "192.0.2.1")
	case Ignore:
		errorIfErr(t, err, "")
		s.expect(t, all, n, "CNAME", 0) // not applied
		s.expect(t, all, n, "A", time.Minute, "192.0.2.1")
	case Accept:
		errorIfErr(t, err, "")
		s.expect(t, all, n, "CNAME", time.Minute, "elsewhere.example.net.")
	}
}

func (s *suite) testApexCNAME(t *testing.T) {
	ctx, cancel := s.ctx(t)
	defer cancel()
	_, err := s.p.SetRecords(ctx, s.zone, []libdns.Record{cname("@", apexTarget, time.Minute)})
	all := s.read(t)
	switch s.caps.ApexCNAME {
	case Refuse:
		errorIfNoErr(t, err, "SetRecords accepted a CNAME at the apex; capabilities say it refuses")
		s.expect(t, all, "@", "CNAME", 0)
	case Ignore:
		errorIfErr(t, err, "")
		s.expect(t, all, "@", "CNAME", 0)
	case Accept:
		errorIfErr(t, err, "")
		s.expect(t, all, "@", "CNAME", time.Minute, apexTarget)
		s.del(t, libdns.RR{Name: "@", Type: "CNAME"})
		s.expect(t, s.read(t), "@", "CNAME", 0)
	}
}

func (s *suite) testConcurrent(t *testing.T) {
	const n = 6
	ctx, cancel := s.ctx(t)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			name := s.name(fmt.Sprintf("conc-%d", i))
			ip := netip.AddrFrom4([4]byte{192, 0, 2, byte(10 + i)})
			_, errs[i] = s.p.SetRecords(ctx, s.zone, []libdns.Record{libdns.Address{Name: name, IP: ip, TTL: time.Minute}})
		})
	}
	wg.Wait()
	all := s.read(t)
	for i := range n {
		fatalIfErr(t, errs[i], "concurrent SetRecords #%d", i)
		s.expect(t, all, s.name(fmt.Sprintf("conc-%d", i)), "A", time.Minute, fmt.Sprintf("192.0.2.%d", 10+i))
	}
}

func (s *suite) testCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.p.GetRecords(ctx, s.zone)
	errorIfNoErr(t, err, "GetRecords with a cancelled context")
	n := s.name("cancelled")
	_, err = s.p.SetRecords(ctx, s.zone, []libdns.Record{a(n, "192.0.2.1", time.Minute)})
	errorIfNoErr(t, err, "SetRecords with a cancelled context")
	check(t, len(rrset(s.read(t), n, "")) == 0, "SetRecords with a cancelled context changed the zone")
}

func (s *suite) testListZones(t *testing.T) {
	zl, ok := s.p.(libdns.ZoneLister)
	if !ok {
		t.Fatalf("capabilities say ListZones, but %T is not a libdns.ZoneLister", s.p)
	}
	ctx, cancel := s.ctx(t)
	defer cancel()
	zones, err := zl.ListZones(ctx)
	fatalIfErr(t, err, "")
	want := strings.ToLower(strings.TrimSuffix(s.zone, "."))
	var names []string
	for _, z := range zones {
		names = append(names, strings.ToLower(strings.TrimSuffix(z.Name, ".")))
	}
	check(t, slices.Contains(names, want), "ListZones returned %q, without %q", names, want)
}
