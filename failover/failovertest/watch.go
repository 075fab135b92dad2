package failovertest

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// watch follows one ExpectWithin: the first instant the answer matched.
type watch struct {
	label, region, name string
	want                []netip.Addr
	start               time.Duration
	matched, closed     bool
	at                  time.Duration
}

// violation is the first failure of an Always condition.
type violation struct {
	at  time.Duration
	err error
}

// wrote counts a successful write call and re-evaluates the watches (also
// after a failed call, which may have applied part of a batch).
func (w *World) wrote(zone string, recs []libdns.Record, ok bool) {
	names := map[string]bool{}
	for _, r := range recs {
		names[dnsname.Fqdn(libdns.AbsoluteName(r.RR().Name, zone))] = true
	}
	w.mu.Lock()
	for n := range names {
		if ok {
			w.writes[n]++
		}
	}
	var open []*watch
	for _, wt := range w.watches {
		if !wt.matched && !wt.closed {
			open = append(open, wt)
		}
	}
	w.mu.Unlock()
	for _, wt := range open {
		w.evaluate(wt)
	}
	w.checkInvariants()
}

// checkInvariants runs the scenario's Always conditions (from time zero
// on) and keeps the first violation of each.
func (w *World) checkInvariants() {
	now := w.now()
	if now < 0 {
		return
	}
	for i, inv := range w.s.always {
		w.mu.Lock()
		_, seen := w.violations[i]
		w.mu.Unlock()
		if seen {
			continue
		}
		if err := inv.check(w); err != nil {
			w.mu.Lock()
			if _, seen := w.violations[i]; !seen {
				w.violations[i] = violation{at: now, err: err}
			}
			w.mu.Unlock()
		}
	}
}

// reportInvariants fails t with the first violation of each condition.
func (w *World) reportInvariants(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, inv := range w.s.always {
		if v, ok := w.violations[i]; ok {
			t.Errorf("%s: always %s: violated at %v: %v", inv.where, inv.what, v.at, v.err)
		}
	}
}

func (w *World) evaluate(wt *watch) {
	got := w.Resolve(wt.region, wt.name)
	now := w.now()
	w.mu.Lock()
	if !wt.matched && slices.Equal(got, wt.want) {
		wt.matched, wt.at = true, now-wt.start
	}
	w.mu.Unlock()
}

func (w *World) watch(label, region, name string, want []netip.Addr) *watch {
	wt := &watch{label: label, region: region, name: name, want: want, start: w.now()}
	w.mu.Lock()
	w.watches = append(w.watches, wt)
	w.mu.Unlock()
	w.evaluate(wt)
	return wt
}

func (w *World) checkWatch(t *testing.T, where string, wt *watch, bound time.Duration) {
	t.Helper()
	w.mu.Lock()
	wt.closed = true
	matched, at := wt.matched, wt.at
	w.mu.Unlock()
	got := w.Resolve(wt.region, wt.name)
	switch {
	case !matched:
		t.Errorf("%s: %s: never got %v within %v; now %v (chain %v)", where, wt.label, wt.want, bound, got, w.Chain(wt.region, wt.name))
	case !slices.Equal(got, wt.want):
		t.Errorf("%s: %s: got %v after %v but %v at the bound %v (chain %v)", where, wt.label, wt.want, at, got, bound, w.Chain(wt.region, wt.name))
	default:
		t.Logf("%s: %s: answer %v after %v (bound %v)", where, wt.label, wt.want, at, bound)
	}
}

// Measured returns how long the ExpectWithin labelled "<name> in <region>
// from <start>" took to see its answer, and whether it has.
func (w *World) Measured(region, name string, start time.Duration) (time.Duration, bool) {
	label := fmt.Sprintf("%s in %s from %v", name, region, start)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, wt := range w.watches {
		if wt.label == label && wt.matched {
			return wt.at, true
		}
	}
	return 0, false
}
