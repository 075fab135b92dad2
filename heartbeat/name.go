package heartbeat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/fielderr"
)

// Scope says which zone a beat lives in and who reads it.
type Scope uint8

const (
	// Local beats live in the region's private zone and are read by the
	// other clusters of the same region (they build the regional record).
	Local Scope = iota + 1
	// Global beats live in the global zone and are read by every region
	// (they build the failover record).
	Global
)

// String returns "local" or "global".
func (s Scope) String() string {
	switch s {
	case Local:
		return "local"
	case Global:
		return "global"
	}
	return "unknown"
}

// Valid reports whether s is Local or Global.
func (s Scope) Valid() bool { return s == Local || s == Global }

// MarshalText writes the scope as "local" or "global".
func (s Scope) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("heartbeat: scope %d: allowed %s", uint8(s), fielderr.OneOf("local", "global"))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads "local" or "global".
func (s *Scope) UnmarshalText(b []byte) error {
	switch string(b) {
	case "local":
		*s = Local
	case "global":
		*s = Global
	default:
		return fmt.Errorf("heartbeat: scope %q: allowed %s", b, fielderr.OneOf("local", "global"))
	}
	return nil
}

// DefaultPrefix is the label prefix of beat records: a cluster named
// "eu-1" publishes its beat at "health-001-eu-1.<zone>".
const DefaultPrefix = "health-001-"

// ErrName is wrapped by every error about a record name, a prefix or a
// cluster name.
var ErrName = errors.New("heartbeat: invalid name")

// Naming maps cluster names to beat record names and back. The zero value
// uses DefaultPrefix. It is a plain value, safe for concurrent use.
type Naming struct {
	// Prefix is prepended to the cluster name to form the record's first
	// label; "" means DefaultPrefix. Letters, digits and hyphens only, and
	// prefix plus cluster must fit one 63-byte label.
	Prefix string
}

func (n Naming) prefix() string {
	if n.Prefix == "" {
		return DefaultPrefix
	}
	return strings.ToLower(n.Prefix)
}

// CheckPrefix reports whether the prefix is usable: 1–40 bytes of
// letters, digits and hyphens, not starting with a hyphen (it may end
// with one). The empty prefix (meaning DefaultPrefix) is valid.
func (n Naming) CheckPrefix() error {
	p := n.Prefix
	if p == "" {
		return nil
	}
	if len(p) > 40 {
		return fielderr.New(ErrName, "prefix", p, prefixRule)
	}
	// A trailing hyphen is fine in a prefix: it is followed by the cluster.
	if err := dnsname.CheckLabel(strings.TrimSuffix(p, "-")+"x", false); err != nil {
		return fielderr.New(ErrName, "prefix", p, prefixRule)
	}
	return nil
}

// CheckCluster reports whether cluster is a valid cluster name: a DNS
// label (RFC 1123: letters, digits, hyphens, not starting or ending with a
// hyphen) short enough that prefix plus cluster fit one 63-byte label.
// Cluster names are compared in lower case.
func (n Naming) CheckCluster(cluster string) error {
	if err := n.CheckPrefix(); err != nil {
		return err
	}
	if dnsname.CheckLabel(cluster, false) != nil {
		return fielderr.New(ErrName, "cluster", cluster, dnsname.LabelRule)
	}
	if max := dnsname.MaxLabel - len(n.prefix()); len(cluster) > max {
		return fielderr.New(ErrName, "cluster", cluster, fmt.Sprintf("[1, %d] bytes with prefix %q", max, n.prefix()))
	}
	return nil
}

// Label returns the beat record's name relative to its zone (libdns
// convention), e.g. "health-001-eu-1", in lower case.
func (n Naming) Label(cluster string) (string, error) {
	if err := n.CheckCluster(cluster); err != nil {
		return "", err
	}
	return n.prefix() + strings.ToLower(cluster), nil
}

// Name returns the beat record's fully qualified name in zone, e.g.
// "health-001-eu-1.global.example.com.".
func (n Naming) Name(cluster, zone string) (string, error) {
	l, err := n.Label(cluster)
	if err != nil {
		return "", err
	}
	if dnsname.Check(zone) != nil {
		return "", fielderr.New(ErrName, "zone", zone, dnsname.NameRule)
	}
	full := dnsname.Join(l, zone)
	if dnsname.Check(full) != nil {
		return "", fielderr.New(ErrName, "zone", zone, fmt.Sprintf("a name short enough that %q under it is at most %d bytes", l, dnsname.MaxName))
	}
	return full, nil
}

// Cluster returns the cluster whose beat lives at name, a record name
// relative to zone (libdns convention) or fully qualified inside zone. It
// reports false when name is not a beat record name under this prefix.
func (n Naming) Cluster(name, zone string) (string, bool) {
	rel := strings.ToLower(strings.TrimSpace(name))
	if strings.HasSuffix(rel, ".") {
		r, ok := dnsname.Relative(rel, zone)
		if !ok {
			return "", false
		}
		rel = r
	}
	p := n.prefix()
	if !strings.HasPrefix(rel, p) || strings.Contains(rel, ".") {
		return "", false
	}
	c := rel[len(p):]
	if n.CheckCluster(c) != nil {
		return "", false
	}
	return c, true
}

// Name returns the fully qualified beat record name of cluster in zone
// with the default prefix: Naming{}.Name(cluster, zone).
func Name(cluster, zone string) (string, error) { return Naming{}.Name(cluster, zone) }
