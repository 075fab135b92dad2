package fencetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/record"
	"github.com/gslbkit/gslb/record/internal/kit"
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

// scenarios are the kit's checks; every record they write, the fence
// included, has the TTL testrecords.TTL.
var scenarios = []kit.Scenario[Store]{
	{Name: "CompareAndSet", Run: compareAndSet},
	{Name: "LateWriterRefused", Run: lateWriterRefused},
	{Name: "FirstFenceWhereOneIs", Run: firstFenceWhereOneIs},
	{Name: "FrozenLeaderFenced", Run: func(ctx context.Context, s Store, zone string) error { return frozenLeader(ctx, s, zone, true) }},
	{Name: "FrozenLeaderUnfenced", Run: func(ctx context.Context, s Store, zone string) error { return frozenLeader(ctx, s, zone, false) }},
}

// Check plays every scenario against a store open returns for zone (e.g.
// "example.test.") and returns the first way a store broke one, naming
// the scenario, or nil.
func Check(ctx context.Context, zone string, open Opener) error {
	return kit.Check(ctx, "fencetest", zone, open, scenarios)
}

// Run plays every scenario as a subtest of t against a store open returns
// for zone. Typical use, with a helper that starts a server:
//
//	fencetest.Run(t, "example.test.", func(ctx context.Context) (fencetest.Store, error) {
//		return newProvider(t, startServer(t)), nil
//	})
func Run(t *testing.T, zone string, open Opener) {
	t.Helper()
	kit.Run(t, zone, open, scenarios)
}

// noFence is the value a writer expects where no fence exists yet.
var noFence = libdns.TXT{Name: record.DefaultFenceName}

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
	if err := s.ReplaceFenced(ctx, zone, noFence, testrecords.Fence("a 1 0"), nil,
		[]libdns.Record{testrecords.Address(appName, "192.0.2.1"), testrecords.Address(oldName, "192.0.2.1")}); err != nil {
		return fmt.Errorf("first fenced write on a free zone: %w", err)
	}
	for _, c := range [][3]string{{record.DefaultFenceName, "TXT", "a 1 0"}, {appName, "A", "192.0.2.1"}, {oldName, "A", "192.0.2.1"}} {
		if err := kit.Holds(ctx, s, zone, "after the first fenced write", c[0], c[1], c[2]); err != nil {
			return err
		}
	}
	old, _, err := kit.Read(ctx, s, zone, oldName, "A")
	if err != nil {
		return err
	}
	if err := s.ReplaceFenced(ctx, zone, testrecords.Fence("a 1 0"), testrecords.Fence("b 2 0"), old,
		[]libdns.Record{testrecords.Address(appName, "192.0.2.2")}); err != nil {
		return fmt.Errorf("fenced write expecting the fence it holds: %w", err)
	}
	return nil
}

func compareAndSet(ctx context.Context, s Store, zone string) error {
	if err := takeOver(ctx, s, zone); err != nil {
		return err
	}
	if err := kit.Holds(ctx, s, zone, "after the takeover", record.DefaultFenceName, "TXT", "b 2 0"); err != nil {
		return err
	}
	if err := kit.Holds(ctx, s, zone, "after the takeover", appName, "A", "192.0.2.2"); err != nil {
		return err
	}
	return kit.Holds(ctx, s, zone, "after the takeover (deleted)", oldName, "A")
}

func lateWriterRefused(ctx context.Context, s Store, zone string) error {
	if err := takeOver(ctx, s, zone); err != nil {
		return err
	}
	app, _, err := kit.Read(ctx, s, zone, appName, "A")
	if err != nil {
		return err
	}
	err = s.ReplaceFenced(ctx, zone, testrecords.Fence("a 1 0"), testrecords.Fence("a 1 1"), app,
		[]libdns.Record{testrecords.Address(lateName, "192.0.2.9")})
	if !fenced(err) {
		return fmt.Errorf("a late writer expecting the old fence: got %v, want a refusal answering Fenced() true", err)
	}
	for _, c := range [][]string{{record.DefaultFenceName, "TXT", "b 2 0"}, {appName, "A", "192.0.2.2"}, {lateName, "A"}} {
		if err := kit.Holds(ctx, s, zone, "after the refused write", c[0], c[1], c[2:]...); err != nil {
			return err
		}
	}
	return nil
}

func firstFenceWhereOneIs(ctx context.Context, s Store, zone string) error {
	if err := takeOver(ctx, s, zone); err != nil {
		return err
	}
	err := s.ReplaceFenced(ctx, zone, noFence, testrecords.Fence("c 1 0"), nil, []libdns.Record{testrecords.Address(lateName, "192.0.2.9")})
	if !fenced(err) {
		return fmt.Errorf("a writer expecting no fence where one is: got %v, want a refusal answering Fenced() true", err)
	}
	if err := kit.Holds(ctx, s, zone, "after the refused write", record.DefaultFenceName, "TXT", "b 2 0"); err != nil {
		return err
	}
	return kit.Holds(ctx, s, zone, "after the refused write", lateName, "A")
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
		return record.Desired{Sets: []record.RRSet{{Zone: zone, Name: appName, Type: "A", TTL: testrecords.TTL, Values: []string{ip}}}}
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
		return kit.Holds(ctx, s, zone, "control, without fencing: the late write lands", appName, "A", "192.0.2.9")
	}
	if !errors.Is(err, record.ErrFenced) {
		return fmt.Errorf("writer 1's late write: got %v, want record.ErrFenced", err)
	}
	if err := kit.Holds(ctx, s, zone, "after the late write", appName, "A", "192.0.2.2"); err != nil {
		return err
	}
	return kit.Holds(ctx, s, zone, "after the late write", record.DefaultFenceName, "TXT", "deploy 2 0")
}
