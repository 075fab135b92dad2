package memory

import (
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// SupportedTypes lists the record types the zone stores and serves, in the
// order GetRecords reports them within one name. SOA is not among them: the
// zone owns its SOA (see SOA and Provider.SOA) and refuses writes to it.
// NS records below the apex delegate: the name holding them is a
// delegation point, and queries at or below it get referrals (see
// Provider.Respond).
var SupportedTypes = []string{"NS", "CNAME", "A", "AAAA", "TXT", "MX", "SRV", "CAA", "HTTPS", "SVCB", "PTR"}

var typeCodes = map[string]uint16{
	"NS": dns.TypeNS, "CNAME": dns.TypeCNAME, "A": dns.TypeA, "AAAA": dns.TypeAAAA,
	"TXT": dns.TypeTXT, "MX": dns.TypeMX, "SRV": dns.TypeSRV, "CAA": dns.TypeCAA,
	"HTTPS": dns.TypeHTTPS, "SVCB": dns.TypeSVCB, "PTR": dns.TypePTR,
}

// maxTTL is the largest TTL RFC 2181 allows (2^31 - 1 seconds).
const maxTTL = math.MaxInt32

// rec is one stored record: its libdns form (name relative to the zone and
// lower case, "@" at the apex; TTL in whole seconds; canonical data) and its
// wire form (owner fully qualified and lower case).
type rec struct {
	rr   libdns.RR
	wire dns.RR
	hook libdns.Record // typed form handed to answer hooks (never to callers of GetRecords)
}

// typed returns the record as the libdns struct for its type (Address,
// CNAME, TXT, NS, MX, SRV, CAA, ServiceBinding), or the RR itself for types
// libdns does not parse.
func (r rec) typed() libdns.Record {
	if t, ok := r.wire.(*dns.TXT); ok {
		if _, plain := txtData(txtStrings(t)); !plain {
			return r.rr // several strings: presentation form, see txt.go
		}
	}
	t, err := r.rr.Parse()
	if err != nil {
		return r.rr
	}
	return t
}

// ownerName resolves a libdns record name against zone (fully qualified,
// lower case). Relative names are relative to the zone, "@" is the apex, and
// a name with a trailing dot is taken as fully qualified and must lie in the
// zone.
func ownerName(zone, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", fmt.Errorf("%w: name is empty (use \"@\" for the apex)", ErrInvalidRecord)
	}
	var fqdn string
	switch {
	case name == "@":
		fqdn = zone
	case strings.HasSuffix(name, "."):
		fqdn = strings.ToLower(name)
	default:
		fqdn = strings.ToLower(name) + "." + zone
		if zone == "." {
			fqdn = strings.ToLower(name) + "."
		}
	}
	if _, ok := dns.IsDomainName(fqdn); !ok || len(fqdn) > 254 {
		return "", fmt.Errorf("%w: name %q is not a valid domain name (labels 1-63 bytes, at most 253 characters)", ErrInvalidRecord, name)
	}
	if !dns.IsSubDomain(zone, fqdn) {
		return "", fmt.Errorf("%w: %s is not in zone %s", ErrNotInZone, fqdn, zone)
	}
	return fqdn, nil
}

// relName returns fqdn relative to zone, "@" for the apex.
func relName(fqdn, zone string) string {
	if fqdn == zone {
		return "@"
	}
	if zone == "." {
		return strings.TrimSuffix(fqdn, ".")
	}
	return strings.TrimSuffix(fqdn, "."+zone)
}

// ttlSeconds converts a libdns TTL into whole seconds (fractions truncated,
// as libdns documents).
func ttlSeconds(d time.Duration) (uint32, error) {
	if d < 0 {
		return 0, fmt.Errorf("%w: TTL %v is negative (allowed 0s to %ds)", ErrInvalidRecord, d, maxTTL)
	}
	s := d / time.Second
	if s > maxTTL {
		return 0, fmt.Errorf("%w: TTL %v is too large (allowed 0s to %ds)", ErrInvalidRecord, d, maxTTL)
	}
	return uint32(s), nil
}

// makeRec validates one input record for zone and returns its stored form
// and owner name. Errors are *RecordError.
func makeRec(zone string, in libdns.Record) (string, rec, error) {
	if in == nil {
		return "", rec{}, recErr(zone, "", "", fmt.Errorf("%w: nil record", ErrInvalidRecord))
	}
	r := in.RR()
	typ := strings.ToUpper(strings.TrimSpace(r.Type))
	fqdn, err := ownerName(zone, r.Name)
	if err != nil {
		return "", rec{}, recErr(zone, r.Name, typ, err)
	}
	code, ok := typeCodes[typ]
	if !ok {
		return "", rec{}, recErr(zone, fqdn, typ, fmt.Errorf("%w: %q (supported: %s)", ErrUnsupportedType, typ, strings.Join(SupportedTypes, ", ")))
	}
	ttl, err := ttlSeconds(r.TTL)
	if err != nil {
		return "", rec{}, recErr(zone, fqdn, typ, err)
	}
	data, wire, err := canonicalRecord(in, fqdn, typ, code, ttl, r.Data)
	if err != nil {
		return "", rec{}, recErr(zone, fqdn, typ, err)
	}
	out := rec{
		rr:   libdns.RR{Name: relName(fqdn, zone), TTL: time.Duration(ttl) * time.Second, Type: typ, Data: data},
		wire: wire,
	}
	out.hook = out.typed()
	return fqdn, out, nil
}

// canonicalRecord is canonical for a record given as in: TXT data is read as
// txt.go describes.
func canonicalRecord(in libdns.Record, fqdn, typ string, code uint16, ttl uint32, data string) (string, dns.RR, error) {
	if code != dns.TypeTXT {
		return canonical(fqdn, typ, code, ttl, data)
	}
	ss, err := txtInput(in, data)
	if err != nil {
		return "", nil, err
	}
	if n := len(strings.Join(ss, "")); n > 4000 {
		return "", nil, fmt.Errorf("%w: TXT data is %d bytes (allowed at most 4000)", ErrInvalidRecord, n)
	}
	d, _ := txtData(ss)
	return d, &dns.TXT{Hdr: dns.RR_Header{Name: fqdn, Rrtype: code, Class: dns.ClassINET, Ttl: ttl}, Txt: txtWire(ss)}, nil
}

// canonical parses data of type typ and returns its canonical presentation
// (the libdns Data the zone reports) and its wire form; TXT data is plain
// text.
func canonical(fqdn, typ string, code uint16, ttl uint32, data string) (string, dns.RR, error) {
	hdr := dns.RR_Header{Name: fqdn, Rrtype: code, Class: dns.ClassINET, Ttl: ttl}
	switch code {
	case dns.TypeA, dns.TypeAAAA:
		ip, err := netip.ParseAddr(strings.TrimSpace(data))
		if err != nil || ip.Zone() != "" {
			return "", nil, fmt.Errorf("%w: %s data %q is not an IP address", ErrInvalidRecord, typ, data)
		}
		if code == dns.TypeA {
			if !ip.Is4() {
				return "", nil, fmt.Errorf("%w: A data %q is not an IPv4 address", ErrInvalidRecord, data)
			}
			return ip.String(), &dns.A{Hdr: hdr, A: ip.AsSlice()}, nil
		}
		if !ip.Is6() {
			return "", nil, fmt.Errorf("%w: AAAA data %q is not an IPv6 address", ErrInvalidRecord, data)
		}
		return ip.String(), &dns.AAAA{Hdr: hdr, AAAA: ip.AsSlice()}, nil
	case dns.TypeCNAME, dns.TypeNS, dns.TypePTR:
		target := strings.ToLower(strings.TrimSpace(data))
		if target != "" && !strings.HasSuffix(target, ".") {
			target += "."
		}
		if _, ok := dns.IsDomainName(target); !ok || target == "" || len(target) > 254 {
			return "", nil, fmt.Errorf("%w: %s target %q is not a valid domain name", ErrInvalidRecord, typ, data)
		}
		switch code {
		case dns.TypeCNAME:
			return target, &dns.CNAME{Hdr: hdr, Target: target}, nil
		case dns.TypeNS:
			return target, &dns.NS{Hdr: hdr, Ns: target}, nil
		default:
			return target, &dns.PTR{Hdr: hdr, Ptr: target}, nil
		}
	case dns.TypeTXT:
		if len(data) > 4000 {
			return "", nil, fmt.Errorf("%w: TXT data is %d bytes (allowed at most 4000)", ErrInvalidRecord, len(data))
		}
		return data, &dns.TXT{Hdr: hdr, Txt: txtWire(splitTXT(data))}, nil
	default:
		rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", fqdn, ttl, typ, data))
		if err != nil || rr == nil {
			return "", nil, fmt.Errorf("%w: %s data %q does not parse: %v", ErrInvalidRecord, typ, data, err)
		}
		return strings.TrimPrefix(rr.String(), rr.Header().String()), rr, nil
	}
}

// pattern is a DeleteRecords input: empty type, zero TTL and empty data
// match anything.
type pattern struct {
	name   string
	typ    string
	ttl    uint32
	anyTTL bool
	data   string
}

func makePattern(zone string, in libdns.Record) (pattern, bool) {
	if in == nil {
		return pattern{}, false
	}
	r := in.RR()
	fqdn, err := ownerName(zone, r.Name)
	if err != nil {
		return pattern{}, false
	}
	p := pattern{name: fqdn, typ: strings.ToUpper(strings.TrimSpace(r.Type))}
	if p.typ != "" {
		if _, ok := typeCodes[p.typ]; !ok {
			return pattern{}, false
		}
	}
	p.anyTTL = r.TTL == 0
	if !p.anyTTL {
		ttl, err := ttlSeconds(r.TTL)
		if err != nil {
			return pattern{}, false
		}
		p.ttl = ttl
	}
	if r.Data != "" {
		p.data = r.Data
		if p.typ != "" {
			d, _, err := canonicalRecord(in, fqdn, p.typ, typeCodes[p.typ], 0, r.Data)
			if err != nil {
				return pattern{}, false
			}
			p.data = d
		}
	}
	return p, true
}

func (p pattern) match(r rec) bool {
	return (p.typ == "" || p.typ == r.rr.Type) &&
		(p.anyTTL || p.ttl == r.wire.Header().Ttl) &&
		(p.data == "" || p.data == r.rr.Data)
}
