package record

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/libdns/libdns"
)

// Op is what a Change does to the zone.
type Op uint8

const (
	// OpClaim writes the owner marker of a free or adopted name.
	OpClaim Op = iota + 1
	// OpCreate publishes an RRset that does not exist yet.
	OpCreate
	// OpUpdate replaces an RRset's values or TTL (one SetRecords of the set).
	OpUpdate
	// OpDelete removes an RRset (a withdraw, or the old type of a switch).
	OpDelete
	// OpRelease removes the owner marker of a name left empty by withdraws.
	OpRelease
)

// String returns "claim", "create", "update", "delete" or "release".
func (o Op) String() string {
	switch o {
	case OpClaim:
		return "claim"
	case OpCreate:
		return "create"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	case OpRelease:
		return "release"
	}
	return "unknown"
}

// Change is one RRset-level change of a plan.
type Change struct {
	// Op says what happens.
	Op Op
	// Key is the RRset changed (for claims and releases, the marker's).
	Key Key
	// Old is the RRset as published; zero for claims and creates.
	Old RRSet
	// New is the RRset as it will be; zero for deletes and releases.
	New RRSet
	// Switch is true for the deletion of the old type and the creation of
	// the new one when a name switches between CNAME and other types.
	Switch bool
	// Needs are the RRsets a create or update depends on (RRSet.Needs and
	// a CNAME's target in a desired zone); it is written after them.
	Needs []Key

	// oldRecs are the records exactly as read, so deletions match them.
	oldRecs []libdns.Record
}

// deleted returns the records a deletion removes: as they were read when
// Plan made the change, else (a Change built by hand) those of Old.
func (c Change) deleted() []libdns.Record {
	if c.oldRecs != nil {
		return c.oldRecs
	}
	return c.Old.Records()
}

// String renders the change on one line, zone-file style.
func (c Change) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %s %s", c.Op, c.Key.Name, c.Key.Type)
	switch c.Op {
	case OpClaim, OpCreate:
		fmt.Fprintf(&b, " %d %s", int64(c.New.TTL.Seconds()), strings.Join(c.New.Values, " "))
	case OpUpdate:
		fmt.Fprintf(&b, " %d %s -> %d %s", int64(c.Old.TTL.Seconds()), strings.Join(c.Old.Values, " "),
			int64(c.New.TTL.Seconds()), strings.Join(c.New.Values, " "))
	case OpDelete, OpRelease:
		fmt.Fprintf(&b, " %d %s", int64(c.Old.TTL.Seconds()), strings.Join(c.Old.Values, " "))
	}
	if c.Switch {
		b.WriteString(" (type switch)")
	}
	return b.String()
}

// ZoneChanges are the changes of one zone, in the order they are applied.
type ZoneChanges struct {
	// Zone is the zone ("example.com.").
	Zone string
	// Changes are ordered by name (apex first), then claim, deletes, sets
	// and release within a name.
	Changes []Change
}

// StepKind is the provider call of a Step.
type StepKind uint8

const (
	// StepSet is a libdns SetRecords call.
	StepSet StepKind = iota + 1
	// StepDelete is a libdns DeleteRecords call.
	StepDelete
	// StepReplace is a Replacer.ReplaceRecords call (delete and set at once).
	StepReplace
)

// String returns "set", "delete" or "replace".
func (k StepKind) String() string {
	switch k {
	case StepSet:
		return "set"
	case StepDelete:
		return "delete"
	case StepReplace:
		return "replace"
	}
	return "unknown"
}

// Step is one provider call of a zone's changes.
type Step struct {
	// Kind is the call.
	Kind StepKind
	// Set are the records to set (StepSet, StepReplace).
	Set []libdns.Record
	// Delete are the records to delete (StepDelete, StepReplace), exactly as
	// they were read from the provider.
	Delete []libdns.Record
	// Switch is true when the step deletes the old type of a type switch.
	Switch bool
	// Claim is true for the step that writes owner markers.
	Claim bool
	// Dependents is true for the step that sets RRsets whose dependencies
	// change in the same zone (see RRSet.Needs): it runs only after the
	// step that writes them succeeded.
	Dependents bool
}

// Steps returns the provider calls that apply z, at most five, in order:
// set the owner markers of newly claimed names (first, so a failure never
// leaves records without their marker); delete RRsets (withdraws and the
// old types of switches); set new and changed RRsets; set the RRsets that
// need one of those (a CNAME and its pool: the pool first, so a failure
// never publishes a CNAME to nothing); delete the markers of released
// names (last, so a failure never leaves records without their marker).
// Usually only the third is needed: a steady change of values is one call
// per zone. With atomic true (a Replacer), the deletions and the first
// sets are merged into one StepReplace.
func (z ZoneChanges) Steps(atomic bool) []Step {
	var claim, set, dependents, release, del Step
	claim = Step{Kind: StepSet, Claim: true}
	set = Step{Kind: StepSet}
	dependents = Step{Kind: StepSet, Dependents: true}
	del = Step{Kind: StepDelete}
	release = Step{Kind: StepDelete}
	written := map[Name]bool{}
	for _, c := range z.Changes {
		if c.Op == OpCreate || c.Op == OpUpdate {
			written[c.Key.Node()] = true
		}
	}
	for _, c := range z.Changes {
		switch c.Op {
		case OpClaim:
			claim.Set = append(claim.Set, c.New.Records()...)
		case OpCreate, OpUpdate:
			if slices.ContainsFunc(c.Needs, func(k Key) bool { return k.Zone == z.Zone && written[k.Node()] }) {
				dependents.Set = append(dependents.Set, c.New.Records()...)
				continue
			}
			set.Set = append(set.Set, c.New.Records()...)
		case OpDelete:
			del.Delete = append(del.Delete, c.deleted()...)
			del.Switch = del.Switch || c.Switch
		case OpRelease:
			release.Delete = append(release.Delete, c.deleted()...)
		}
	}
	var out []Step
	if len(claim.Set) > 0 {
		out = append(out, claim)
	}
	if atomic && len(del.Delete) > 0 && len(set.Set) > 0 {
		out = append(out, Step{Kind: StepReplace, Set: set.Set, Delete: del.Delete, Switch: del.Switch})
	} else {
		if len(del.Delete) > 0 {
			out = append(out, del)
		}
		if len(set.Set) > 0 {
			out = append(out, set)
		}
	}
	if len(dependents.Set) > 0 {
		out = append(out, dependents)
	}
	if len(release.Delete) > 0 {
		out = append(out, release)
	}
	return out
}

// Held is a published RRset kept because its desired set is empty.
type Held struct {
	// Key is the RRset.
	Key Key
	// Published is what stays published.
	Published RRSet
}

// Refusal is a desired change the plan refuses. Err wraps ErrNotOwned,
// ErrTypeSwitch, ErrEmptySet (for an empty set of a name that publishes
// nothing yet), ErrDependency (a set held back because a set it needs
// cannot be published) or, in a Reconciler's plans, ErrReadBack (a set
// in conflict, not rewritten until its back-off passes); match it with
// errors.Is. Key.Type is empty when the whole name is refused.
type Refusal struct {
	// Key is the refused RRset (Type empty: the whole name).
	Key Key
	// Err says why; it matches ErrNotOwned, ErrTypeSwitch, ErrEmptySet,
	// ErrDependency or ErrReadBack.
	Err error
}

// Changes is a plan: the minimal changes that make the zones match the
// desired state, grouped per zone in a deterministic order, plus what was
// held stale and what was refused. The zero Changes changes nothing.
type Changes struct {
	// Zones are the zones with changes, sorted by name.
	Zones []ZoneChanges
	// Held are published RRsets kept stale (their desired set is empty).
	Held []Held
	// Refused are desired changes that will not be made.
	Refused []Refusal
}

// Empty reports whether the plan writes nothing.
func (c Changes) Empty() bool { return len(c.Zones) == 0 }

// Len returns the number of RRset-level changes.
func (c Changes) Len() int {
	n := 0
	for _, z := range c.Zones {
		n += len(z.Changes)
	}
	return n
}

// String renders the plan for people, one change per line, as a dry run
// prints it.
func (c Changes) String() string {
	var b strings.Builder
	if c.Empty() {
		b.WriteString("no changes\n")
	}
	for _, z := range c.Zones {
		fmt.Fprintf(&b, "zone %s\n", z.Zone)
		for _, ch := range z.Changes {
			fmt.Fprintf(&b, "  %s\n", ch)
		}
	}
	for _, h := range c.Held {
		fmt.Fprintf(&b, "held stale %s: desired set is empty, keeping %s\n", h.Key, strings.Join(h.Published.Values, " "))
	}
	for _, r := range c.Refused {
		fmt.Fprintf(&b, "refused: %v\n", r.Err)
	}
	return b.String()
}

// Plan compares the desired state with the current content of the zones it
// names and returns the minimal changes, touching only names the owner
// owns (marker at markerPrefix.<name> holding cfg.OwnerID), free names, and
// names the desired state adopts. It is pure: no I/O, no clock, no
// goroutines; the same inputs give the same plan. current must hold every
// zone the desired state names (ErrMissingZone otherwise); other zones are
// ignored. Plan uses cfg.OwnerID, MarkerPrefix, MarkerTTL and
// AllowTypeSwitch (zero fields take their defaults); it validates desired
// (ErrInvalid) but not cfg.
//
// Invariants: an RRset whose desired set is empty is never deleted or
// emptied (it is Held); only Desired.Withdraw deletes; a name switches
// between CNAME and other types only when cfg.AllowTypeSwitch is true; a
// steady state plans nothing.
func Plan(desired Desired, current []Zone, cfg Config) (Changes, error) {
	cfg = cfg.withDefaults()
	zones, err := desired.normalize(cfg.MarkerPrefix, true)
	if err != nil {
		return Changes{}, err
	}
	// The records of a zone given once are indexed where they are (the
	// index only reads them); a zone given several times is joined.
	byZone := make(map[string][]libdns.Record, len(current))
	joined := make(map[string]bool)
	for _, z := range current {
		zn := zoneOf(z.Name)
		if _, ok := zones[zn]; !ok {
			continue
		}
		prev, seen := byZone[zn]
		switch {
		case !seen:
			byZone[zn] = z.Records
		case joined[zn]:
			byZone[zn] = append(prev, z.Records...)
		default:
			byZone[zn] = append(slices.Clip(prev), z.Records...)
			joined[zn] = true
		}
	}
	idx := make(map[string]*zoneIndex, len(zones))
	for zn := range zones {
		recs, ok := byZone[zn]
		if !ok {
			return Changes{}, fmt.Errorf("%w: %s", ErrMissingZone, zn)
		}
		idx[zn] = indexZone(zn, recs, cfg.MarkerPrefix)
	}
	return planZones(zones, idx, cfg), nil
}

// planZones plans the zones of the desired state that idx holds; zones
// missing from idx are skipped.
func planZones(zones map[string]*zoneDesired, idx map[string]*zoneIndex, cfg Config) Changes {
	var out Changes
	p := planner{cfg: cfg, out: &out}
	for _, zn := range slices.Sorted(maps.Keys(zones)) {
		zi := idx[zn]
		if zi == nil {
			continue
		}
		p.zd, p.idx, p.last = zones[zn], zi, -1
		if zc := p.zone(); len(zc.Changes) > 0 {
			out.Zones = append(out.Zones, zc)
		}
	}
	resolveDeps(&out, zones, idx)
	return out
}

// planner plans one zone at a time.
type planner struct {
	cfg Config
	zd  *zoneDesired
	idx *zoneIndex
	out *Changes
	// deletes and sets are scratch space reused from name to name.
	deletes, sets []Change
	// last is the node of the last name found in idx (-1: none).
	last int32
}

func (p *planner) zone() ZoneChanges {
	zc := ZoneChanges{Zone: p.zd.zone}
	var changes []Change
	// Names withdrawn but not set, sorted, merged with the sorted sets.
	var only []string
	for n := range p.zd.withdraw {
		if lo, hi := p.zd.find(n); lo == hi {
			only = append(only, n)
		}
	}
	slices.SortFunc(only, compareNames)
	sets := p.zd.sets
	for len(sets) > 0 || len(only) > 0 {
		if len(only) > 0 && (len(sets) == 0 || compareNames(only[0], sets[0].Name) < 0) {
			changes = p.name(only[0], nil, changes)
			only = only[1:]
			continue
		}
		hi := 1
		for hi < len(sets) && sets[hi].Name == sets[0].Name {
			hi++
		}
		changes = p.name(sets[0].Name, sets[:hi], changes)
		sets = sets[hi:]
	}
	zc.Changes = changes
	return zc
}

// name appends the changes of one name to out; want are the desired sets
// at the name.
func (p *planner) name(name string, want []RRSet, out []Change) []Change {
	zone := p.zd.zone
	ni := p.idx.lookupAfter(name, p.last)
	if ni >= 0 {
		p.last = ni
	}
	own, owners := p.idx.owner(p.cfg.OwnerID, ni)
	adopted := own == unmarked && p.zd.adopt[name]
	if (own == unmarked && !adopted) || own == foreign {
		p.out.Refused = append(p.out.Refused, Refusal{
			Key: Key{Zone: zone, Name: name},
			Err: &OwnershipError{Name: Name{Zone: zone, Name: name}, Owners: owners},
		})
		return out
	}
	// present are the types at the name once the changes so far are made.
	var buf [8]string
	present := p.idx.types(ni, buf[:0])
	remove := func(typ string) {
		if i := slices.Index(present, typ); i >= 0 {
			present = slices.Delete(present, i, i+1)
		}
	}
	deletes, sets := p.deletes[:0], p.sets[:0]
	defer func() { p.deletes, p.sets = deletes[:0], sets[:0] }()
	deleted := false
	if w := p.zd.withdraw[name]; w != nil {
		for _, typ := range slices.Clone(present) {
			if !w[""] && !w[typ] {
				continue
			}
			cs := p.idx.get(ni, typ)
			old := p.idx.rrset(cs)
			deletes = append(deletes, Change{Op: OpDelete, Key: old.Key(), Old: old, oldRecs: slices.Clone(p.idx.records(cs))})
			remove(typ)
			deleted = true
		}
	}
	publishes := false
	for _, s := range want {
		cur := p.idx.get(ni, s.Type)
		if len(s.Values) == 0 {
			if cur != nil {
				p.out.Held = append(p.out.Held, Held{Key: s.Key(), Published: p.idx.rrset(cur)})
			} else {
				p.out.Refused = append(p.out.Refused, Refusal{Key: s.Key(), Err: &EmptySetError{Key: s.Key()}})
			}
			continue
		}
		var conflicts []string
		for _, t := range present {
			if (s.Type == "CNAME") != (t == "CNAME") {
				conflicts = append(conflicts, t)
			}
		}
		if len(conflicts) > 0 && !p.cfg.AllowTypeSwitch {
			p.out.Refused = append(p.out.Refused, Refusal{Key: s.Key(), Err: &TypeSwitchError{Key: s.Key(), Published: conflicts}})
			continue
		}
		publishes = true
		for _, t := range conflicts {
			cs := p.idx.get(ni, t)
			old := p.idx.rrset(cs)
			deletes = append(deletes, Change{Op: OpDelete, Key: old.Key(), Old: old, oldRecs: slices.Clone(p.idx.records(cs)), Switch: true})
			remove(t)
		}
		switch {
		case cur == nil:
			sets = append(sets, Change{Op: OpCreate, Key: s.Key(), New: s, Switch: len(conflicts) > 0})
		case cur.mixed || cur.ttl != s.TTL || !slices.Equal(p.idx.values(cur), s.Values):
			sets = append(sets, Change{Op: OpUpdate, Key: s.Key(), Old: p.idx.rrset(cur), New: s})
		}
		if !slices.Contains(present, s.Type) {
			present = append(present, s.Type)
		}
	}
	if len(deletes) == 0 && len(sets) == 0 && !(adopted && publishes) {
		return out
	}
	claim := own != owned && (len(sets) > 0 || (adopted && publishes))
	release := own == owned && deleted && len(present) == 0
	// At most two more changes than deletes and sets (a claim, a release).
	// append grows a long slice by a quarter at a time, copying it each
	// time; doubling copies the zone's changes (large, with pointers) about
	// once in all.
	if need := len(deletes) + len(sets) + 2; cap(out)-len(out) < need {
		out = slices.Grow(out, max(need, len(out)))
	}
	var mk Key
	if claim || release {
		mk = Key{Zone: zone, Name: markerName(p.cfg.MarkerPrefix, name), Type: "TXT"}
	}
	if claim {
		marker := RRSet{Zone: zone, Name: mk.Name, Type: "TXT", TTL: p.cfg.MarkerTTL, Values: []string{p.cfg.OwnerID}}
		out = append(out, Change{Op: OpClaim, Key: mk, New: marker})
	}
	out = append(out, deletes...)
	out = append(out, sets...)
	if release {
		cs := p.idx.marker(ni)
		var recs []libdns.Record
		for _, r := range p.idx.records(cs) {
			if r.RR().Data == p.cfg.OwnerID {
				recs = append(recs, r)
			}
		}
		old := p.idx.rrset(cs)
		old.Values = []string{p.cfg.OwnerID}
		out = append(out, Change{Op: OpRelease, Key: mk, Old: old, oldRecs: recs})
	}
	return out
}
