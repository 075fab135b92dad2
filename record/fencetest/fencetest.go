package fencetest

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/record"
)

// Store is what the scenarios need: a zone editor that can fence.
type Store interface {
	record.ZoneEditor
	record.Fencer
}

// Opener returns a store holding zone, with no fence record and none of
// the names the scenarios write ("fencetest-app", "fencetest-old",
// "fencetest-late"). Each scenario opens its own.
type Opener func(ctx context.Context) (Store, error)

// The names the scenarios write, relative to the zone.
const (
	appName  = "fencetest-app"
	oldName  = "fencetest-old"
	lateName = "fencetest-late"
)

// ttl is the TTL of every record the scenarios write, the fence's included.
const ttl = time.Minute

// scenario is one check against a fresh store.
type scenario struct {
	name string
	run  func(ctx context.Context, s Store, zone string) error
}

var scenarios = []scenario{
	{"CompareAndSet", compareAndSet},
	{"LateWriterRefused", lateWriterRefused},
	{"FirstFenceWhereOneIs", firstFenceWhereOneIs},
	{"FrozenLeaderFenced", func(ctx context.Context, s Store, zone string) error { return frozenLeader(ctx, s, zone, true) }},
	{"FrozenLeaderUnfenced", func(ctx context.Context, s Store, zone string) error { return frozenLeader(ctx, s, zone, false) }},
}

// Check plays every scenario against a store open returns for zone (e.g.
// "example.test.") and returns the first way a store broke one, naming
// the scenario, or nil.
func Check(ctx context.Context, zone string, open Opener) error {
	for _, sc := range scenarios {
		s, err := open(ctx)
		if err != nil {
			return fmt.Errorf("fencetest: %s: open: %w", sc.name, err)
		}
		if err := sc.run(ctx, s, zone); err != nil {
			return fmt.Errorf("fencetest: %s: %w", sc.name, err)
		}
	}
	return nil
}

// Run plays every scenario as a subtest of t against a store open returns
// for zone. Typical use, with a helper that starts a server:
//
//	fencetest.Run(t, "example.test.", func(ctx context.Context) (fencetest.Store, error) {
//		return newProvider(t, startServer(t)), nil
//	})
func Run(t *testing.T, zone string, open Opener) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			s, err := open(ctx)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if err := sc.run(ctx, s, zone); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func fence(text string) libdns.TXT {
	return libdns.TXT{Name: record.DefaultFenceName, TTL: ttl, Text: text}
}

// noFence is the value a writer expects where no fence exists yet.
var noFence = libdns.TXT{Name: record.DefaultFenceName}

func addr(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: ttl, IP: netip.MustParseAddr(ip)}
}

// read returns the records of zone at name and type, as GetRecords
// returns them, and their data, sorted.
func read(ctx context.Context, s Store, zone, name, typ string) ([]libdns.Record, []string, error) {
	recs, err := s.GetRecords(ctx, zone)
	if err != nil {
		return nil, nil, fmt.Errorf("GetRecords: %w", err)
	}
	var out []libdns.Record
	var data []string
	for _, r := range recs {
		if rr := r.RR(); rr.Name == name && rr.Type == typ {
			out = append(out, r)
			data = append(data, rr.Data)
		}
	}
	slices.Sort(data)
	return out, data, nil
}

// holds checks that zone holds exactly want (data, any order) at name and
// type; what says which step is checked.
func holds(ctx context.Context, s Store, zone, what, name, typ string, want ...string) error {
	_, got, err := read(ctx, s, zone, name, typ)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: %s %s holds [%s], want [%s]", what, name, typ, strings.Join(got, " "), strings.Join(want, " "))
	}
	return nil
}

// fenced reports whether err's chain answers Fenced() true, as
// record.Fencer asks of a refusal.
func fenced(err error) bool {
	var f interface{ Fenced() bool }
	return errors.As(err, &f) && f.Fenced()
}

// takeOver is the common start: writer "a" takes the free zone with app
// and old, then writer "b" moves the fence, deletes old (as read) and
// replaces app.
func takeOver(ctx context.Context, s Store, zone string) error {
	if err := s.ReplaceFenced(ctx, zone, noFence, fence("a 1 0"), nil,
		[]libdns.Record{addr(appName, "192.0.2.1"), addr(oldName, "192.0.2.1")}); err != nil {
		return fmt.Errorf("first fenced write on a free zone: %w", err)
	}
	for _, c := range [][3]string{{record.DefaultFenceName, "TXT", "a 1 0"}, {appName, "A", "192.0.2.1"}, {oldName, "A", "192.0.2.1"}} {
		if err := holds(ctx, s, zone, "after the first fenced write", c[0], c[1], c[2]); err != nil {
			return err
		}
	}
	old, _, err := read(ctx, s, zone, oldName, "A")
	if err != nil {
		return err
	}
	if err := s.ReplaceFenced(ctx, zone, fence("a 1 0"), fence("b 2 0"), old,
		[]libdns.Record{addr(appName, "192.0.2.2")}); err != nil {
		return fmt.Errorf("fenced write expecting the fence it holds: %w", err)
	}
	return nil
}

func compareAndSet(ctx context.Context, s Store, zone string) error {
	if err := takeOver(ctx, s, zone); err != nil {
		return err
	}
	if err := holds(ctx, s, zone, "after the takeover", record.DefaultFenceName, "TXT", "b 2 0"); err != nil {
		return err
	}
	if err := holds(ctx, s, zone, "after the takeover", appName, "A", "192.0.2.2"); err != nil {
		return err
	}
	return holds(ctx, s, zone, "after the takeover (deleted)", oldName, "A")
}

func lateWriterRefused(ctx context.Context, s Store, zone string) error {
	if err := takeOver(ctx, s, zone); err != nil {
		return err
	}
	app, _, err := read(ctx, s, zone, appName, "A")
	if err != nil {
		return err
	}
	err = s.ReplaceFenced(ctx, zone, fence("a 1 0"), fence("a 1 1"), app,
		[]libdns.Record{addr(lateName, "192.0.2.9")})
	if !fenced(err) {
		return fmt.Errorf("a late writer expecting the old fence: got %v, want a refusal answering Fenced() true", err)
	}
	for _, c := range [][]string{{record.DefaultFenceName, "TXT", "b 2 0"}, {appName, "A", "192.0.2.2"}, {lateName, "A"}} {
		if err := holds(ctx, s, zone, "after the refused write", c[0], c[1], c[2:]...); err != nil {
			return err
		}
	}
	return nil
}

func firstFenceWhereOneIs(ctx context.Context, s Store, zone string) error {
	if err := takeOver(ctx, s, zone); err != nil {
		return err
	}
	err := s.ReplaceFenced(ctx, zone, noFence, fence("c 1 0"), nil, []libdns.Record{addr(lateName, "192.0.2.9")})
	if !fenced(err) {
		return fmt.Errorf("a writer expecting no fence where one is: got %v, want a refusal answering Fenced() true", err)
	}
	if err := holds(ctx, s, zone, "after the refused write", record.DefaultFenceName, "TXT", "b 2 0"); err != nil {
		return err
	}
	return holds(ctx, s, zone, "after the refused write", lateName, "A")
}

// frozen runs pause, once, before the next write reaches the store.
type frozen struct {
	Store
	mu    sync.Mutex
	pause func() error
	err   error
}

func (f *frozen) hold() {
	f.mu.Lock()
	p := f.pause
	f.pause = nil
	f.mu.Unlock()
	if p != nil {
		f.err = p()
	}
}

func (f *frozen) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	f.hold()
	return f.Store.ReplaceFenced(ctx, zone, was, now, del, set)
}

func (f *frozen) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	f.hold()
	return f.Store.SetRecords(ctx, zone, recs)
}

func (f *frozen) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	f.hold()
	return f.Store.DeleteRecords(ctx, zone, recs)
}

// frozenLeader: writer 1 publishes, reads the zone for its next write and
// is frozen; writer 2, newer, takes the zone over; writer 1's late write
// must then be refused (fencing) — or, with fencing off, lands, which is
// what shows the scenario races at all.
func frozenLeader(ctx context.Context, s Store, zone string, fencing bool) error {
	z := &frozen{Store: s}
	tokens := [2]uint64{1, 2}
	if !fencing {
		tokens = [2]uint64{}
	}
	var w [2]*record.Reconciler
	for i := range w {
		r, err := record.New(z, record.LocalConfig("deploy"), record.Options{FenceToken: tokens[i]})
		if err != nil {
			return fmt.Errorf("record.New: %w", err)
		}
		w[i] = r
	}
	app := func(ip string) record.Desired {
		return record.Desired{Sets: []record.RRSet{{Zone: zone, Name: appName, Type: "A", TTL: ttl, Values: []string{ip}}}}
	}
	if _, err := w[0].Apply(ctx, app("192.0.2.1")); err != nil {
		return fmt.Errorf("writer 1's first write: %w", err)
	}
	z.pause = func() error {
		if _, err := w[1].Apply(ctx, app("192.0.2.2")); err != nil {
			return fmt.Errorf("writer 2 taking over: %w", err)
		}
		return nil
	}
	_, err := w[0].Apply(ctx, app("192.0.2.9"))
	if z.err != nil {
		return z.err
	}
	if !fencing {
		if err != nil {
			return fmt.Errorf("control, without fencing: writer 1's late write: %w (want it to land)", err)
		}
		return holds(ctx, s, zone, "control, without fencing: the late write lands", appName, "A", "192.0.2.9")
	}
	if !errors.Is(err, record.ErrFenced) {
		return fmt.Errorf("writer 1's late write: got %v, want record.ErrFenced", err)
	}
	if err := holds(ctx, s, zone, "after the late write", appName, "A", "192.0.2.2"); err != nil {
		return err
	}
	return holds(ctx, s, zone, "after the late write", record.DefaultFenceName, "TXT", "deploy 2 0")
}
