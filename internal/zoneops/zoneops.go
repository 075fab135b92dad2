package zoneops

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/libdns/libdns"
)

// Zone normalises a zone name: trimmed, lower case, fully qualified. It
// rejects an empty or malformed name with an error naming it.
func Zone(zone string) (string, error) {
	z := dnsname.Fqdn(zone)
	if z == "." {
		return "", fmt.Errorf("zone %q: empty; want a name such as \"example.com.\"", zone)
	}
	if err := dnsname.Check(z); err != nil {
		return "", fmt.Errorf("zone %q: %w", zone, err)
	}
	return z, nil
}

// Name returns rr's name in comparable form: lower case, relative, "@"
// for the apex (also for "" and for the zone's own FQDN).
func Name(name, zone string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" || n == "@" {
		return "@"
	}
	if strings.HasSuffix(n, ".") {
		if rel, ok := dnsname.Relative(n, zone); ok {
			return rel
		}
	}
	return n
}

// Data returns rr's data in comparable form: canonical IP addresses, lower
// case fully qualified targets for CNAME, NS, MX and SRV; TXT and others
// unchanged.
func Data(typ, data string) string {
	switch strings.ToUpper(typ) {
	case "A", "AAAA":
		if ip, err := netip.ParseAddr(strings.TrimSpace(data)); err == nil {
			return ip.Unmap().String()
		}
	case "CNAME", "NS":
		return dnsname.Fqdn(data)
	case "MX", "SRV":
		f := strings.Fields(data)
		if len(f) > 0 {
			f[len(f)-1] = dnsname.Fqdn(f[len(f)-1])
		}
		return strings.Join(f, " ")
	}
	return data
}

// Key identifies a record by name, type and data, compared loosely as
// Name and Data describe.
type Key struct {
	Name, Type, Data string
}

// KeyOf returns the comparable key of r in zone.
func KeyOf(r libdns.Record, zone string) Key {
	rr := r.RR()
	return Key{Name: Name(rr.Name, zone), Type: strings.ToUpper(rr.Type), Data: Data(rr.Type, rr.Data)}
}

// RRset identifies an RRset by name and type.
type RRset struct {
	Name, Type string
}

// Set returns the RRset key of r.
func (k Key) Set() RRset { return RRset{Name: k.Name, Type: k.Type} }

// Matches reports whether the zone record r matches the DeleteRecords
// input pattern p: names equal, and type, TTL and value equal unless p
// leaves them empty ("", 0, "").
func Matches(r, p libdns.Record, zone string) bool {
	rk, pr := KeyOf(r, zone), p.RR()
	if rk.Name != Name(pr.Name, zone) {
		return false
	}
	if pr.Type != "" && !strings.EqualFold(pr.Type, rk.Type) {
		return false
	}
	if pr.TTL != 0 && pr.TTL.Truncate(time.Second) != r.RR().TTL.Truncate(time.Second) {
		return false
	}
	return pr.Data == "" || Data(pr.Type, pr.Data) == rk.Data
}

// Deletions returns the records of existing that DeleteRecords(patterns)
// must delete, each once, in existing's order.
func Deletions(existing, patterns []libdns.Record, zone string) []libdns.Record {
	var out []libdns.Record
	for _, r := range existing {
		for _, p := range patterns {
			if Matches(r, p, zone) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// Change is what SetRecords must do to one RRset to make it hold exactly
// the wanted records: add the wanted records missing from the zone
// (compared by key and TTL) and delete the zone records not wanted.
type Change struct {
	Set    RRset
	Add    []libdns.Record
	Delete []libdns.Record
}

// SetChanges returns, per RRset named in want (in first-seen order), the
// additions and deletions that turn existing into want. RRsets that need
// nothing are omitted.
func SetChanges(existing, want []libdns.Record, zone string) []Change {
	type kt struct {
		Key
		TTL time.Duration
	}
	keyTTL := func(r libdns.Record) kt {
		return kt{KeyOf(r, zone), r.RR().TTL.Truncate(time.Second)}
	}
	var order []RRset
	wanted := map[RRset][]libdns.Record{}
	wantKeys := map[RRset]map[kt]bool{}
	for _, w := range want {
		k := keyTTL(w)
		s := k.Set()
		if _, ok := wanted[s]; !ok {
			order = append(order, s)
			wantKeys[s] = map[kt]bool{}
		}
		wanted[s] = append(wanted[s], w)
		wantKeys[s][k] = true
	}
	changes := map[RRset]*Change{}
	have := map[kt]bool{}
	for _, e := range existing {
		k := keyTTL(e)
		s := k.Set()
		wk, named := wantKeys[s]
		if !named {
			continue
		}
		have[k] = true
		if !wk[k] {
			c := changes[s]
			if c == nil {
				c = &Change{Set: s}
				changes[s] = c
			}
			c.Delete = append(c.Delete, e)
		}
	}
	var out []Change
	for _, s := range order {
		c := changes[s]
		if c == nil {
			c = &Change{Set: s}
		}
		seen := map[kt]bool{}
		for _, w := range wanted[s] {
			k := keyTTL(w)
			if !have[k] && !seen[k] {
				c.Add = append(c.Add, w)
			}
			seen[k] = true
		}
		if len(c.Add) > 0 || len(c.Delete) > 0 {
			out = append(out, *c)
		}
	}
	return out
}

// Typed returns r as the libdns struct for its type (Address, TXT,
// CNAME, …), or r itself when its type has none or does not parse. A
// libdns.RR of type TXT whose data is presentation form (IsTXTStrings)
// stays a libdns.RR: its strings are not one text.
func Typed(r libdns.Record) libdns.Record {
	rr, ok := r.(libdns.RR)
	if !ok {
		return r
	}
	if strings.EqualFold(rr.Type, "TXT") && IsTXTStrings(rr.Data) {
		return r
	}
	p, err := r.RR().Parse()
	if err != nil {
		return r
	}
	return p
}

// TypedAll applies Typed to each record.
func TypedAll(rs []libdns.Record) []libdns.Record {
	out := make([]libdns.Record, len(rs))
	for i, r := range rs {
		out[i] = Typed(r)
	}
	return out
}
