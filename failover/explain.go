package failover

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/libdns/libdns"
)

// Why this answer. A chain of answer functions decides per query, so the
// question an operator asks is "why did this client get that?". F5 BIG-IP
// DNS answers it with decision logs: each load-balancing step, what it
// kept, what it dropped and why. Explain is that log for a chain of Steps,
// computed on request: the query path runs the same functions through
// StepChain, which is Chain over the steps' answer functions, and pays
// nothing for the explanation (the explanation allocates; the query path
// does not).

// Step is one named step of an answer chain: a value that can both answer
// (Answer, on the query path, through StepChain) and explain (Explain).
// The zero Step is skipped, as Chain skips a nil function.
type Step struct {
	// Name says what the step is in a trace, e.g. "geo" or "sticky /24".
	Name string
	// Answer is the step's answer function.
	Answer AnswerFunc
	// Why, when set, says in a few words why the step answered as it did:
	// in is what it was handed, out its answer (nil: no opinion). It is
	// called only by Explain, never on the query path, and may allocate.
	Why func(client netip.Prefix, in, out []libdns.Record) string
}

// StepChain returns Chain over the steps' answer functions: the query
// path of the steps Explain explains. One step is its own answer function
// (no Chain around it), so a single step costs what it costs alone.
func StepChain(steps ...Step) AnswerFunc {
	fs := make([]AnswerFunc, 0, len(steps))
	for _, s := range steps {
		if s.Answer != nil {
			fs = append(fs, s.Answer)
		}
	}
	switch len(fs) {
	case 0:
		return nil
	case 1:
		return fs[0]
	}
	return Chain(fs...)
}

// StepTrace is what one step did with a query.
type StepTrace struct {
	Name string `json:"name"`
	// In is what the step was handed: the zone's records, or the previous
	// answer in the chain.
	In []libdns.Record `json:"-"`
	// Kept is the step's answer, in its order (In when it had no opinion);
	// Dropped the records of In it left out, in In's order.
	Kept    []libdns.Record `json:"-"`
	Dropped []libdns.Record `json:"-"`
	// NoOpinion: the step answered nothing, so In goes on unchanged.
	NoOpinion bool `json:"noOpinion"`
	// Reordered: the step kept In's records in another order.
	Reordered bool `json:"reordered"`
	// Scope is the ECS scope the step reported (see AnswerFunc).
	Scope int `json:"scope"`
	// Why is the step's own explanation (Step.Why), "" without one.
	Why string `json:"why,omitempty"`
}

// Trace is the explanation of one query's answer by a chain of steps.
type Trace struct {
	Client netip.Prefix `json:"client"`
	Name   string       `json:"name"`
	Type   string       `json:"type"`
	// Records are what the zone holds at Name and Type: what the first
	// step is handed.
	Records []libdns.Record `json:"-"`
	Steps   []StepTrace     `json:"steps"`
	// Answer is the chain's answer: Records when no step had an opinion.
	Answer []libdns.Record `json:"-"`
	// Scope is the chain's scope: the longest of its steps' (as Chain's).
	Scope int `json:"scope"`
	// ECSScope is the EDNS Client Subnet SCOPE PREFIX-LENGTH the embedded
	// server sends with the answer (RFC 7871 section 7.2.1): Scope capped
	// at the client's prefix length, a negative one counted as 0.
	ECSScope int `json:"ecsScope"`
}

// Explain answers one query with steps, as StepChain(steps...) would, and
// returns what each step was handed, kept and dropped, the answer and its
// ECS scope. The arguments are the AnswerFunc's: client is the EDNS Client
// Subnet prefix or the query's source address, rrs the records the zone
// holds at name and qtype. Each step is asked once, as for a query: a
// rotating or random step (RoundRobin, WeightedRandom) moves on as it
// would for a query, and its trace is one draw among others. Explain
// allocates; the query path (StepChain) is not slowed by its existence.
func Explain(steps []Step, client netip.Prefix, name, qtype string, rrs []libdns.Record) Trace {
	t := Trace{Client: client, Name: name, Type: qtype, Records: rrs}
	var out []libdns.Record
	for _, s := range steps {
		if s.Answer == nil {
			continue
		}
		in := rrs
		if len(out) > 0 {
			in = out
		}
		got, sc := s.Answer(client, name, qtype, in)
		st := StepTrace{Name: s.Name, In: in, Scope: sc, NoOpinion: len(got) == 0, Kept: in}
		if len(got) > 0 {
			out = got
			st.Kept = got
			st.Dropped, st.Reordered = dropped(in, got)
		}
		if s.Why != nil {
			st.Why = s.Why(client, in, got)
		}
		t.Steps = append(t.Steps, st)
		t.Scope = max(t.Scope, sc)
	}
	t.Answer = rrs
	if len(out) > 0 {
		t.Answer = out
	}
	t.ECSScope = EchoedScope(t.Scope, client)
	return t
}

// EchoedScope is the ECS scope the embedded server sends for an answer of
// scope scope to client: scope capped at the client's prefix length, a
// negative one (or an invalid client) counted as 0.
func EchoedScope(scope int, client netip.Prefix) int {
	if !client.IsValid() || scope < 0 {
		return 0
	}
	return min(scope, client.Bits())
}

// dropped returns the records of in that kept does not hold (compared as
// RRs, as many times as they appear), and whether kept holds in's others
// in another order.
func dropped(in, kept []libdns.Record) (out []libdns.Record, reordered bool) {
	left := make([]libdns.RR, len(kept))
	for i, r := range kept {
		left[i] = r.RR()
	}
	var order []libdns.RR
	for _, r := range in {
		rr := r.RR()
		if i := slices.Index(left, rr); i >= 0 {
			left = slices.Delete(left, i, i+1)
			order = append(order, rr)
			continue
		}
		out = append(out, r)
	}
	for i, r := range kept {
		if i < len(order) && r.RR() != order[i] {
			return out, true
		}
	}
	return out, false
}

// String writes the trace as a decision log, one line per step, e.g.
//
//	app.example.test. A for 10.0.1.0/24: 4 records
//	  1 geo: kept 198.51.100.11 198.51.100.12; dropped 198.51.100.1 198.51.100.2; scope 24 (client in eu by 10.0.0.0/16)
//	  answer 198.51.100.11 198.51.100.12; scope 24, ECS scope 24
func (t Trace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s for %s: %d records\n", t.Name, t.Type, t.Client, len(t.Records))
	for i, s := range t.Steps {
		fmt.Fprintf(&b, "  %d %s: ", i+1, s.Name)
		switch {
		case s.NoOpinion:
			b.WriteString("no opinion, kept all")
		case s.Reordered && len(s.Dropped) == 0:
			fmt.Fprintf(&b, "reordered %s", RecordData(s.Kept))
		default:
			fmt.Fprintf(&b, "kept %s", RecordData(s.Kept))
			if len(s.Dropped) > 0 {
				fmt.Fprintf(&b, "; dropped %s", RecordData(s.Dropped))
			}
		}
		fmt.Fprintf(&b, "; scope %d", s.Scope)
		if s.Why != "" {
			fmt.Fprintf(&b, " (%s)", s.Why)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "  answer %s; scope %d, ECS scope %d\n", RecordData(t.Answer), t.Scope, t.ECSScope)
	return b.String()
}

// RecordData is the records' data (an address for A and AAAA), space
// separated: how traces print records.
func RecordData(rs []libdns.Record) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.RR().Data
	}
	return strings.Join(parts, " ")
}

// GeoStep is Geo as a Step named "geo": its Why says where the locator
// places the client and by which map prefix, and which region's addresses
// it answered (the client's, or one of its preferences).
func GeoStep(loc *Locator, tags map[netip.Addr][]string) Step {
	return Step{Name: "geo", Answer: Geo(loc, tags), Why: geoWhy(loc, tags)}
}

// RegionFilterStep is RegionFilter as a Step named "regionFilter", with
// GeoStep's Why.
func RegionFilterStep(loc *Locator, tags map[netip.Addr][]string) Step {
	return Step{Name: "regionFilter", Answer: RegionFilter(loc, tags), Why: geoWhy(loc, tags)}
}

func geoWhy(loc *Locator, tags map[netip.Addr][]string) func(netip.Prefix, []libdns.Record, []libdns.Record) string {
	tm := make(map[netip.Addr][]string, len(tags))
	for a, rs := range tags {
		tm[a.Unmap()] = rs
	}
	return func(client netip.Prefix, _, out []libdns.Record) string {
		s := loc.Placement(client)
		region, placed := loc.Locate(client)
		if !placed {
			return s
		}
		if len(out) == 0 {
			return s + "; no address of its regions"
		}
		// The region answered: the first of the client's order every
		// answered address is tagged with.
		for _, reg := range loc.Preferences(region) {
			all := true
			for _, r := range out {
				a, _ := addrOf(r)
				all = all && slices.Contains(tm[a], reg)
			}
			if all {
				if reg != region {
					return s + "; answered " + reg + "'s addresses (a preference: " + region + " has none)"
				}
				return s
			}
		}
		return s
	}
}

// StickyStep is Sticky as a Step named "sticky": its Why names the client
// network the address was chosen for.
func StickyStep(v4Bits, v6Bits int) (Step, error) {
	f, err := Sticky(v4Bits, v6Bits)
	if err != nil {
		return Step{}, err
	}
	return Step{Name: "sticky", Answer: f, Why: func(client netip.Prefix, _, out []libdns.Record) string {
		if !client.IsValid() || len(out) == 0 {
			return ""
		}
		a := client.Addr().Unmap().WithZone("")
		n := v6Bits
		if a.Is4() {
			n = v4Bits
		}
		bits := client.Bits()
		if client.Addr().Is4In6() {
			bits = max(bits-96, 0)
		}
		p, _ := a.Prefix(min(n, bits))
		return "chosen for client network " + p.String()
	}}, nil
}

// Placement says in a few words where l places client and why: "in eu by
// 10.0.0.0/16", "in us by default (no prefix matches)" or "not placed (no
// prefix matches, no default)"; each followed by the decision's scope. It
// is for explanations (see GeoStep), not for the query path.
func (l *Locator) Placement(client netip.Prefix) string {
	region, scope, ok := l.LocateScope(client)
	if !ok {
		return fmt.Sprintf("client not placed: no prefix matches and no default (scope %d)", scope)
	}
	if p, ok := l.match(client); ok {
		return fmt.Sprintf("client in %s by %s (scope %d)", region, p, scope)
	}
	return fmt.Sprintf("client in %s by default: no prefix matches (scope %d)", region, scope)
}

// match returns the longest map prefix holding the whole client prefix
// (as locate finds it).
func (l *Locator) match(client netip.Prefix) (netip.Prefix, bool) {
	if l == nil || !client.IsValid() {
		return netip.Prefix{}, false
	}
	a, bits := client.Addr(), client.Bits()
	if a.Is4In6() {
		a, bits = a.Unmap(), max(bits-96, 0)
	}
	if a.Is4() {
		b := a.As4()
		v := binary.BigEndian.Uint32(b[:])
		for _, n := range l.v4 {
			if n > bits {
				continue
			}
			if _, ok := l.v4m[v4Key(v&v4Mask(n), n)]; ok {
				p, _ := a.Prefix(n)
				return p, true
			}
		}
		return netip.Prefix{}, false
	}
	a = a.WithZone("")
	for _, n := range l.v6 {
		if n > bits {
			continue
		}
		if p, err := a.Prefix(n); err == nil {
			if _, ok := l.v6m[p]; ok {
				return p, true
			}
		}
	}
	return netip.Prefix{}, false
}
