package failover

import (
	"cmp"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"net/netip"
	"slices"
)

// Endpoint is one address of a record, with what the strategies need.
type Endpoint struct {
	// IP is the address (IPv4 or IPv6).
	IP netip.Addr
	// Regions are the address's region tags. The first is its home region
	// for the priority strategy; region-filtered views and the geo answer
	// match any tag. Untagged endpoints match no region filter.
	Regions []string
	// Health is the address's health; passing and warning are served.
	Health Health
	// Weight is the address's weight for the weighted strategy, 0–65535.
	// Weight 0 is served only when no endpoint of positive weight is
	// healthy (Route 53's rule). Other strategies ignore it.
	Weight int
}

// home returns the endpoint's home region ("" when untagged).
func (e Endpoint) home() string {
	if len(e.Regions) == 0 {
		return ""
	}
	return e.Regions[0]
}

// hasRegion reports whether e is tagged with any of regions.
func (e Endpoint) hasRegion(regions []string) bool {
	for _, r := range e.Regions {
		if slices.Contains(regions, r) {
			return true
		}
	}
	return false
}

// StrategyKind names a strategy that chooses which healthy endpoints a
// record publishes. In JSON it is "allHealthy", "priority" or "weighted".
// Per-query strategies (round robin, weighted random, geo, region filter)
// are AnswerFuncs; for external providers they publish the set chosen here.
type StrategyKind uint8

const (
	// AllHealthy publishes every served endpoint. The default.
	AllHealthy StrategyKind = iota
	// Priority publishes the served endpoints of the first region, in
	// Strategy.Order, that has any; regions not listed come after the
	// listed ones in name order, untagged endpoints last.
	Priority
	// Weighted publishes the served endpoints of positive weight, or, when
	// there is none, the served endpoints of weight 0.
	Weighted
)

var strategyNames = [...]string{"allHealthy", "priority", "weighted"}

// String returns the JSON name of k.
func (k StrategyKind) String() string {
	if int(k) < len(strategyNames) {
		return strategyNames[k]
	}
	return fmt.Sprintf("StrategyKind(%d)", uint8(k))
}

// MarshalText writes the JSON name; it fails for an undefined value.
func (k StrategyKind) MarshalText() ([]byte, error) {
	if int(k) >= len(strategyNames) {
		return nil, configErr("strategy.kind", uint8(k), fielderr.OneOf("allHealthy", "priority", "weighted"))
	}
	return []byte(strategyNames[k]), nil
}

// UnmarshalText reads a JSON name; "" means allHealthy.
func (k *StrategyKind) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "" {
		*k = AllHealthy
		return nil
	}
	for i, n := range strategyNames {
		if n == s {
			*k = StrategyKind(i)
			return nil
		}
	}
	return configErr("strategy.kind", s, fielderr.OneOf("allHealthy", "priority", "weighted"))
}

// SelectFunc is a user's strategy: given the served endpoints of a record
// (passing or warning, in the record's order; never empty), it returns
// the ones to publish. It must be pure and safe for concurrent use and
// must not modify served. Endpoints it returns that are not among served
// are dropped, and an empty result means "none chosen" (the record's
// AllUnhealthy rule then decides), so a SelectFunc can neither publish an
// unhealthy address nor an empty set.
type SelectFunc func(served []Endpoint) []Endpoint

// Strategy chooses the published endpoints among the healthy ones: one of
// the built-in kinds, or a user's SelectFunc. The zero value is AllHealthy.
type Strategy struct {
	// Kind is the strategy.
	Kind StrategyKind `json:"kind"`
	// Order lists regions, primary first, for Priority. Names must be
	// distinct and non-empty; ignored by other kinds.
	Order []string `json:"order,omitempty"`
	// Func, when set, is the strategy instead of Kind (which must then be
	// AllHealthy, the zero value). Not read from or written to JSON.
	Func SelectFunc `json:"-"`
}

// Validate reports an undefined kind or a bad region order.
func (s Strategy) Validate() error {
	if int(s.Kind) >= len(strategyNames) {
		return configErr("strategy.kind", uint8(s.Kind), fielderr.OneOf("allHealthy", "priority", "weighted"))
	}
	if s.Func != nil && s.Kind != AllHealthy {
		return configErr("strategy.kind", s.Kind, "allHealthy (the zero value) when strategy.func is set")
	}
	for i, r := range s.Order {
		if r == "" || slices.Index(s.Order, r) != i {
			return configErr(fmt.Sprintf("strategy.order[%d]", i), r, "distinct, non-empty region names")
		}
	}
	return nil
}

// Select returns the endpoints s publishes from eps, in eps's order: a
// subset of the served endpoints, empty when none is served (or a Func
// chose none). eps is not modified.
func (s Strategy) Select(eps []Endpoint) []Endpoint {
	var served []Endpoint
	for _, e := range eps {
		if e.Health.Served() {
			served = append(served, e)
		}
	}
	if s.Func != nil {
		if len(served) == 0 {
			return nil
		}
		chosen := s.Func(slices.Clone(served))
		return slices.DeleteFunc(served, func(e Endpoint) bool {
			return !slices.ContainsFunc(chosen, func(c Endpoint) bool { return c.IP.Unmap() == e.IP.Unmap() })
		})
	}
	switch s.Kind {
	case Priority:
		if len(served) == 0 {
			return nil
		}
		best := slices.MinFunc(served, func(a, b Endpoint) int { return s.compareRank(a.home(), b.home()) })
		return slices.DeleteFunc(served, func(e Endpoint) bool { return e.home() != best.home() })
	case Weighted:
		pos := slices.DeleteFunc(slices.Clone(served), func(e Endpoint) bool { return e.Weight <= 0 })
		if len(pos) > 0 {
			return pos
		}
	}
	return served
}

// compareRank orders regions for Priority: listed regions by position,
// then unlisted ones by name, then "" (untagged).
func (s Strategy) compareRank(a, b string) int {
	ia, ib := slices.Index(s.Order, a), slices.Index(s.Order, b)
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	case ia >= 0 && ib >= 0:
		return cmp.Compare(ia, ib)
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	return cmp.Compare(a, b)
}
