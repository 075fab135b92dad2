package memory_test

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const zoneFileHead = "$ORIGIN example.test.\n$TTL 300\n" +
	"@ IN SOA ns1 hostmaster 7 3600 600 86400 300\n" +
	"@ IN NS ns1\n"

func readZoneFile(t *testing.T, text string, cfg memory.ZoneFileConfig) (*memory.Provider, memory.ZoneFileInfo, error) {
	t.Helper()
	b := memory.NewSnapshotBuilder(context.Background())
	info, err := b.ReadZoneFile(strings.NewReader(text), "example.test", cfg)
	if err != nil {
		return nil, info, err
	}
	p := new(memory.Provider)
	require.NoError(t, p.RestoreBuilt(b))
	return p, info, nil
}

func TestReadZoneFile(t *testing.T) {
	text := zoneFileHead +
		"ns1 IN A 192.0.2.1\n" +
		"WWW 60 IN A 192.0.2.2\n" +
		"www IN A 192.0.2.2\n" + // a duplicate, dropped
		"www IN AAAA 2001:db8::1\n" +
		"alias IN CNAME WWW\n" +
		"txt IN TXT \"v=spf1 -all\" \"second\"\n" +
		"mx IN MX 10 mail.example.test.\n" +
		"sub IN NS ns.sub\nns.sub IN A 192.0.2.53\n" +
		"a.b.c IN A 192.0.2.9\n"
	p, info, err := readZoneFile(t, text, memory.ZoneFileConfig{Filename: "db.example"})
	require.NoError(t, err)
	assert.Equal(t, "example.test.", info.Zone)
	assert.Equal(t, memory.SOA{NS: "ns1.example.test.", Mbox: "hostmaster.example.test.", Serial: 7, Refresh: 3600, Retry: 600, Expire: 86400, Minimum: 300, TTL: 300}, info.SOA)
	assert.Equal(t, 12, info.Records)

	recs, err := p.GetRecords(context.Background(), "example.test.")
	require.NoError(t, err)
	var got []string
	for _, r := range recs {
		rr := r.RR()
		got = append(got, rr.Name+" "+rr.Type+" "+rr.Data)
	}
	assert.ElementsMatch(t, []string{
		"@ NS ns1.example.test.", "ns1 A 192.0.2.1", "www A 192.0.2.2", "www AAAA 2001:db8::1",
		"alias CNAME www.example.test.", `txt TXT "v=spf1 -all" "second"`, "mx MX 10 mail.example.test.",
		"sub NS ns.sub.example.test.", "ns.sub A 192.0.2.53", "a.b.c A 192.0.2.9",
	}, got)

	// The answers see the empty non-terminals and the delegation.
	m := new(dns.Msg)
	m.SetQuestion("b.c.example.test.", dns.TypeA)
	resp := p.Respond(m, netip.MustParseAddr("192.0.2.100"), false)
	assert.Equal(t, dns.RcodeSuccess, resp.Rcode, "b.c.example.test. is an empty non-terminal")
	m.SetQuestion("x.sub.example.test.", dns.TypeA)
	resp = p.Respond(m, netip.MustParseAddr("192.0.2.100"), false)
	assert.NotEmpty(t, resp.Ns, "a referral")
	assert.False(t, resp.Authoritative, "a referral")
}

func TestReadZoneFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		cfg        memory.ZoneFileConfig
		line       int
		want       string
		is         error
	}{
		{"syntax", zoneFileHead + "www IN A 192.0.2.300\n", memory.ZoneFileConfig{}, 5, `zone file:5: dns: bad A A: "192.0.2.300" at line: 5:20`, nil},
		{"include", zoneFileHead + "$INCLUDE /etc/passwd\n", memory.ZoneFileConfig{}, 5, "$INCLUDE directive not allowed", nil},
		{"no SOA first", "$ORIGIN example.test.\nwww 300 IN A 192.0.2.1\n", memory.ZoneFileConfig{}, 2, "the first record is www.example.test. A, not the zone's SOA", memory.ErrInvalidZone},
		{"SOA elsewhere", "other.test. 300 IN SOA ns1.other.test. h.other.test. 1 2 3 4 5\n", memory.ZoneFileConfig{}, 1, "not the zone's name example.test.", memory.ErrInvalidZone},
		{"second SOA", zoneFileHead + "\n\n@ IN SOA ns1 hostmaster 8 3600 600 86400 300\n", memory.ZoneFileConfig{}, 7, "a second SOA", memory.ErrInvalidZone},
		{"unsupported", zoneFileHead + "@ IN DNSKEY 256 3 13 AAAA\n", memory.ZoneFileConfig{Filename: "db"}, 5, `db:5: memory: zone example.test.: example.test. DNSKEY: memory: unsupported record type: "DNSKEY"`, memory.ErrUnsupportedType},
		{"outside the zone", zoneFileHead + "www.other.test. IN A 192.0.2.1\n", memory.ZoneFileConfig{}, 5, "not in zone", memory.ErrNotInZone},
		{"class", zoneFileHead + "www CH A 192.0.2.1\n", memory.ZoneFileConfig{}, 5, "class CH (allowed IN)", memory.ErrInvalidRecord},
		{"CNAME and other data", zoneFileHead + "www IN CNAME a\nwww IN A 192.0.2.1\n", memory.ZoneFileConfig{}, 6, "the name also holds [A]", memory.ErrCNAMEConflict},
		{"too many", zoneFileHead + "a IN A 192.0.2.1\nb IN A 192.0.2.1\n", memory.ZoneFileConfig{MaxRecords: 3}, 6, "more than 3 records", memory.ErrInvalidZone},
		{"empty", "; nothing\n", memory.ZoneFileConfig{}, 1, "no records", memory.ErrInvalidZone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readZoneFile(t, tc.text, tc.cfg)
			require.Error(t, err)
			var ze *memory.ZoneFileError
			require.ErrorAs(t, err, &ze)
			assert.Equal(t, tc.line, ze.Line, err.Error())
			assert.Contains(t, err.Error(), tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}

func TestReadZoneFileSkipUnsupported(t *testing.T) {
	text := zoneFileHead + "@ IN DNSKEY 256 3 13 AAAA\n@ IN DNSKEY 257 3 13 AAAA\nwww IN A 192.0.2.1\n"
	p, info, err := readZoneFile(t, text, memory.ZoneFileConfig{SkipUnsupported: true})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"DNSKEY": 2}, info.Skipped)
	assert.Equal(t, 3, info.Records)
	recs, err := p.GetRecords(context.Background(), "example.test.")
	require.NoError(t, err)
	assert.Len(t, recs, 2)
}

func TestZoneFileConfigValidate(t *testing.T) {
	assert.NoError(t, memory.ZoneFileConfig{}.Validate())
	err := memory.ZoneFileConfig{MaxRecords: -1}.Validate()
	var fe *memory.FieldError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, memory.ErrInvalidConfig)
	assert.Equal(t, "maxRecords", fe.Path)
	b := memory.NewSnapshotBuilder(context.Background())
	_, err = b.ReadZoneFile(strings.NewReader(zoneFileHead), "example.test.", memory.ZoneFileConfig{MaxRecords: -1})
	assert.ErrorIs(t, err, memory.ErrInvalidConfig)
}

// TestAddRRMatchesAdd: a record added as the parser's dns.RR is stored as
// the same record given as a ZoneRecord in text form.
func TestAddRRMatchesAdd(t *testing.T) {
	for _, line := range []string{
		"WWW.example.test. 60 IN A 192.0.2.1",
		"www.example.test. 60 IN AAAA 2001:DB8::1",
		"www.example.test. 60 IN CNAME Target.Example.",
		"www.example.test. 60 IN NS NS.example.",
		"www.example.test. 60 IN PTR host.example.",
		`www.example.test. 60 IN TXT "a \"quoted\" \\ text" "\200bytes" "x"`,
		"www.example.test. 60 IN MX 10 Mail.example.",
		"_s._tcp.example.test. 60 IN SRV 1 2 443 host.example.",
		`www.example.test. 60 IN CAA 0 issue "ca.example"`,
		"www.example.test. 60 IN HTTPS 1 . alpn=h2",
		"www.example.test. 60 IN DS 12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
	} {
		rr, err := dns.NewRR(line)
		require.NoError(t, err, line)
		viaRR := builtRecords(t, func(b *memory.SnapshotBuilder) error { return b.AddRR(dns.Copy(rr)) })
		viaText := builtRecords(t, func(b *memory.SnapshotBuilder) error { return b.Add(zoneRecordOf(rr)) })
		assert.Equal(t, viaText, viaRR, line)
	}
}

func builtRecords(t *testing.T, add func(*memory.SnapshotBuilder) error) []libdns.Record {
	t.Helper()
	b := memory.NewSnapshotBuilder(context.Background())
	require.NoError(t, b.Zone("example.test.", memory.SOA{NS: "ns1.example.test.", Mbox: "h.example.test.", Serial: 1, TTL: 300}))
	require.NoError(t, add(b))
	p := new(memory.Provider)
	require.NoError(t, p.RestoreBuilt(b))
	recs, err := p.GetRecords(context.Background(), "example.test.")
	require.NoError(t, err)
	return recs
}

// zoneRecordOf is rr as a ZoneRecord: name fully qualified, data in
// presentation form, a TXT record's strings as they go on the wire.
func zoneRecordOf(rr dns.RR) memory.ZoneRecord {
	h := rr.Header()
	zr := memory.ZoneRecord{
		Name: h.Name, Type: dns.TypeToString[h.Rrtype], TTL: h.Ttl,
		Data: strings.TrimPrefix(rr.String(), h.String()),
	}
	if t, ok := rr.(*dns.TXT); ok {
		zr.Strings = wireStrings(t)
	}
	return zr
}

// wireStrings returns t's character-strings as packed (escapes read).
func wireStrings(t *dns.TXT) []string {
	buf := make([]byte, 1<<16)
	off, err := dns.PackRR(t, buf, 0, nil, false)
	if err != nil {
		return t.Txt // an unpackable record: the text path refuses it too
	}
	rdata := buf[off-int(t.Hdr.Rdlength) : off]
	out := []string{}
	for len(rdata) > 0 {
		n := int(rdata[0])
		out = append(out, string(rdata[1:1+n]))
		rdata = rdata[1+n:]
	}
	return out
}

func TestAddRRErrors(t *testing.T) {
	b := memory.NewSnapshotBuilder(context.Background())
	err := b.AddRR(&dns.A{Hdr: dns.RR_Header{Name: "www.example.test.", Rrtype: dns.TypeA, Class: dns.ClassINET}})
	assert.ErrorIs(t, err, memory.ErrInvalidZone, "a record before any zone")
	for _, rr := range []dns.RR{
		nil,
		&dns.A{Hdr: dns.RR_Header{Name: "www.example.test.", Rrtype: dns.TypeA, Class: dns.ClassINET}},
		&dns.A{Hdr: dns.RR_Header{Name: "www", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{1, 2, 3, 4}},
		&dns.AAAA{Hdr: dns.RR_Header{Name: "www.example.test.", Rrtype: dns.TypeAAAA, Class: dns.ClassINET}, AAAA: []byte{1, 2}},
		&dns.CNAME{Hdr: dns.RR_Header{Name: "www.example.test.", Rrtype: dns.TypeCNAME, Class: dns.ClassINET}, Target: "relative"},
		&dns.A{Hdr: dns.RR_Header{Name: "www.example.test.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1 << 31}, A: []byte{1, 2, 3, 4}},
		&dns.SOA{Hdr: dns.RR_Header{Name: "example.test.", Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: "a.", Mbox: "b."},
		&dns.TXT{Hdr: dns.RR_Header{Name: "www.example.test.", Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255), strings.Repeat("x", 255)}},
	} {
		b := memory.NewSnapshotBuilder(context.Background())
		require.NoError(t, b.Zone("example.test.", memory.SOA{NS: "ns1.example.test.", Mbox: "h.example.test.", TTL: 300}))
		err := b.AddRR(rr)
		var re *memory.RecordError
		assert.True(t, errors.As(err, &re), "%v: %v", rr, err)
	}
}

// FuzzReadZoneFile: ReadZoneFile never panics, reports every failure as a
// *ZoneFileError (or the config's), and a zone it accepts holds exactly
// the records the text path (SnapshotBuilder.Add of each record's
// presentation form, as the parser reads the file) stores.
func FuzzReadZoneFile(f *testing.F) {
	f.Add(zoneFileHead + "www IN A 192.0.2.1\nwww IN AAAA 2001:db8::1\nalias IN CNAME www\n")
	f.Add(zoneFileHead + "t IN TXT \"a\\\"b\" \"\\200\" c\nmx IN MX 10 mail\n*.w IN A 192.0.2.1\n")
	f.Add(zoneFileHead + "d IN NS ns.d\nns.d IN A 192.0.2.1\na.b.c IN TXT x\n$GENERATE 1-5 h$ A 192.0.2.$\n")
	f.Add(zoneFileHead + "$INCLUDE other\n")
	f.Add(zoneFileHead + "x IN ( A\n 192.0.2.1 ) ; comment\nx IN DNSKEY 256 3 13 AAAA\n")
	f.Fuzz(func(t *testing.T, text string) {
		b := memory.NewSnapshotBuilder(context.Background())
		_, err := b.ReadZoneFile(strings.NewReader(text), "example.test.", memory.ZoneFileConfig{MaxRecords: 1000})
		if err != nil {
			var ze *memory.ZoneFileError
			if !errors.As(err, &ze) || ze.Line < 1 {
				t.Fatalf("error %v (%T) is not a *ZoneFileError with a line", err, err)
			}
			return
		}
		p := new(memory.Provider)
		if err := p.RestoreBuilt(b); err != nil {
			t.Fatalf("RestoreBuilt after ReadZoneFile: %v", err)
		}
		got, err := p.GetRecords(context.Background(), "example.test.")
		if err != nil {
			t.Fatal(err)
		}

		ref := memory.NewSnapshotBuilder(context.Background())
		zp := dns.NewZoneParser(strings.NewReader(text), "example.test.", "")
		for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
			if soa, isSOA := rr.(*dns.SOA); isSOA {
				h := soa.Header()
				if err := ref.Zone("example.test.", memory.SOA{NS: soa.Ns, Mbox: soa.Mbox, Serial: soa.Serial, Refresh: soa.Refresh, Retry: soa.Retry, Expire: soa.Expire, Minimum: soa.Minttl, TTL: h.Ttl}); err != nil {
					t.Fatalf("reference SOA: %v", err)
				}
				continue
			}
			if err := ref.Add(zoneRecordOf(rr)); err != nil {
				t.Fatalf("ReadZoneFile accepted %q, the text path refuses it: %v", rr.String(), err)
			}
		}
		rp := new(memory.Provider)
		if err := rp.RestoreBuilt(ref); err != nil {
			t.Fatalf("ReadZoneFile accepted the zone, the text path refuses it: %v", err)
		}
		want, err := rp.GetRecords(context.Background(), "example.test.")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d records, the text path %d", len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("record %d: %#v, the text path %#v", i, got[i], want[i])
			}
		}
	})
}

func TestReadZoneFileReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader(zoneFileHead+"www IN A 192.0.2.1\n"), iotest.ErrReader(errors.New("disk on fire")))
	b := memory.NewSnapshotBuilder(context.Background())
	_, err := b.ReadZoneFile(r, "example.test.", memory.ZoneFileConfig{Filename: "db"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk on fire")
	var ze *memory.ZoneFileError
	require.ErrorAs(t, err, &ze)
	assert.Equal(t, "db", ze.File)
	assert.Equal(t, err, b.Err(), "the error sticks")
}

// FuzzReadZoneFileFast: ReadZoneFile's fast reader of plain lines and
// miekg/dns's parser give the same zone, or the same error, on every input.
func FuzzReadZoneFileFast(f *testing.F) {
	f.Add(zoneFileHead + "www IN A 192.0.2.1\nwww 60 IN AAAA 2001:db8::1\nalias CNAME www\n")
	f.Add("$ORIGIN example.test.\n$TTL 300\n@ SOA ns1.example.test. h 1 2 3 4 5\nt TXT \"a b\" \"\"\nd NS ns.d\nns.d 30 A 192.0.2.1\nx A 192.0.2.2\n")
	f.Add("@ 300 IN SOA ns1 h 1 2 3 4 5\nx A 192.0.2.2\ny 7 A 192.0.2.2\nz A 192.0.2.3\n$TTL 9\nw A 192.0.2.4\n")
	f.Add(zoneFileHead + "www IN A 192.0.2.1 ; comment\n")
	f.Add(zoneFileHead + "www IN CNAME a\nwww IN A 192.0.2.1")
	f.Add(zoneFileHead + "$ORIGIN sub.example.test.\nx A 192.0.2.1\n$ORIGIN other.test.\ny A 192.0.2.1\n")
	f.Fuzz(func(t *testing.T, text string) {
		read := func(fast bool) (string, []libdns.Record, memory.ZoneFileInfo) {
			defer memory.SetFastZoneFiles(memory.SetFastZoneFiles(fast))
			b := memory.NewSnapshotBuilder(context.Background())
			info, err := b.ReadZoneFile(strings.NewReader(text), "example.test.", memory.ZoneFileConfig{MaxRecords: 50, SkipUnsupported: true})
			if err != nil {
				return err.Error(), nil, info
			}
			p := new(memory.Provider)
			if err := p.RestoreBuilt(b); err != nil {
				return "restore: " + err.Error(), nil, info
			}
			recs, err := p.GetRecords(context.Background(), "example.test.")
			if err != nil {
				t.Fatal(err)
			}
			return "", recs, info
		}
		e1, r1, i1 := read(true)
		e2, r2, i2 := read(false)
		if e1 != e2 {
			t.Fatalf("fast reader: error %q, parser: %q", e1, e2)
		}
		if !reflect.DeepEqual(r1, r2) || !reflect.DeepEqual(i1, i2) {
			t.Fatalf("fast reader: %v %+v\nparser: %v %+v", r1, i1, r2, i2)
		}
	})
}
