package rfc2136

import (
	"context"
	"fmt"
	"strings"

	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// ReplaceFenced implements record.Fencer with one UPDATE (RFC 2136),
// which the server applies atomically or not at all (section 3.7). Its
// prerequisite section holds the fence as expected: "RRset exists (value
// dependent)" (section 2.4.2) with was, or "RRset does not exist"
// (section 2.4.3) when was.Text is empty; the server checks it before
// applying anything (section 3.2) and answers NXRRSET or YXRRSET when it
// does not hold. Its update section deletes del (each record exactly,
// section 2.5.4), replaces the RRsets of set (delete the RRset, add the
// records) and replaces the fence's TXT RRset by now. A refusal is a
// *ResponseError whose Fenced() is true. Unlike DeleteRecords it neither
// reads the zone nor rewrites SVCB/HTTPS sets: del must be records as
// GetRecords returned them.
func (p *Provider) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	return p.replace(ctx, zone, &[2]libdns.TXT{was, now}, del, set)
}

// ReplaceRecords implements record.Replacer with one UPDATE (RFC 2136),
// which the server applies atomically or not at all (section 3.7): it
// deletes del (each record exactly, section 2.5.4) and replaces the
// RRsets of set (delete the RRset, add the records), in that order, so a
// name switches between a CNAME and addresses without a moment in which
// it has neither. Like ReplaceFenced it neither reads the zone nor
// rewrites SVCB/HTTPS sets: del must be records as GetRecords returned
// them.
func (p *Provider) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	return p.replace(ctx, zone, nil, del, set)
}

// replace sends one UPDATE deleting del and replacing the RRsets of set;
// with fence (was, now) it also holds the prerequisite on was and
// replaces the fence by now.
func (p *Provider) replace(ctx context.Context, zone string, fence *[2]libdns.TXT, del, set []libdns.Record) error {
	z, err := zoneops.Zone(zone)
	if err != nil {
		return fmt.Errorf("rfc2136: %w", err)
	}
	m := new(dns.Msg)
	m.SetUpdate(z)
	var next dns.RR
	if fence != nil {
		was, now := fence[0], fence[1]
		if next, err = toRR(now, z); err != nil {
			return err
		}
		if was.Text == "" {
			m.RRsetNotUsed([]dns.RR{next})
		} else {
			prev, err := toRR(was, z)
			if err != nil {
				return err
			}
			if !strings.EqualFold(prev.Header().Name, next.Header().Name) {
				return fmt.Errorf("rfc2136: ReplaceFenced: fence was %s, now %s: not one name", prev.Header().Name, next.Header().Name)
			}
			m.Used([]dns.RR{prev}) // sets its class and TTL as the section wants
		}
	}
	if len(del) > 0 {
		rrs, err := toRRs(del, z)
		if err != nil {
			return err
		}
		m.Remove(rrs)
	}
	if len(set) > 0 {
		rrs, err := toRRs(set, z)
		if err != nil {
			return err
		}
		m.RemoveRRset(rrs)
		m.Insert(rrs)
	}
	if next != nil {
		m.RemoveRRset([]dns.RR{next})
		m.Insert([]dns.RR{next})
	}
	if len(m.Ns) == 0 {
		return nil // nothing to change
	}
	return p.update(ctx, z, m)
}

// Fenced reports whether the server refused an UPDATE because a
// prerequisite did not hold (NXRRSET or YXRRSET): only ReplaceFenced sends
// prerequisites, so this is a fenced write refused (record.ErrFenced).
func (e *ResponseError) Fenced() bool {
	return e.Op == "update" && (e.Rcode == dns.RcodeNXRrset || e.Rcode == dns.RcodeYXRrset)
}
