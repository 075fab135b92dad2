package record

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/errclass"
)

// fakeZones is a small in-memory libdns provider for the package's tests:
// RRset-replacing SetRecords, exact-match DeleteRecords, the CNAME rules a
// real server enforces, a write counter, and an optional fault hook.
type fakeZones struct {
	mu     sync.Mutex
	zones  map[string][]libdns.RR
	writes int
	reads  int
	// fault, when set, is asked before each call; see fault.
	fault func(op string) fault
}

// fault is what the hook asks a call to do.
type fault struct {
	// err is returned; when partial is set, only the first `partial`
	// RRsets (set) or records (delete) are applied before it.
	err     error
	partial int
	// after applies the whole call, then returns err (a timeout after the
	// server did the work).
	after bool
}

func newFake(zones ...string) *fakeZones {
	f := &fakeZones{zones: map[string][]libdns.RR{}}
	for _, z := range zones {
		f.zones[zoneOf(z)] = nil
	}
	return f
}

func throttled() error { return errclass.Mark(errors.New("fake: 429 slow down"), errclass.Throttled) }

func timeout() error {
	return fmt.Errorf("fake: %w", context.DeadlineExceeded)
}

func (f *fakeZones) ask(op string) fault {
	if f.fault == nil {
		return fault{}
	}
	return f.fault(op)
}

func (f *fakeZones) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if ft := f.ask("get"); ft.err != nil {
		return nil, ft.err
	}
	rrs, ok := f.zones[zoneOf(zone)]
	if !ok {
		return nil, fmt.Errorf("fake: no zone %s", zone)
	}
	out := make([]libdns.Record, 0, len(rrs))
	for _, rr := range rrs {
		rec, err := rr.Parse()
		if err != nil {
			rec = rr
		}
		out = append(out, rec)
	}
	return out, nil
}

func (f *fakeZones) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	ft := f.ask("set")
	if ft.err != nil && !ft.after && ft.partial == 0 {
		return nil, ft.err
	}
	z := zoneOf(zone)
	rrs, ok := f.zones[z]
	if !ok {
		return nil, fmt.Errorf("fake: no zone %s", zone)
	}
	// group the input by (name, type), in order
	type nt struct{ name, typ string }
	var order []nt
	groups := map[nt][]libdns.RR{}
	for _, r := range recs {
		rr := r.RR()
		k := nt{rr.Name, rr.Type}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], rr)
	}
	n := len(order)
	if ft.err != nil && !ft.after {
		n = min(ft.partial, n)
	}
	for _, k := range order[:n] {
		for _, rr := range rrs {
			if rr.Name != k.name || rr.Type == k.typ {
				continue
			}
			if k.typ == "CNAME" || rr.Type == "CNAME" {
				return nil, fmt.Errorf("fake: %s %s: CNAME and other data at one name", k.name, k.typ)
			}
		}
		rrs = slices.DeleteFunc(rrs, func(rr libdns.RR) bool { return rr.Name == k.name && rr.Type == k.typ })
		rrs = append(rrs, groups[k]...)
	}
	f.zones[z] = rrs
	if ft.err != nil {
		return nil, ft.err
	}
	return recs, nil
}

func (f *fakeZones) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	ft := f.ask("delete")
	if ft.err != nil && !ft.after && ft.partial == 0 {
		return nil, ft.err
	}
	z := zoneOf(zone)
	rrs := f.zones[z]
	n := len(recs)
	if ft.err != nil && !ft.after {
		n = min(ft.partial, n)
	}
	var out []libdns.Record
	for _, r := range recs[:n] {
		d := r.RR()
		rrs = slices.DeleteFunc(rrs, func(rr libdns.RR) bool {
			hit := rr.Name == d.Name && (d.Type == "" || rr.Type == d.Type) &&
				(d.TTL == 0 || rr.TTL == d.TTL) && (d.Data == "" || rr.Data == d.Data)
			if hit {
				out = append(out, r)
			}
			return hit
		})
	}
	f.zones[z] = rrs
	if ft.err != nil {
		return nil, ft.err
	}
	return out, nil
}

// put adds records directly (a foreign writer).
func (f *fakeZones) put(zone string, rrs ...libdns.RR) {
	f.mu.Lock()
	defer f.mu.Unlock()
	z := zoneOf(zone)
	f.zones[z] = append(f.zones[z], rrs...)
}

// writeCount returns the number of write calls so far.
func (f *fakeZones) writeCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// dump returns a zone's records as sorted "name type ttl data" lines.
func (f *fakeZones) dump(zone string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, rr := range f.zones[zoneOf(zone)] {
		out = append(out, fmt.Sprintf("%s %s %d %s", rr.Name, rr.Type, int(rr.TTL.Seconds()), rr.Data))
	}
	slices.Sort(out)
	return out
}

func lines(s ...string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

var _ = strings.Join

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
