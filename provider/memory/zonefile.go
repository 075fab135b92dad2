package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing/iotest"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
)

// Zone files (RFC 1035 section 5, as BIND and Knot write them), read into a
// SnapshotBuilder. See docs/providers.md, "Zone files".

// DefaultMaxZoneFileRecords is ZoneFileConfig.MaxRecords when left 0.
const DefaultMaxZoneFileRecords = 10_000_000

// ZoneFileConfig configures SnapshotBuilder.ReadZoneFile. The zero value is
// the default: unsupported types refused, at most
// DefaultMaxZoneFileRecords records.
type ZoneFileConfig struct {
	// Filename names the input in errors ("Filename:line: …"); "" reads
	// "zone file". It is never opened.
	Filename string `json:"filename,omitempty"`
	// SkipUnsupported skips the records of types the zone does not store
	// (those outside SupportedTypes, such as the DNSKEY, RRSIG and NSEC
	// records of a zone signed offline: the zone signs online, see
	// ZoneConfig.Signer), counting them in ZoneFileInfo.Skipped. False
	// (the default) makes such a record an error, so nothing is dropped
	// unnoticed.
	SkipUnsupported bool `json:"skipUnsupported,omitempty"`
	// MaxRecords bounds the records read (skipped ones included): a larger
	// file is refused. 0 means DefaultMaxZoneFileRecords.
	MaxRecords int `json:"maxRecords,omitempty"`
}

// Validate reports a negative MaxRecords as a *FieldError wrapping
// ErrInvalidConfig.
func (c ZoneFileConfig) Validate() error {
	if c.MaxRecords < 0 {
		return fielderr.New(ErrInvalidConfig, "maxRecords", c.MaxRecords, fielderr.AtLeast(0)+" (0: "+strconv.Itoa(DefaultMaxZoneFileRecords)+")")
	}
	return nil
}

// ZoneFileInfo describes a zone file ReadZoneFile read.
type ZoneFileInfo struct {
	// Zone is the zone's name (fully qualified, lower case).
	Zone string
	// SOA is the zone's SOA record.
	SOA SOA
	// Records counts the records added (the SOA included; duplicates,
	// which the zone drops, included).
	Records int
	// Skipped counts the records skipped by type (ZoneFileConfig.SkipUnsupported).
	Skipped map[string]int
}

// ZoneFileError is an error in a zone file: the file (ZoneFileConfig.Filename),
// the line (1-based; for a record, the line it ends on) and the reason, a
// *RecordError for a record the zone refuses, an error wrapping
// ErrInvalidZone for the file's structure (a missing or second SOA, an
// SOA's fields), or the parser's (miekg/dns) for a syntax error.
type ZoneFileError struct {
	File string
	Line int
	Err  error
}

// Error formats the error as "file:line: reason".
func (e *ZoneFileError) Error() string {
	return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

// Unwrap returns the reason.
func (e *ZoneFileError) Unwrap() error { return e.Err }

// ReadZoneFile reads one zone in zone-file format (RFC 1035 section 5)
// from r into b: its first record must be the SOA at origin, which starts
// the zone (as Zone does), and every other record is added as AddRR adds
// it. origin is the zone's name, and the origin of relative names until a
// $ORIGIN; $TTL and $GENERATE are read, $INCLUDE is refused (r is outside
// input: an $INCLUDE would open a local file a zone's author names, and
// serve it or quote it in an error; join the files before). Records must be
// of class IN, owned by names in the zone. The zone is ended at the end of
// the file, so the rules that need the whole zone (a CNAME alone at its
// name) are checked here too. r is read whole into memory first (up to
// 1 GiB; the rest of a larger file is parsed as it streams in): plain lines
// are read by a faster reader that agrees with the parser, anything else
// by miekg/dns's parser. The builder is still to be published
// (Provider.RestoreBuilt). Errors are a *FieldError for a bad cfg (nothing
// read), the builder's earlier error, or a *ZoneFileError, which sticks
// like every builder error.
func (b *SnapshotBuilder) ReadZoneFile(r io.Reader, origin string, cfg ZoneFileConfig) (ZoneFileInfo, error) {
	var info ZoneFileInfo
	if err := cfg.Validate(); err != nil {
		return info, err
	}
	if b.err != nil {
		return info, b.err
	}
	file := cfg.Filename
	if file == "" {
		file = "zone file"
	}
	max := cfg.MaxRecords
	if max == 0 {
		max = DefaultMaxZoneFileRecords
	}
	fail := func(line int, err error) (ZoneFileInfo, error) {
		b.err = &ZoneFileError{File: file, Line: line, Err: err}
		return info, b.err
	}
	key := zoneKey(origin)
	if _, ok := dns.IsDomainName(key); !ok || strings.TrimSpace(origin) == "" || len(key) > 254 {
		return fail(1, fmt.Errorf("%w: zone name %q is not a valid domain name", ErrInvalidZone, origin))
	}
	data, rerr := io.ReadAll(io.LimitReader(r, maxFastZoneFile+1))
	if rerr == nil && len(data) <= maxFastZoneFile && fastZoneFiles {
		// Plain lines first (fastzone.go); anything else, from the start
		// again with the parser.
		mark := len(b.names)
		fs := &fastSource{data: data, origin: key}
		info, err := b.readZone(fs, key, file, cfg, max)
		if !fs.bail {
			return info, err
		}
		b.unmark(mark, key)
	}
	var rest io.Reader = bytes.NewReader(data)
	if rerr != nil {
		rest = io.MultiReader(rest, iotest.ErrReader(rerr))
	} else if len(data) > maxFastZoneFile {
		rest = io.MultiReader(rest, r)
	}
	lr := &lineReader{r: rest, buf: make([]byte, 64<<10)}
	zp := dns.NewZoneParser(lr, key, "")
	zp.SetIncludeAllowed(false)
	return b.readZone(&parserSource{zp: zp, lr: lr}, key, file, cfg, max)
}

// unmark forgets the zone key started since len(b.names) was mark.
func (b *SnapshotBuilder) unmark(mark int, key string) {
	if len(b.names) > mark {
		delete(b.zones, key)
		b.names = b.names[:mark]
	}
	b.cur, b.err = nil, nil
}

// zoneSource is where readZone takes records from.
type zoneSource interface {
	next() (dns.RR, bool)
	line() int // the line the last record ended on, or an error is in
	err() error
}

type parserSource struct {
	zp *dns.ZoneParser
	lr *lineReader
}

func (p *parserSource) next() (dns.RR, bool) { return p.zp.Next() }
func (p *parserSource) line() int            { return p.lr.at() }
func (p *parserSource) err() error {
	if err := p.zp.Err(); err != nil {
		return err
	}
	return p.lr.err
}

func (b *SnapshotBuilder) readZone(src zoneSource, key, file string, cfg ZoneFileConfig, max int) (ZoneFileInfo, error) {
	var info ZoneFileInfo
	fail := func(line int, err error) (ZoneFileInfo, error) {
		b.err = &ZoneFileError{File: file, Line: line, Err: err}
		return info, b.err
	}
	n := 0
	for rr, ok := src.next(); ok; rr, ok = src.next() {
		if n++; n > max {
			return fail(src.line(), fmt.Errorf("%w: more than %d records (ZoneFileConfig.MaxRecords)", ErrInvalidZone, max))
		}
		h := rr.Header()
		if n == 1 {
			soa, ok := rr.(*dns.SOA)
			if !ok {
				return fail(src.line(), fmt.Errorf("%w: the first record is %s %s, not the zone's SOA", ErrInvalidZone, h.Name, typeName(h.Rrtype)))
			}
			if !strings.EqualFold(h.Name, key) {
				return fail(src.line(), fmt.Errorf("%w: the SOA is owned by %s, not the zone's name %s", ErrInvalidZone, h.Name, key))
			}
			info.SOA = SOA{NS: soa.Ns, Mbox: soa.Mbox, Serial: soa.Serial, Refresh: soa.Refresh, Retry: soa.Retry, Expire: soa.Expire, Minimum: soa.Minttl, TTL: h.Ttl}
			if err := b.Zone(key, info.SOA); err != nil {
				b.err = nil // reported with the line instead
				return fail(src.line(), err)
			}
			info.Zone, info.Records = key, 1
			continue
		}
		if h.Rrtype == dns.TypeSOA {
			return fail(src.line(), fmt.Errorf("%w: a second SOA (%s)", ErrInvalidZone, h.Name))
		}
		if cfg.SkipUnsupported && h.Class == dns.ClassINET {
			if _, ok := zonerecord.TypeCode(typeName(h.Rrtype)); !ok {
				if info.Skipped == nil {
					info.Skipped = map[string]int{}
				}
				info.Skipped[typeName(h.Rrtype)]++
				continue
			}
		}
		if err := b.AddRR(rr); err != nil {
			b.err = nil
			return fail(src.line(), err)
		}
		info.Records++
	}
	if err := src.err(); err != nil {
		if err == errBail {
			return info, nil // the caller reads the file again
		}
		return fail(src.line(), err)
	}
	if n == 0 {
		return fail(src.line(), fmt.Errorf("%w: no records (a zone file starts with its SOA)", ErrInvalidZone))
	}
	if err := b.endZone(); err != nil {
		b.err = nil
		return fail(src.line(), err)
	}
	return info, nil
}

func typeName(t uint16) string {
	if s, ok := dns.TypeToString[t]; ok {
		return s
	}
	return "TYPE" + strconv.Itoa(int(t))
}

// lineReader is the zone parser's byte source: it counts the lines read
// (the parser reads bytes one at a time, and a record ends at its newline).
type lineReader struct {
	r      io.Reader
	buf    []byte
	i, n   int
	lines  int  // newlines read
	last   byte // the last byte read
	err    error
	failed bool
}

// ReadByte is io.ByteReader's; the parser reads through it.
func (l *lineReader) ReadByte() (byte, error) {
	if l.i == l.n {
		if l.failed {
			return 0, io.EOF
		}
		for {
			n, err := l.r.Read(l.buf)
			l.i, l.n = 0, n
			if err != nil {
				l.failed = true
				if !errors.Is(err, io.EOF) {
					l.err = err
				}
			}
			if n > 0 {
				break
			}
			if err != nil {
				return 0, io.EOF
			}
		}
	}
	c := l.buf[l.i]
	l.i++
	if c == '\n' {
		l.lines++
	}
	l.last = c
	return c, nil
}

// Read is io.Reader's (unused by the parser, which reads bytes).
func (l *lineReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c, err := l.ReadByte()
	if err != nil {
		return 0, err
	}
	p[0] = c
	return 1, nil
}

// at returns the line being read: the one a record that just ended ended
// on, or the one a syntax error stopped in.
func (l *lineReader) at() int {
	if l.last == '\n' {
		return max(l.lines, 1)
	}
	return l.lines + 1
}

// AddRR adds rr, as the zone file parser (miekg/dns) makes it, to the zone
// started last, without the text form ZoneRecord's Data would take: its
// owner must be in the zone (fully qualified; any case, stored lower
// case), its class IN, its TTL at most 2^31-1 and its type one of
// SupportedTypes (not SOA: Zone gives the SOA). A, AAAA, CNAME, NS, PTR and
// TXT records are checked and stored in the form Add would store; the
// other types are read through their text form. The zone may keep rr and
// change it (its header, the case of a target), so the caller must not use
// it afterwards. Errors are *RecordError (the
// builder's first error sticks, as with Add).
func (b *SnapshotBuilder) AddRR(rr dns.RR) error {
	if b.err != nil {
		return b.err
	}
	if b.cur == nil {
		b.err = fmt.Errorf("%w: a record before any zone", ErrInvalidZone)
		return b.err
	}
	if err := b.cur.addRR(rr); err != nil {
		b.err = err
		return err
	}
	return nil
}

func (zb *zoneBuild) addRR(rr dns.RR) error {
	if zb.n%1024 == 1023 {
		if err := zb.ctx.Err(); err != nil {
			return fmt.Errorf("zone %s: building stopped after %d records: %w", zb.z.Name, zb.n, err)
		}
	}
	zb.n++
	if rr == nil {
		return recErr(zb.z.Name, "", "", fmt.Errorf("%w: nil record", ErrInvalidRecord))
	}
	h := rr.Header()
	typ := typeName(h.Rrtype)
	owner := zb.lastOwner
	if h.Name != zb.lastName || owner == "" {
		if !strings.HasSuffix(h.Name, ".") {
			return recErr(zb.z.Name, h.Name, typ, fmt.Errorf("%w: name %q is not fully qualified", ErrInvalidRecord, h.Name))
		}
		var ok bool
		if owner, ok = zb.plainOwner(h.Name); !ok {
			var err error
			if owner, err = zonerecord.Owner(zb.z.Name, h.Name); err != nil {
				return recErr(zb.z.Name, strings.ToLower(h.Name), typ, err)
			}
		}
	}
	if h.Class != dns.ClassINET {
		return recErr(zb.z.Name, owner, typ, fmt.Errorf("%w: class %s (allowed IN)", ErrInvalidRecord, dns.Class(h.Class)))
	}
	if h.Rrtype == dns.TypeSOA {
		return recErr(zb.z.Name, owner, typ, fmt.Errorf("%w: SOA (the zone's SOA is given when the zone starts)", ErrUnsupportedType))
	}
	code, ok := zonerecord.TypeCode(typ)
	if !ok {
		return recErr(zb.z.Name, owner, typ, fmt.Errorf("%w: %q (supported: %s)", ErrUnsupportedType, typ, strings.Join(zonerecord.Types, ", ")))
	}
	if h.Ttl > maxTTL {
		return recErr(zb.z.Name, owner, typ, fmt.Errorf("%w: TTL %d is too large (allowed 0 to %d)", ErrInvalidRecord, h.Ttl, maxTTL))
	}
	r, err := storedRR(rr, owner, typ, code)
	if err != nil {
		return recErr(zb.z.Name, owner, typ, err)
	}
	zb.lastName, zb.lastOwner = h.Name, owner
	zb.b.Add(owner, r)
	return nil
}

// plainOwner is zonerecord.Owner for a fully qualified name of plain
// labels (plainName: no escapes, so a suffix match is a label match),
// without splitting it into labels; false where Owner must decide.
func (zb *zoneBuild) plainOwner(name string) (string, bool) {
	if !plainName(name) || len(name) > 254 {
		return "", false
	}
	name = strings.ToLower(name)
	z := zb.z.Name
	if name != z && (z == "." || !strings.HasSuffix(name, z) || len(name) <= len(z) || name[len(name)-len(z)-1] != '.') {
		return "", false
	}
	if _, ok := dns.IsDomainName(name); !ok {
		return "", false
	}
	return name, true
}

// storedRR returns rr in the form zonerecord.Canonical gives the record
// of its text form, owned by owner (valid, lower case).
func storedRR(rr dns.RR, owner, typ string, code uint16) (rec, error) {
	h := rr.Header()
	hdr := dns.RR_Header{Name: owner, Rrtype: code, Class: dns.ClassINET, Ttl: h.Ttl}
	switch v := rr.(type) {
	case *dns.A:
		ip4 := v.A.To4()
		if ip4 == nil {
			return rec{}, fmt.Errorf("%w: A data %q is not an IPv4 address", ErrInvalidRecord, v.A.String())
		}
		if len(v.A) == 4 && cap(v.A) == 4 {
			// Four bytes of its own (the fast reader's, zonedata.NewA): kept, not
			// copied (a copy left the first as garbage between the
			// records kept, in the same size class, so half-empty spans
			// stayed resident after the load).
			v.Hdr = hdr
			return rec{Wire: v}, nil
		}
		return rec{Wire: zonedata.NewA(hdr, [4]byte(ip4))}, nil
	case *dns.AAAA:
		if len(v.AAAA) != 16 || v.AAAA.To4() != nil {
			// A v4-mapped address reads as IPv4 in text: refused as Add
			// refuses it.
			return rec{}, fmt.Errorf("%w: AAAA data %q is not an IPv6 address", ErrInvalidRecord, v.AAAA.String())
		}
		v.Hdr = hdr
		return rec{Wire: v}, nil
	case *dns.CNAME:
		if plainName(v.Target) {
			t, err := storedTarget(typ, v.Target)
			v.Hdr, v.Target = hdr, t
			return rec{Wire: v}, err
		}
	case *dns.NS:
		if plainName(v.Ns) {
			t, err := storedTarget(typ, v.Ns)
			v.Hdr, v.Ns = hdr, t
			return rec{Wire: v}, err
		}
	case *dns.PTR:
		if plainName(v.Ptr) {
			t, err := storedTarget(typ, v.Ptr)
			v.Hdr, v.Ptr = hdr, t
			return rec{Wire: v}, err
		}
	case *dns.TXT:
		total := 0
		clean := true
		for _, s := range v.Txt {
			total += len(s)
			clean = clean && len(s) <= 255 && zoneops.EscapeTXT(s) == s
		}
		if !clean || len(v.Txt) == 0 {
			// Escapes, or more than one way to write the strings: the
			// canonical form, as Canonical writes it.
			ss := zonerecord.TXTStrings(v)
			if len(ss) == 0 {
				ss = []string{""}
			}
			_, w, err := zonerecord.Canonical(nil, owner, typ, code, h.Ttl, zonerecord.TXTPresentation(ss))
			if err != nil {
				return rec{}, err
			}
			return rec{Wire: w}, nil
		}
		if total > 4000 {
			return rec{}, fmt.Errorf("%w: TXT data is %d bytes (allowed at most 4000)", ErrInvalidRecord, total)
		}
		v.Hdr = hdr
		return rec{Wire: v}, nil
	}
	_, w, err := zonerecord.Canonical(nil, owner, typ, code, h.Ttl, strings.TrimPrefix(rr.String(), h.String()))
	if err != nil {
		return rec{}, err
	}
	return rec{Wire: w}, nil
}

// plainName reports whether name holds only letters, digits, '-', '_',
// '*' and dots: a name whose text form is itself (others, with bytes
// the text form escapes, take the text path).
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '*' || c == '.') {
			return false
		}
	}
	return true
}

// storedTarget is a CNAME, NS or PTR target as canonicalData stores it.
func storedTarget(typ, t string) (string, error) {
	s := strings.ToLower(t)
	if _, ok := dns.IsDomainName(s); !ok || !strings.HasSuffix(s, ".") || len(s) > 254 {
		return t, fmt.Errorf("%w: %s target %q is not a valid domain name", ErrInvalidRecord, typ, t)
	}
	return s, nil
}
