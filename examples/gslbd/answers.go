package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider/memory"
)

// Per-query answers. The failover policy publishes a record's served
// addresses into the embedded zone; a record's answer kind then chooses,
// for each query, which of those published addresses to answer, from the
// client's subnet (EDNS Client Subnet, else the query's source address).
// The choice is made by the zone's answer hook (memory.Provider's
// SetAnswerFunc) with failover's answer functions, so it never answers an
// address the policy did not publish: a dead or drained address is never
// chosen. Hooks do not travel with replication or zone transfer: a node
// registers its own from the records and geo block of its own config.

// AnswerKind says how a record's published addresses are answered per query.
type AnswerKind string

const (
	// AnswerAll (also "", the default) answers every published address.
	AnswerAll AnswerKind = "all"
	// AnswerRoundRobin answers every published address, rotated by one
	// position per query (failover.RoundRobin).
	AnswerRoundRobin AnswerKind = "roundRobin"
	// AnswerWeightedRandom answers one published address, chosen at random
	// in proportion to its weight (failover.WeightedRandom); an address of
	// weight 0 only while no address of positive weight is published.
	AnswerWeightedRandom AnswerKind = "weightedRandom"
	// AnswerGeo answers the published addresses of the client's region by
	// the geo block, else of the nearest region in its preferences that
	// has any (failover.Geo).
	AnswerGeo AnswerKind = "geo"
	// AnswerRegionFilter answers only the published addresses of the
	// client's region (failover.RegionFilter); none published there, or a
	// client the geo block does not place: every published address.
	AnswerRegionFilter AnswerKind = "regionFilter"
)

const answerKinds = `"all" (or ""), "roundRobin", "weightedRandom", "geo" or "regionFilter"`

// withinKinds are the kinds a record's within may name.
const withinKinds = `"all" (or ""), "roundRobin" or "weightedRandom"`

// kind is k with "" read as AnswerAll.
func (k AnswerKind) kind() AnswerKind {
	if k == "" {
		return AnswerAll
	}
	return k
}

// usesGeo reports whether the kind places clients with the geo block.
func (k AnswerKind) usesGeo() bool { return k == AnswerGeo || k == AnswerRegionFilter }

// perQuery reports whether the kind registers an answer hook.
func (k AnswerKind) perQuery() bool { return k.kind() != AnswerAll }

// within is r's Within with "all" read as "" (every one, as without).
func (r RecordSpec) within() AnswerKind {
	if r.Within == AnswerAll {
		return ""
	}
	return r.Within
}

// checkKind refuses k (field f) unless it is one of known ("" is "all"),
// with a hint when only its case is wrong; allowed lists them for the
// error.
func checkKind(f string, k AnswerKind, known []AnswerKind, allowed string) error {
	if slices.Contains(known, k.kind()) {
		return nil
	}
	for _, kn := range known {
		if strings.EqualFold(string(k), string(kn)) {
			return bad(f, k, fmt.Sprintf("%s (kinds are case-sensitive: did you mean %q?)", allowed, kn))
		}
	}
	return bad(f, k, allowed)
}

// answerOf is how a record is answered per query: its kind and, for geo
// and regionFilter, how the chosen region's addresses are answered.
type answerOf struct {
	kind, within AnswerKind
	// steps are the hook's steps (nil for kind all), for GET /api/explain.
	steps []failover.Step
}

// choiceHook is the answer function of kind roundRobin or weightedRandom
// over m's addresses, nil for the other kinds (every address, as handed
// in). It serves both as a record's answer and as its within.
func choiceHook(k AnswerKind, m failover.Record) failover.AnswerFunc {
	switch k {
	case AnswerRoundRobin:
		return failover.RoundRobin()
	case AnswerWeightedRandom:
		return failover.WeightedRandom(m.Weights(), nil)
	}
	return nil
}

// validateAnswers checks every record's answer kind, the addresses'
// weights and regions it relies on, and the geo block; records' names and
// addresses are already checked (in node mode, those of the records with
// a per-query kind). providerType is the external provider's type, which
// cannot answer per query ("" or "embedded": none).
func (c *Config) validateAnswers(providerType string) error {
	geoRegions := map[string]bool{} // regions of the addresses of geo records
	geoUsed := false
	for i := range c.Records {
		r := &c.Records[i]
		f := fmt.Sprintf("records[%d]", i)
		k := r.Answer.kind()
		if err := checkKind(f+".answer", r.Answer, []AnswerKind{AnswerAll, AnswerRoundRobin, AnswerWeightedRandom, AnswerGeo, AnswerRegionFilter}, answerKinds); err != nil {
			return err
		}
		if r.Within != "" {
			if !k.usesGeo() {
				return bad(f+".within", r.Within, `nothing (within is for answer geo or regionFilter: how the chosen region's addresses are answered), or answer geo or regionFilter`)
			}
			if err := checkKind(f+".within", r.Within, []AnswerKind{AnswerAll, AnswerRoundRobin, AnswerWeightedRandom}, withinKinds); err != nil {
				return err
			}
		}
		if len(r.Steps) > 0 && providerType != "" && providerType != "embedded" {
			return bad(f+".steps", fmt.Sprintf("%d steps", len(r.Steps)), "none with provider.type "+providerType+": steps choose per query, which needs provider.type embedded (the embedded zone and gslbd nodes answer them)")
		}
		if _, err := buildSteps(f, *r, c.Geo, nil); err != nil {
			return err
		}
		if slices.ContainsFunc(r.Steps, func(s StepSpec) bool { return s.Proximity != nil }) {
			geoUsed = true
			for _, a := range r.Addresses {
				for _, reg := range a.Regions {
					geoRegions[reg] = true
				}
			}
		}
		if k.perQuery() && providerType != "" && providerType != "embedded" {
			return bad(f+".answer", r.Answer, `"all" (or "") with provider.type `+providerType+
				": the provider answers every published address to every client; per-query answers need provider.type embedded (the embedded zone and gslbd nodes answer them)")
		}
		if k == AnswerWeightedRandom || r.Within == AnswerWeightedRandom {
			if !slices.ContainsFunc(r.Addresses, func(a AddressSpec) bool { return a.Weight > 0 }) {
				with := "answer weightedRandom"
				if k != AnswerWeightedRandom {
					with = "within weightedRandom"
				}
				return bad(f+".addresses", "every weight 0", "at least one address of weight in [1, 65535] with "+with+" (weight 0 is answered only while no address of positive weight is published; give every address weight 1 for a uniform choice)")
			}
		}
		switch {
		case k.usesGeo():
			geoUsed = true
			if c.Policy.Strategy.Kind == failover.Priority {
				return bad(f+".answer", r.Answer, "a kind other than geo and regionFilter with policy.strategy priority (it publishes one region's addresses at a time, leaving nothing to choose by region), or policy.strategy allHealthy or weighted")
			}
			if c.Geo == nil {
				return bad(f+".answer", r.Answer, "a top-level geo block (prefixes, preferences, default) with answer "+string(k)+`, or another kind: `+answerKinds)
			}
			for _, a := range r.Addresses {
				for _, reg := range a.Regions {
					geoRegions[reg] = true
				}
			}
		}
	}
	if c.Geo == nil {
		return nil
	}
	if !geoUsed {
		return bad("geo", "a geo block", `only with a record whose answer is "geo" or "regionFilter", or with a proximity step (no record uses it)`)
	}
	return c.validateGeo(geoRegions)
}

// validateGeo checks the geo block against the regions of the addresses
// of the records that use it: every region it places clients in has
// addresses or preferences, every preference names a region with
// addresses, and every geo record has an address in a region it names.
func (c *Config) validateGeo(addrRegions map[string]bool) error {
	g := *c.Geo
	if err := g.Validate(); err != nil {
		return badErr("geo", nil, "a valid geo block", err)
	}
	if len(g.Prefixes) == 0 && g.Default == "" {
		return bad("geo.prefixes", "{}", "at least one prefix, or a geo.default region: a geo block that places no client changes no answer")
	}
	have := slices.Sorted(maps.Keys(addrRegions))
	placed := map[string]bool{} // regions clients are placed in
	for _, r := range g.Prefixes {
		placed[r] = true
	}
	if g.Default != "" {
		placed[g.Default] = true
	}
	known := func(reg string) bool {
		_, hasCoords := g.Coordinates[reg] // a place proximity steps measure from
		return addrRegions[reg] || len(g.Preferences[reg]) > 0 || hasCoords
	}
	allowed := "a region some address of a geo or regionFilter record is tagged with (" + strings.Join(have, ", ") + "), or one with a geo.preferences entry"
	prefixes := slices.SortedFunc(maps.Keys(g.Prefixes), func(a, b netip.Prefix) int {
		return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
	})
	for _, p := range prefixes {
		if reg := g.Prefixes[p]; !known(reg) {
			return bad(fmt.Sprintf("geo.prefixes[%s]", p), reg, allowed)
		}
	}
	if g.Default != "" && !known(g.Default) {
		return bad("geo.default", g.Default, allowed)
	}
	for _, k := range slices.Sorted(maps.Keys(g.Preferences)) {
		if !placed[k] {
			return bad(fmt.Sprintf("geo.preferences[%s]", k), k, "a region geo.prefixes or geo.default places clients in ("+strings.Join(slices.Sorted(maps.Keys(placed)), ", ")+")")
		}
		for j, reg := range g.Preferences[k] {
			if !addrRegions[reg] {
				return bad(fmt.Sprintf("geo.preferences[%s][%d]", k, j), reg, "a region some address of a geo or regionFilter record is tagged with ("+strings.Join(have, ", ")+")")
			}
		}
	}
	named := map[string]bool{} // regions an answer can come from
	for reg := range placed {
		named[reg] = true
	}
	for _, list := range g.Preferences {
		for _, reg := range list {
			named[reg] = true
		}
	}
	for i, r := range c.Records {
		if !r.Answer.kind().usesGeo() {
			continue
		}
		if !slices.ContainsFunc(r.Addresses, func(a AddressSpec) bool {
			return slices.ContainsFunc(a.Regions, func(reg string) bool { return named[reg] })
		}) {
			return bad(fmt.Sprintf("records[%d].addresses", i), "no address in a region of the geo block",
				"at least one address tagged with a region geo places clients in or prefers ("+strings.Join(slices.Sorted(maps.Keys(named)), ", ")+")")
		}
	}
	return nil
}

// validateNodeAnswers checks, in node mode, the records that have a
// per-query answer kind: a node answers them as the controller would (see
// installAnswersWith); their probes and the rest are the controller's
// business and are not read. A record without one is ignored.
func (c *Config) validateNodeAnswers() error {
	seen := map[string]bool{}
	for i := range c.Records {
		r := &c.Records[i]
		if !r.perQuery() {
			continue
		}
		f := fmt.Sprintf("records[%d]", i)
		if err := dnsname.Check(r.Name); err != nil || r.Name == "" {
			return badErr(f+".name", r.Name, "a DNS name inside one of node.zones", err)
		}
		r.Name = dnsname.Fqdn(strings.ToLower(r.Name))
		if !slices.ContainsFunc(c.Node.Zones, func(z string) bool {
			z = dnsname.Fqdn(strings.ToLower(z))
			return dnsname.InZone(r.Name, z) && r.Name != z
		}) {
			return bad(f+".name", r.Name, "a name below one of node.zones ("+strings.Join(c.Node.Zones, ", ")+")")
		}
		if seen[r.Name] {
			return bad(f+".name", r.Name, "each name once")
		}
		seen[r.Name] = true
		if err := checkAddresses(f, r); err != nil {
			return err
		}
	}
	return c.validateAnswers("")
}

// installAnswersWith registers, on zone, the answer hook of every record
// of cfg (validated) with a per-query answer kind, its steps' tables with
// st, and returns how each record is answered, by name.
func installAnswersWith(zone *memory.Provider, cfg Config, st *steering) (map[string]answerOf, error) {
	var loc *failover.Locator
	if cfg.Geo != nil {
		var err error
		if loc, err = failover.NewLocator(*cfg.Geo); err != nil {
			return nil, err
		}
	}
	kinds := map[string]answerOf{}
	for i, r := range cfg.Records {
		k := r.Answer.kind()
		within := r.within()
		kinds[r.Name] = answerOf{kind: k, within: within}
		steps := recordSteps(k, within, loc, r.model(cfg.Zone, nil))
		extra, err := buildSteps(fmt.Sprintf("records[%d]", i), r, cfg.Geo, st)
		if err != nil {
			return nil, err
		}
		for j, f := range extra {
			// The record's steps: after answer and within, in order.
			steps = append(steps, failover.Step{Name: r.Steps[j].kind(), Answer: f})
		}
		if len(steps) == 0 {
			continue
		}
		kinds[r.Name] = answerOf{kind: k, within: within, steps: steps}
		// The query path: the steps' functions, chained (explain.go
		// explains the same values on request).
		zone.SetAnswerFunc(r.Name, memory.AnswerFunc(failover.StepChain(steps...)))
	}
	return kinds, nil
}

// answerSummary says, for -check, how a record is answered per query, e.g.
// "weightedRandom (weights 192.0.2.1=3, 192.0.2.2=1)" or "geo (regions
// eu-west, us-east; 3 prefixes, default us-east)".
func answerSummary(cfg Config, r RecordSpec) string {
	s := kindSummary(cfg, r)
	if len(r.Steps) > 0 {
		ks := make([]string, len(r.Steps))
		for i, st := range r.Steps {
			ks[i] = st.kind()
		}
		s += ", then steps " + strings.Join(ks, ", ")
	}
	return s
}

// kindSummary is answerSummary without the steps.
func kindSummary(cfg Config, r RecordSpec) string {
	k := r.Answer.kind()
	switch k {
	case AnswerAll:
		return "all (every published address)"
	case AnswerWeightedRandom:
		return fmt.Sprintf("%s (one address per query; weights %s)", k, weightList(r))
	case AnswerGeo, AnswerRegionFilter:
		regs := map[string]bool{}
		for _, a := range r.Addresses {
			for _, reg := range a.Regions {
				regs[reg] = true
			}
		}
		s := fmt.Sprintf("%s (regions %s", k, strings.Join(slices.Sorted(maps.Keys(regs)), ", "))
		if cfg.Geo != nil {
			s += fmt.Sprintf("; %d prefixes", len(cfg.Geo.Prefixes))
			if cfg.Geo.Default != "" {
				s += ", default " + cfg.Geo.Default
			}
		}
		switch r.Within {
		case AnswerRoundRobin:
			s += "; within the region: every address, rotated per query"
		case AnswerWeightedRandom:
			s += "; within the region: one address per query, weights " + weightList(r)
		}
		return s + ")"
	}
	return string(k) + " (every published address, rotated per query)"
}

// weightList is r's addresses with their weights, e.g. "192.0.2.1=3,
// 192.0.2.2=1".
func weightList(r RecordSpec) string {
	parts := make([]string, len(r.Addresses))
	for i, a := range r.Addresses {
		parts[i] = fmt.Sprintf("%s=%d", a.IP, a.Weight)
	}
	return strings.Join(parts, ", ")
}

// answerDigest is a fingerprint of how a config answers per query: one
// digest per name with a per-query kind (its kind, within, and its
// addresses' IPs, weights and regions) and one of the geo block. A
// controller serves its own at GET /replication/answers; a node compares
// it with its config's (see answersCheck), since answer hooks do not
// travel with replication and a node's file can fall behind the
// controller's.
type answerDigest struct {
	Names map[string]string `json:"names"`
	Geo   string            `json:"geo,omitempty"`
}

// digestAnswers returns cfg's answerDigest (cfg validated).
func digestAnswers(cfg Config) answerDigest {
	sum := func(v any) string {
		b, _ := json.Marshal(v) // plain values: cannot fail
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:12])
	}
	type addr struct {
		IP      string   `json:"ip"`
		Weight  int      `json:"w"`
		Regions []string `json:"r"`
	}
	d := answerDigest{Names: map[string]string{}}
	for _, r := range cfg.Records {
		k := r.Answer.kind()
		if !r.perQuery() {
			continue
		}
		var as []addr
		for _, a := range r.Addresses {
			ip := a.IP
			if p, err := netip.ParseAddr(a.IP); err == nil {
				ip = p.Unmap().String()
			}
			as = append(as, addr{IP: ip, Weight: a.Weight, Regions: slices.Sorted(slices.Values(a.Regions))})
		}
		slices.SortFunc(as, func(x, y addr) int { return strings.Compare(x.IP, y.IP) })
		parts := []any{k, r.within(), as}
		if len(r.Steps) > 0 {
			parts = append(parts, r.Steps)
		}
		d.Names[dnsname.Fqdn(strings.ToLower(r.Name))] = sum(parts)
	}
	if g := cfg.Geo; g != nil {
		prefixes := make([][2]string, 0, len(g.Prefixes))
		for p, reg := range g.Prefixes {
			prefixes = append(prefixes, [2]string{p.String(), reg})
		}
		slices.SortFunc(prefixes, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
		parts := []any{prefixes, g.Preferences, g.Default} // json sorts the map's keys
		if len(g.Coordinates) > 0 {
			parts = append(parts, g.Coordinates)
		}
		d.Geo = sum(parts)
	}
	return d
}

// differences lists, sorted, what makes d and o answer differently: the
// names whose digests differ or that only one of them answers per query,
// and "geo" when the geo blocks differ.
func (d answerDigest) differences(o answerDigest) []string {
	var out []string
	for n, s := range d.Names {
		if o.Names[n] != s {
			out = append(out, n)
		}
	}
	for n := range o.Names {
		if _, ok := d.Names[n]; !ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	if d.Geo != o.Geo {
		out = append(out, "geo")
	}
	return out
}
