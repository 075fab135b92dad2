package memory

import (
	"fmt"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/libdns/libdns"
)

// SupportedTypes lists the record types the zone stores and serves, in the
// order GetRecords reports them within one name. SOA is not among them: the
// zone owns its SOA (see SOA and Provider.SOA) and refuses writes to it.
// NS records below the apex delegate: the name holding them is a
// delegation point, and queries at or below it get referrals (see
// Provider.Respond).
var SupportedTypes = zonerecord.Types

// maxTTL is the largest TTL RFC 2181 allows (2^31 - 1 seconds).
const maxTTL = zonerecord.MaxTTL

// makeRec validates one input record for zone and returns its stored form
// and owner name. Errors are *RecordError.
func makeRec(zone string, in libdns.Record) (string, rec, error) {
	if in == nil {
		return "", rec{}, recErr(zone, "", "", fmt.Errorf("%w: nil record", ErrInvalidRecord))
	}
	fqdn, typ, _, _, wire, err := zonerecord.Parse(zone, in)
	if err != nil {
		if fqdn == "" {
			fqdn = in.RR().Name
		}
		return "", rec{}, recErr(zone, fqdn, typ, err)
	}
	return fqdn, rec{Wire: wire}, nil
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
	fqdn, err := zonerecord.Owner(zone, r.Name)
	if err != nil {
		return pattern{}, false
	}
	p := pattern{name: fqdn, typ: strings.ToUpper(strings.TrimSpace(r.Type))}
	if p.typ != "" {
		if _, ok := zonerecord.TypeCode(p.typ); !ok {
			return pattern{}, false
		}
	}
	p.anyTTL = r.TTL == 0
	if !p.anyTTL {
		ttl, err := zonerecord.TTL(r.TTL)
		if err != nil {
			return pattern{}, false
		}
		p.ttl = ttl
	}
	if r.Data != "" {
		p.data = r.Data
		if p.typ != "" {
			code, _ := zonerecord.TypeCode(p.typ)
			d, _, err := zonerecord.Canonical(in, fqdn, p.typ, code, 0, r.Data)
			if err != nil {
				return pattern{}, false
			}
			p.data = d
		}
	}
	return p, true
}

func (p pattern) match(r rec) bool {
	return (p.typ == "" || p.typ == r.Type()) &&
		(p.anyTTL || p.ttl == r.Wire.Header().Ttl) &&
		(p.data == "" || p.data == r.Data())
}

// ownerName is zonerecord.Owner (config.go's name for it).
func ownerName(zone, name string) (string, error) { return zonerecord.Owner(zone, name) }

// ttlSeconds is zonerecord.TTL (config.go's name for it).
func ttlSeconds(d time.Duration) (uint32, error) { return zonerecord.TTL(d) }
