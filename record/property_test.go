package record

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/internal/errclass"
)

// faultKind is a fault the property test injects into one provider call.
type faultKind int

const (
	fNone      faultKind = iota
	fThrottle            // refused, Throttled() true
	fTransient           // refused, Temporary() true
	fPermanent           // refused, neither
	fPartial             // first part of the batch applied, then a transient error
	fTimeout             // applied, then the deadline is reported exceeded
)

// faulty wraps a provider and applies queued faults, one per call; calls
// beyond the queue pass. Reads are faulted too.
type faulty struct {
	ZoneEditor
	mu    sync.Mutex
	queue []faultKind
	calls int
}

func (f *faulty) next() faultKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if len(f.queue) == 0 {
		return fNone
	}
	k := f.queue[0]
	f.queue = f.queue[1:]
	return k
}

func (f *faulty) load(q []faultKind) {
	f.mu.Lock()
	f.queue = slices.Clone(q)
	f.mu.Unlock()
}

func refusal(k faultKind) error {
	switch k {
	case fThrottle:
		return errclass.Mark(errors.New("injected: throttled"), errclass.Throttled)
	case fTransient, fPartial:
		return errclass.Mark(errors.New("injected: transient"), errclass.Transient)
	case fPermanent:
		return errors.New("injected: permanent")
	}
	return nil
}

func (f *faulty) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	if k := f.next(); k != fNone && k != fTimeout {
		return nil, refusal(k)
	}
	return f.ZoneEditor.GetRecords(ctx, zone)
}

func (f *faulty) write(ctx context.Context, zone string, recs []libdns.Record,
	call func(context.Context, string, []libdns.Record) ([]libdns.Record, error)) ([]libdns.Record, error) {
	switch k := f.next(); k {
	case fNone:
		return call(ctx, zone, recs)
	case fTimeout:
		if _, err := call(ctx, zone, recs); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("injected: %w", context.DeadlineExceeded)
	case fPartial:
		if len(recs) > 1 {
			if _, err := call(ctx, zone, recs[:len(recs)/2]); err != nil {
				return nil, err
			}
		}
		return nil, refusal(k)
	default:
		return nil, refusal(k)
	}
}

func (f *faulty) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return f.write(ctx, zone, recs, f.ZoneEditor.SetRecords)
}

func (f *faulty) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return f.write(ctx, zone, recs, f.ZoneEditor.DeleteRecords)
}

// propKeys are the RRsets the property test's desired states draw from.
var propKeys = []Key{
	{"a.test.", "@", "A"}, {"a.test.", "www", "A"}, {"a.test.", "www", "AAAA"},
	{"a.test.", "app", "CNAME"}, {"a.test.", "mixed", "A"},
	{"b.test.", "x", "A"}, {"b.test.", "y", "CNAME"},
}

// propForeign are records somebody else owns; "mixed" is also desired.
var propForeign = map[string][]libdns.Record{
	"a.test.": {
		libdns.Address{Name: "mixed", TTL: time.Minute, IP: mustAddr("198.51.100.7")},
		libdns.TXT{Name: "other", TTL: time.Minute, Text: "v=foreign"},
		libdns.TXT{Name: "_gslb-owner.other", TTL: time.Minute, Text: "someone-else"},
	},
	"b.test.": {libdns.Address{Name: "z", TTL: time.Minute, IP: mustAddr("198.51.100.8")}},
}

func propValues(k Key) []string {
	switch k.Type {
	case "A":
		return []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}
	case "AAAA":
		return []string{"2001:db8::1", "2001:db8::2", "2001:db8::3"}
	}
	return []string{"pool-1." + k.Zone, "pool-2." + k.Zone, "failover." + k.Zone}
}

// keyState is the model's view of one key in the desired state.
type keyState struct {
	listed    bool
	withdrawn bool
	ttl       time.Duration
	values    []string
}

type propModel map[Key]*keyState

func (m propModel) desired() Desired {
	var d Desired
	for _, k := range propKeys {
		s := m[k]
		switch {
		case s == nil || !s.listed:
		case s.withdrawn:
			d.Withdraw = append(d.Withdraw, k)
		default:
			d.Sets = append(d.Sets, RRSet{Zone: k.Zone, Name: k.Name, Type: k.Type, TTL: s.ttl, Values: s.values})
		}
	}
	return d
}

// zoneSets reads every zone back through the provider, set by set.
func zoneSets(t *rapid.T, p libdns.RecordGetter) map[Key]RRSet {
	out := map[Key]RRSet{}
	for _, z := range []string{"a.test.", "b.test."} {
		recs, err := p.GetRecords(context.Background(), z)
		if err != nil {
			t.Fatalf("read back %s: %v", z, err)
		}
		for _, s := range Group(z, recs) {
			out[s.Key()] = s
		}
	}
	return out
}

func foreignLines(all map[Key]RRSet) string {
	var b strings.Builder
	for _, z := range []string{"a.test.", "b.test."} {
		for _, r := range propForeign[z] {
			rr := r.RR()
			s := all[Key{z, rr.Name, rr.Type}]
			fmt.Fprintf(&b, "%s %s %v %v;", rr.Name, rr.Type, s.TTL, s.Values)
		}
	}
	return b.String()
}

// TestReconcilerProperties drives the reconciler through random desired
// states and provider faults (at least 10,000 steps over all runs) and
// judges it only by reading the zones back through the provider.
func TestReconcilerProperties(t *testing.T) {
	steps := 0
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		mem := newMemory(t, "a.test.", "b.test.")
		for z, recs := range propForeign {
			_, err := mem.AppendRecords(ctx, z, recs)
			require.NoError(t, err)
		}
		fp := &faulty{ZoneEditor: mem}
		r, err := New(fp, localConfig(), Options{})
		require.NoError(t, err)
		model := propModel{}
		for _, k := range propKeys {
			model[k] = &keyState{}
		}
		foreign := foreignLines(zoneSets(rt, mem))
		before := zoneSets(rt, mem)

		n := rapid.IntRange(100, 140).Draw(rt, "steps")
		for i := 0; i < n; i++ {
			steps++
			// Change the desired state of a few keys.
			for c := rapid.IntRange(0, 2).Draw(rt, "changes"); c > 0; c-- {
				k := rapid.SampledFrom(propKeys).Draw(rt, "key")
				s := model[k]
				switch rapid.IntRange(0, 9).Draw(rt, "what") {
				case 0:
					s.listed, s.withdrawn = true, true
				case 1, 2:
					s.listed, s.withdrawn, s.values = true, false, nil // empty set
				case 3:
					s.listed = false
				default:
					vals := propValues(k)
					max := len(vals)
					if k.Type == "CNAME" {
						max = 1
					}
					s.listed, s.withdrawn = true, false
					s.values = rapid.SliceOfNDistinct(rapid.SampledFrom(vals), 1, max, rapid.ID[string]).Draw(rt, "values")
					s.ttl = time.Duration(rapid.SampledFrom([]int{30, 60}).Draw(rt, "ttl")) * time.Second
				}
			}
			// Faults for this reconcile.
			faults := rapid.SliceOfN(rapid.SampledFrom([]faultKind{fNone, fThrottle, fTransient, fPermanent, fPartial, fTimeout}), 0, 4).Draw(rt, "faults")
			fp.load(faults)
			d := model.desired()
			_, _ = r.Apply(ctx, d)
			fp.load(nil)
			after := zoneSets(rt, mem)
			checkInvariants(rt, model, before, after, foreign)
			before = after

			if i%20 == 19 || i == n-1 {
				converge(rt, r, mem, model, before)
				before = zoneSets(rt, mem)
			}
		}
	})
	if !testing.Short() && steps < 10000 {
		t.Fatalf("only %d steps ran; raise the counts (want at least 10,000)", steps)
	}
	t.Logf("%d random steps", steps)
}

// checkInvariants judges one reconcile by the zones read back.
func checkInvariants(t *rapid.T, model propModel, before, after map[Key]RRSet, foreign string) {
	if got := foreignLines(after); got != foreign {
		t.Fatalf("foreign records changed:\n was %s\n now %s", foreign, got)
	}
	for _, k := range propKeys {
		if k.Name == "mixed" {
			continue
		}
		s := model[k]
		was, now := before[k], after[k]
		if len(was.Values) > 0 && len(now.Values) == 0 && !(s.listed && s.withdrawn) {
			t.Fatalf("%s was published %v and became empty without a withdraw", k, was.Values)
		}
		// Records of our names never sit without our marker.
		if len(now.Values) > 0 {
			m := after[Key{k.Zone, markerName(DefaultMarkerPrefix, k.Name), "TXT"}]
			if !slices.Contains(m.Values, "dep-1") {
				t.Fatalf("%s is published without its owner marker", k)
			}
		}
	}
}

// converge stops the faults and checks the zones reach the desired state
// within three reconciles, then that a steady state writes nothing.
func converge(t *rapid.T, r *Reconciler, mem libdns.RecordGetter, model propModel, before map[Key]RRSet) {
	ctx := context.Background()
	var err error
	for i := 0; i < 3; i++ {
		if _, err = r.ReconcileOnce(ctx); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("no convergence after 3 fault-free reconciles: %v", err)
	}
	got := zoneSets(t, mem)
	for _, k := range propKeys {
		s, now := model[k], got[k]
		switch {
		case k.Name == "mixed":
			if !now.Equal(before[k]) {
				t.Fatalf("foreign %s changed", k)
			}
		case !s.listed:
		case s.withdrawn:
			if len(now.Values) > 0 {
				t.Fatalf("%s withdrawn but still holds %v", k, now.Values)
			}
		case len(s.values) == 0:
			if !now.Equal(before[k]) {
				t.Fatalf("%s held stale changed from %v to %v", k, before[k].Values, now.Values)
			}
		default:
			want := RRSet{Zone: k.Zone, Name: k.Name, Type: k.Type, TTL: s.ttl, Values: s.values}
			if !now.Equal(want) {
				t.Fatalf("%s is %v %v, want %v %v", k, now.TTL, now.Values, s.ttl, want.Values)
			}
		}
	}
	rep, err := r.ReconcileOnce(ctx)
	if err != nil || rep.Writes != 0 {
		t.Fatalf("steady state: %d writes, err %v; plan:\n%s", rep.Writes, err, rep.Changes)
	}
}
