package record

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
)

// DefaultConflictAfter is how many applies in a row must read back a set
// different from what was written before the reconciler reports a
// conflict and stops rewriting it (Options.ConflictAfter).
const DefaultConflictAfter = 3

// ErrReadBack marks an RRset that, read back right after it was written,
// differed from what was written DefaultConflictAfter (or
// Options.ConflictAfter) applies in a row: the provider keeps something
// else than it accepted (a provider that collapses a set to one record,
// rewrites a TXT, clamps a TTL, or another writer that undoes ours). The
// reconciler reports it as a conflict and backs off instead of rewriting
// it forever.
var ErrReadBack = errors.New("record: provider keeps a different RRset than was written")

// ReadBackError reports an RRset whose read-back differed from what was
// written. It unwraps to ErrReadBack.
type ReadBackError struct {
	// Provider names the provider (Options.ProviderName, else its Go type).
	Provider string
	// Key is the RRset.
	Key Key
	// Want is what was written (empty Values: the set was deleted).
	Want RRSet
	// Got is what the provider returned (empty Values: no such set).
	Got RRSet
	// Times counts the applies in a row that read back a difference.
	Times int
}

// Error names the provider, the set and both values.
func (e *ReadBackError) Error() string {
	return fmt.Sprintf("record: %s: %s read back %s after writing %s (%d applies in a row)",
		e.Provider, e.Key, showSet(e.Got), showSet(e.Want), e.Times)
}

// Unwrap returns ErrReadBack.
func (e *ReadBackError) Unwrap() error { return ErrReadBack }

func showSet(s RRSet) string {
	if len(s.Values) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%d [%s]", int64(s.TTL.Seconds()), strings.Join(s.Values, " "))
}

// ReadBackEvent reports an RRset that, read back after a successful
// write, differed from what was written. Conflict is true once it has
// differed Options.ConflictAfter applies in a row: the set is then listed by
// Conflicts, no longer rewritten on every reconcile, and tried again after
// a back-off (Config.RetryBase doubling up to Config.RetryMax) or when its
// desired value changes. Count these events to build a metric of
// conflicting sets per provider.
type ReadBackEvent struct {
	// At is when the set was read back.
	At time.Time
	// Err names the provider, the set and both values.
	Err *ReadBackError
	// Conflict is true when the difference is reported as a conflict.
	Conflict bool
}

// When returns At.
func (e ReadBackEvent) When() time.Time { return e.At }

// mismatch is the read-back state of one RRset that differed.
type mismatch struct {
	err *ReadBackError
	// until is when a conflicted set is written again (zero: not held).
	until time.Time
}

// verifiable returns the RRsets of zc that a read-back checks, with what
// each should hold: creates, updates and claims hold their new values,
// deletes and releases nothing.
func verifiable(zc ZoneChanges) []RRSet {
	out := make([]RRSet, 0, len(zc.Changes))
	for _, c := range zc.Changes {
		switch c.Op {
		case OpCreate, OpUpdate, OpClaim:
			out = append(out, c.New)
		case OpDelete, OpRelease:
			out = append(out, RRSet{Zone: c.Key.Zone, Name: c.Key.Name, Type: c.Key.Type})
		}
	}
	return out
}

// readBack reads zone once (under the limiter) and compares the sets of
// want with what it holds; it returns the events of the sets that differ
// (and forgets those that now match). A failed read is returned as an
// error; nothing is concluded from it.
func (r *Reconciler) readBack(ctx context.Context, zone string, want []RRSet) ([]ReadBackEvent, error) {
	if err := r.lim.Wait(ctx); err != nil {
		return nil, fmt.Errorf("record: waiting for the limiter: %w", err)
	}
	recs, err := r.p.GetRecords(ctx, zone)
	if err != nil {
		return nil, &ReadError{Zone: zone, Err: err}
	}
	idx := indexZone(zone, recs, "")
	now := time.Now()
	var evs []ReadBackEvent
	for _, w := range want {
		k := w.Key()
		got := RRSet{Zone: k.Zone, Name: k.Name, Type: k.Type}
		if cs := idx.get(idx.lookup(k.Name), k.Type); cs != nil {
			got = idx.rrset(cs)
			got.Values = append([]string(nil), got.Values...)
		}
		if w.Equal(got) || (len(w.Values) == 0 && len(got.Values) == 0) {
			delete(r.mismatch, k)
			continue
		}
		m := r.mismatch[k]
		if m == nil || !m.err.Want.Equal(w) {
			m = &mismatch{}
			r.mismatch[k] = m
		}
		times := 1
		if m.err != nil {
			times = m.err.Times + 1
		}
		m.err = &ReadBackError{Provider: r.name, Key: k, Want: w, Got: got, Times: times}
		conflict := times >= r.conflictAfter
		if conflict {
			bo := backoff.Exponential{Base: r.cfg.RetryBase, Max: r.cfg.RetryMax, Factor: 2, Jitter: r.cfg.RetryJitter}
			m.until = now.Add(bo.Delay(times-r.conflictAfter, rnd{}))
		}
		evs = append(evs, ReadBackEvent{At: now, Err: m.err, Conflict: conflict})
	}
	return evs, nil
}

// holdConflicts removes from ch the writes of sets in conflict whose
// back-off has not passed and whose desired value is still the one that
// did not stick, and returns them as refusals.
func (r *Reconciler) holdConflicts(ch *Changes, now time.Time) []Refusal {
	if len(r.mismatch) == 0 {
		return nil
	}
	var held []Refusal
	for zi := range ch.Zones {
		zc := &ch.Zones[zi]
		keep := zc.Changes[:0:0]
		for _, c := range zc.Changes {
			m := r.mismatch[c.Key]
			if m != nil && m.err.Times >= r.conflictAfter && now.Before(m.until) && sameWant(m.err.Want, c) {
				held = append(held, Refusal{Key: c.Key, Err: m.err})
				continue
			}
			keep = append(keep, c)
		}
		zc.Changes = keep
	}
	ch.Zones = dropEmptyZones(ch.Zones)
	return held
}

// conflictRefusals returns the sets in conflict as refusals (also those not
// planned this time), for Conflicts.
func (r *Reconciler) conflictRefusals() []Refusal {
	var out []Refusal
	for k, m := range r.mismatch {
		if m.err.Times >= r.conflictAfter {
			out = append(out, Refusal{Key: k, Err: m.err})
		}
	}
	sortRefusals(out)
	return out
}

// sameWant reports whether change c writes what w asked for.
func sameWant(w RRSet, c Change) bool {
	switch c.Op {
	case OpCreate, OpUpdate, OpClaim:
		return w.Equal(c.New)
	}
	return len(w.Values) == 0
}

func dropEmptyZones(zs []ZoneChanges) []ZoneChanges {
	out := zs[:0]
	for _, z := range zs {
		if len(z.Changes) > 0 {
			out = append(out, z)
		}
	}
	return out
}

func sortRefusals(rs []Refusal) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && compareKeys(rs[j].Key, rs[j-1].Key) < 0; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}
