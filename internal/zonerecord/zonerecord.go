package zonerecord

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// Sentinels; provider/memory exports them (memory.ErrInvalidRecord, …).
var (
	// ErrNotInZone means a record's owner name lies outside the zone.
	ErrNotInZone = errors.New("memory: name not in zone")
	// ErrInvalidRecord means a record's name, TTL or data cannot be served.
	ErrInvalidRecord = errors.New("memory: invalid record")
	// ErrUnsupportedType means the record type is not one of Types.
	ErrUnsupportedType = errors.New("memory: unsupported record type")
)

// Types lists the record types a zone stores and serves, in the order
// GetRecords reports them within one name. DS records belong at
// delegation points (beside NS), for a signed child (RFC 4035 section
// 3.1.4.1).
var Types = []string{"NS", "CNAME", "A", "AAAA", "TXT", "MX", "SRV", "CAA", "HTTPS", "SVCB", "PTR", "DS"}

var typeCodes = map[string]uint16{
	"NS": dns.TypeNS, "CNAME": dns.TypeCNAME, "A": dns.TypeA, "AAAA": dns.TypeAAAA,
	"TXT": dns.TypeTXT, "MX": dns.TypeMX, "SRV": dns.TypeSRV, "CAA": dns.TypeCAA,
	"HTTPS": dns.TypeHTTPS, "SVCB": dns.TypeSVCB, "PTR": dns.TypePTR, "DS": dns.TypeDS,
}

// TypeCode returns the type code of typ (upper case) when it is one of
// Types.
func TypeCode(typ string) (uint16, bool) {
	c, ok := typeCodes[typ]
	return c, ok
}

// MaxTTL is the largest TTL RFC 2181 allows (2^31 - 1 seconds).
const MaxTTL = math.MaxInt32

// Owner resolves a libdns record name against zone (fully qualified,
// lower case). Relative names are relative to the zone, "@" is the apex, and
// a name with a trailing dot is taken as fully qualified and must lie in the
// zone.
func Owner(zone, name string) (string, error) {
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

// Rel returns fqdn relative to zone, "@" for the apex.
func Rel(fqdn, zone string) string {
	if fqdn == zone {
		return "@"
	}
	if zone == "." {
		return strings.TrimSuffix(fqdn, ".")
	}
	return strings.TrimSuffix(fqdn, "."+zone)
}

// TTL converts a libdns TTL into whole seconds (fractions truncated, as
// libdns documents).
func TTL(d time.Duration) (uint32, error) {
	if d < 0 {
		return 0, fmt.Errorf("%w: TTL %v is negative (allowed 0s to %ds)", ErrInvalidRecord, d, MaxTTL)
	}
	s := d / time.Second
	if s > MaxTTL {
		return 0, fmt.Errorf("%w: TTL %v is too large (allowed 0s to %ds)", ErrInvalidRecord, d, MaxTTL)
	}
	return uint32(s), nil
}

// Parse validates one record in for zone: it returns its owner (fully
// qualified, lower case; "" when the name itself is wrong), its type (upper
// case), TTL in seconds, canonical data and wire form.
func Parse(zone string, in libdns.Record) (fqdn, typ string, ttl uint32, data string, wire dns.RR, err error) {
	r := in.RR()
	typ = strings.ToUpper(strings.TrimSpace(r.Type))
	if fqdn, err = Owner(zone, r.Name); err != nil {
		return "", typ, 0, "", nil, err
	}
	code, ok := typeCodes[typ]
	if !ok {
		return fqdn, typ, 0, "", nil, fmt.Errorf("%w: %q (supported: %s)", ErrUnsupportedType, typ, strings.Join(Types, ", "))
	}
	if ttl, err = TTL(r.TTL); err != nil {
		return fqdn, typ, 0, "", nil, err
	}
	data, wire, err = Canonical(in, fqdn, typ, code, ttl, r.Data)
	return fqdn, typ, ttl, data, wire, err
}

// Canonical returns the canonical data and wire form of a record of type
// typ (code) given as in, with owner fqdn and data in.RR().Data: TXT data
// is read as txt.go describes, other data parsed in presentation form.
func Canonical(in libdns.Record, fqdn, typ string, code uint16, ttl uint32, data string) (string, dns.RR, error) {
	if code != dns.TypeTXT {
		return canonicalData(fqdn, typ, code, ttl, data)
	}
	ss, err := txtInput(in, data)
	if err != nil {
		return "", nil, err
	}
	if n := len(strings.Join(ss, "")); n > MaxTXTData {
		return "", nil, fmt.Errorf("%w: TXT data is %d bytes (allowed at most %d)", ErrInvalidRecord, n, MaxTXTData)
	}
	d, _ := TXTData(ss)
	return d, &dns.TXT{Hdr: dns.RR_Header{Name: fqdn, Rrtype: code, Class: dns.ClassINET, Ttl: ttl}, Txt: TXTWire(ss)}, nil
}

// canonicalData parses data of type typ and returns its canonical
// presentation (the libdns Data the zone reports) and its wire form; TXT
// data is plain text.
func canonicalData(fqdn, typ string, code uint16, ttl uint32, data string) (string, dns.RR, error) {
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
		if len(data) > MaxTXTData {
			return "", nil, fmt.Errorf("%w: TXT data is %d bytes (allowed at most %d)", ErrInvalidRecord, len(data), MaxTXTData)
		}
		return data, &dns.TXT{Hdr: hdr, Txt: TXTWire(zoneops.SplitTXT(data))}, nil
	default:
		rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", fqdn, ttl, typ, data))
		if err != nil || rr == nil {
			return "", nil, fmt.Errorf("%w: %s data %q does not parse: %v", ErrInvalidRecord, typ, data, err)
		}
		return strings.TrimPrefix(rr.String(), rr.Header().String()), rr, nil
	}
}

// TypeOrder ranks a type for listing: its index in Types, unknown types
// last.
func TypeOrder(t string) int {
	if i := slices.Index(Types, t); i >= 0 {
		return i
	}
	return len(Types)
}

// CanonicalCompare orders names label by label from the right (DNS
// canonical order, RFC 4034 section 6.1, for lower-case names).
func CanonicalCompare(a, b string) int {
	la, lb := dns.SplitDomainName(a), dns.SplitDomainName(b)
	for i, j := len(la)-1, len(lb)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if c := strings.Compare(la[i], lb[j]); c != 0 {
			return c
		}
	}
	return len(la) - len(lb)
}

// CanonicalKey is a key whose byte order is CanonicalCompare's: the labels
// from the right, joined by NUL (which a stored name never holds raw).
// Computing it once per name makes sorting many names cheap.
func CanonicalKey(name string) string {
	l := dns.SplitDomainName(name)
	slices.Reverse(l)
	return strings.Join(l, "\x00")
}
