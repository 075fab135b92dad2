package replacetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/record"
	"github.com/gslbkit/gslb/record/internal/kit"
)

// Store is what the scenarios need: a zone editor that replaces records
// atomically.
type Store interface {
	record.ZoneEditor
	record.Replacer
}

// Opener returns a store holding zone, with none of the names the
// scenarios write (all start with "replacetest-"). Each scenario opens its
// own.
type Opener func(ctx context.Context) (Store, error)

// The names the scenarios write, relative to the zone.
const (
	appName  = "replacetest-app"  // switches between addresses and a CNAME
	oldName  = "replacetest-old"  // deleted beside the switch
	keepName = "replacetest-keep" // set as it already is
	bothName = "replacetest-both" // deleted and set in the same call
	webName  = "replacetest-web"  // switched by a Reconciler
)

// scenarios are the kit's checks; every record they write has the TTL
// testrecords.TTL.
var scenarios = []kit.Scenario[Store]{
	{Name: "SwitchAndBack", Run: switchAndBack},
	{Name: "NothingToChange", Run: nothingToChange},
	{Name: "ReconcilerSwitch", Run: reconcilerSwitch},
}

// Check plays every scenario against a store open returns for zone (e.g.
// "example.test.") and returns the first way a store broke one, naming
// the scenario, or nil.
func Check(ctx context.Context, zone string, open Opener) error {
	return kit.Check(ctx, "replacetest", zone, open, scenarios)
}

// Run plays every scenario as a subtest of t against a store open returns
// for zone. Typical use, with a helper that starts a server:
//
//	replacetest.Run(t, "example.test.", func(ctx context.Context) (replacetest.Store, error) {
//		return newProvider(t, startServer(t)), nil
//	})
func Run(t *testing.T, zone string, open Opener) {
	t.Helper()
	kit.Run(t, zone, open, scenarios)
}

func cname(name, zone string) libdns.Record {
	return libdns.CNAME{Name: name, TTL: testrecords.TTL, Target: pool(zone)}
}

// pool is the CNAME target, inside the zone.
func pool(zone string) string { return "replacetest-pool." + zone }

// check runs kit.Holds for each {name, type, data...}.
func check(ctx context.Context, s Store, zone, what string, want ...[]string) error {
	for _, w := range want {
		if err := kit.Holds(ctx, s, zone, what, w[0], w[1], w[2:]...); err != nil {
			return err
		}
	}
	return nil
}

// watched runs write while a reader reads the zone again and again, and
// fails if a read finds name with neither addresses nor a CNAME, or with
// both: the moment between two writes that an atomic store never shows.
func watched(ctx context.Context, s Store, zone, name, what string, write func() error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var seen error
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			recs, err := s.GetRecords(ctx, zone)
			if err != nil {
				if ctx.Err() == nil { // not a read cut short by the write's end
					seen = fmt.Errorf("%s: a read while it ran: GetRecords: %w", what, err)
				}
				return
			}
			// A read that returned counts even when the write ended
			// meanwhile: it may have started between two writes.
			_, a := testrecords.At(recs, name, "A")
			_, c := testrecords.At(recs, name, "CNAME")
			if (len(a) == 0) == (len(c) == 0) {
				seen = fmt.Errorf("%s: a read while it ran found %s with A [%s] and CNAME [%s]: not one atomic write",
					what, name, strings.Join(a, " "), strings.Join(c, " "))
				return
			}
		}
	})
	err := write()
	cancel()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return seen
}

// switchAndBack: app holds two addresses, old and both one, keep one; one
// ReplaceRecords deletes app's addresses, old and both as read, sets app
// to a CNAME, both to another address and keep as it is; a second switches
// app back to an address.
func switchAndBack(ctx context.Context, s Store, zone string) error {
	if _, err := s.SetRecords(ctx, zone, []libdns.Record{
		testrecords.Address(appName, "192.0.2.1"), testrecords.Address(appName, "192.0.2.2"), testrecords.Address(oldName, "192.0.2.1"),
		testrecords.Address(bothName, "192.0.2.1"), testrecords.Address(keepName, "192.0.2.1"),
	}); err != nil {
		return fmt.Errorf("SetRecords: %w", err)
	}
	if err := check(ctx, s, zone, "after SetRecords",
		[]string{appName, "A", "192.0.2.1", "192.0.2.2"}, []string{oldName, "A", "192.0.2.1"},
		[]string{bothName, "A", "192.0.2.1"}, []string{keepName, "A", "192.0.2.1"}); err != nil {
		return err
	}
	recs, err := s.GetRecords(ctx, zone)
	if err != nil {
		return fmt.Errorf("GetRecords: %w", err)
	}
	var del []libdns.Record
	for _, n := range []string{appName, oldName, bothName} {
		d, _ := testrecords.At(recs, n, "A")
		del = append(del, d...)
	}
	if err := watched(ctx, s, zone, appName, "ReplaceRecords from addresses to a CNAME", func() error {
		return s.ReplaceRecords(ctx, zone, del, []libdns.Record{cname(appName, zone), testrecords.Address(bothName, "192.0.2.2"), testrecords.Address(keepName, "192.0.2.1")})
	}); err != nil {
		return err
	}
	if err := check(ctx, s, zone, "after the switch to a CNAME",
		[]string{appName, "A"}, []string{appName, "CNAME", pool(zone)}, []string{oldName, "A"},
		[]string{bothName, "A", "192.0.2.2"}, []string{keepName, "A", "192.0.2.1"}); err != nil {
		return err
	}
	del, _, err = kit.Read(ctx, s, zone, appName, "CNAME")
	if err != nil {
		return err
	}
	if err := watched(ctx, s, zone, appName, "ReplaceRecords from a CNAME to an address", func() error {
		return s.ReplaceRecords(ctx, zone, del, []libdns.Record{testrecords.Address(appName, "192.0.2.3")})
	}); err != nil {
		return err
	}
	return check(ctx, s, zone, "after the switch back",
		[]string{appName, "A", "192.0.2.3"}, []string{appName, "CNAME"}, []string{keepName, "A", "192.0.2.1"})
}

// nothingToChange: an empty call succeeds and changes nothing.
func nothingToChange(ctx context.Context, s Store, zone string) error {
	if _, err := s.SetRecords(ctx, zone, []libdns.Record{testrecords.Address(keepName, "192.0.2.1")}); err != nil {
		return fmt.Errorf("SetRecords: %w", err)
	}
	if err := s.ReplaceRecords(ctx, zone, nil, nil); err != nil {
		return fmt.Errorf("ReplaceRecords with nothing to change: %w", err)
	}
	return kit.Holds(ctx, s, zone, "after ReplaceRecords with nothing to change", keepName, "A", "192.0.2.1")
}

// reconcilerSwitch: a Reconciler allowed to switch types publishes web as
// an address, then as a CNAME, then as an address again: each switch is
// one write, watched.
func reconcilerSwitch(ctx context.Context, s Store, zone string) error {
	cfg := record.LocalConfig("replacetest")
	cfg.AllowTypeSwitch = true
	r, err := record.New(s, cfg, record.Options{})
	if err != nil {
		return fmt.Errorf("record.New: %w", err)
	}
	web := func(typ, v string) record.Desired {
		return record.Desired{Sets: []record.RRSet{{Zone: zone, Name: webName, Type: typ, TTL: testrecords.TTL, Values: []string{v}}}}
	}
	if _, err := r.Apply(ctx, web("A", "192.0.2.7")); err != nil {
		return fmt.Errorf("the Reconciler publishing an address: %w", err)
	}
	for _, step := range []struct{ typ, v, other string }{{"CNAME", pool(zone), "A"}, {"A", "192.0.2.8", "CNAME"}} {
		what := "Reconciler switching to " + step.typ
		var rep record.Report
		if err := watched(ctx, s, zone, webName, what, func() error {
			rep, err = r.Apply(ctx, web(step.typ, step.v))
			return err
		}); err != nil {
			return err
		}
		if rep.Writes != 1 {
			return fmt.Errorf("%s: %d writes, want 1 (one ReplaceRecords)", what, rep.Writes)
		}
		if err := check(ctx, s, zone, "after the "+what, []string{webName, step.typ, step.v}, []string{webName, step.other}); err != nil {
			return err
		}
	}
	return nil
}
