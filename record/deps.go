package record

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// ErrDependency marks an RRset that was not published (or not changed)
// because an RRset it needs could not be: see RRSet.Needs. The published
// records stay as they are.
var ErrDependency = errors.New("record: dependency not published")

// DependencyError reports an RRset held back by a dependency. It unwraps
// to ErrDependency; Err says what happened to the dependency.
type DependencyError struct {
	// Key is the RRset held back.
	Key Key
	// Needs is the dependency that could not be published.
	Needs Key
	// Err is why: the dependency's own refusal (matching ErrNotOwned,
	// ErrTypeSwitch, ErrEmptySet or ErrDependency), its failed write (a
	// *WriteError), or nil when it is neither desired nor published.
	Err error
}

// Error names both sets and the cause.
func (e *DependencyError) Error() string {
	cause := "it is neither desired nor published"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	return fmt.Sprintf("record: %s not published: it needs %s, and %s", e.Key, e.Needs, cause)
}

// Unwrap returns ErrDependency.
func (e *DependencyError) Unwrap() error { return ErrDependency }

// normNeeds returns needs with canonical keys (nil when empty).
func normNeeds(needs []Key) []Key {
	if len(needs) == 0 {
		return nil
	}
	out := make([]Key, len(needs))
	for i, k := range needs {
		z := dnsname.Fqdn(k.Zone)
		out[i] = Key{Zone: z, Name: relName(k.Name, z), Type: strings.ToUpper(strings.TrimSpace(k.Type))}
	}
	return out
}

// needsOf returns the dependencies of a desired set: its Needs, and for a
// CNAME the sets desired at its target when the target is in a desired
// zone.
func needsOf(s RRSet, zones map[string]*zoneDesired) []Key {
	out := slices.Clone(s.Needs)
	if s.Type != "CNAME" || len(s.Values) == 0 {
		return out
	}
	target := dnsname.Fqdn(s.Values[0])
	best := ""
	for z := range zones {
		if dnsname.InZone(target, z) && len(z) > len(best) {
			best = z
		}
	}
	if best == "" {
		return out
	}
	zd := zones[best]
	rel := relName(target, best)
	lo, hi := zd.find(rel)
	for _, t := range zd.sets[lo:hi] {
		if k := t.Key(); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// resolveDeps holds back the creates and updates whose dependencies the
// plan cannot publish, to a fixed point (a chain of CNAMEs is held back
// whole), and reports each as a Refusal matching ErrDependency. It also
// records each remaining change's dependencies in Change.Needs, for the
// write order (Steps) and for the reconciler's failure handling.
func resolveDeps(out *Changes, zones map[string]*zoneDesired, idx map[string]*zoneIndex) {
	refusedName := map[Name]error{}
	refused := map[Key]error{}
	for _, r := range out.Refused {
		if r.Key.Type == "" {
			refusedName[r.Key.Node()] = r.Err
		} else {
			refused[r.Key] = r.Err
		}
	}
	any := false
	for zi := range out.Zones {
		for ci := range out.Zones[zi].Changes {
			c := &out.Zones[zi].Changes[ci]
			if c.Op == OpCreate || c.Op == OpUpdate {
				c.Needs = needsOf(c.New, zones)
				any = any || len(c.Needs) > 0
			}
		}
	}
	if !any {
		return
	}
	status := func(d Key) (bool, error) {
		if err, ok := refusedName[d.Node()]; ok {
			return false, err
		}
		zd, zi := zones[d.Zone], idx[d.Zone]
		if zd == nil || zi == nil {
			return false, fmt.Errorf("%w: %s", ErrMissingZone, d.Zone)
		}
		if w := zd.withdraw[d.Name]; w != nil && (w[""] || w[d.Type]) {
			return false, nil
		}
		ni := zi.lookup(d.Name)
		lo, hi := zd.find(d.Name)
		for _, s := range zd.sets[lo:hi] {
			if d.Type != "" && s.Type != d.Type {
				continue
			}
			if err, ok := refused[s.Key()]; ok {
				if d.Type != "" {
					return false, err
				}
				continue
			}
			if len(s.Values) > 0 || zi.get(ni, s.Type) != nil {
				return true, nil // written, unchanged or held
			}
		}
		if d.Type == "" {
			var buf [8]string
			return len(zi.types(ni, buf[:0])) > 0, nil
		}
		return zi.get(ni, d.Type) != nil, nil
	}
	blocked := map[Key]bool{}
	for changed := true; changed; {
		changed = false
		for _, zc := range out.Zones {
			for _, c := range zc.Changes {
				if len(c.Needs) == 0 || blocked[c.Key] {
					continue
				}
				for _, d := range c.Needs {
					if ok, cause := status(d); !ok {
						err := &DependencyError{Key: c.Key, Needs: d, Err: cause}
						blocked[c.Key], refused[c.Key] = true, err
						out.Refused = append(out.Refused, Refusal{Key: c.Key, Err: err})
						changed = true
						break
					}
				}
			}
		}
	}
	if len(blocked) == 0 {
		return
	}
	zones2 := out.Zones[:0]
	for _, zc := range out.Zones {
		keep := zc.Changes[:0]
		for _, c := range zc.Changes {
			if !blocked[c.Key] {
				keep = append(keep, c)
			}
		}
		// A claim is only needed for a name that still changes.
		final := keep[:0]
		for _, c := range keep {
			if c.Op == OpClaim && !slices.ContainsFunc(keep, func(o Change) bool {
				return o.Op != OpClaim && o.Key.Zone == c.Key.Zone && markerName(prefixOf(c.Key.Name), o.Key.Name) == c.Key.Name
			}) {
				continue
			}
			final = append(final, c)
		}
		if len(final) > 0 {
			zc.Changes = final
			zones2 = append(zones2, zc)
		}
	}
	out.Zones = zones2
}

// prefixOf returns the marker prefix of a marker name (its first label).
func prefixOf(marker string) string {
	p, _, _ := strings.Cut(marker, ".")
	return p
}
