package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider/memory"
)

// maxSerialLead caps how far the embedded zone's SOA serial runs ahead of
// the clock. Every change moves the serial to max(old + 1, the clock)
// (memory.SerialUnixTime), so a burst of more than a change a second runs
// it ahead, one second per change. A restart without a state file starts
// at the clock again; a secondary that gslbd asks (transfer.notify) is
// moved past, but one it does not know of ignores the zone until the clock
// passes the serial it holds: the lead is how long. Without a cap a long
// burst makes that hours; with it, at most maxSerialLead. A write that
// would pass the cap waits for the clock (leadCapped), so past it the
// embedded zone takes one write a second, each carrying every change the
// reconciler gathered meanwhile.
const maxSerialLead = 10 * time.Minute

// leadCapped is the embedded zone as its reconciler writes it: a write
// (SetRecords, DeleteRecords, ReplaceRecords, ReplaceFenced) made while the
// zone's serial is lead or more ahead of the clock first waits for the
// clock's next second (see maxSerialLead). The rest of memory.Provider is
// its own.
type leadCapped struct {
	*memory.Provider
	zone string
	lead time.Duration
	log  *slog.Logger
	// capped is set while writes wait, so that each episode logs once.
	capped *atomic.Bool
}

func newLeadCapped(p *memory.Provider, zone string, lead time.Duration, log *slog.Logger) leadCapped {
	return leadCapped{Provider: p, zone: zone, lead: lead, log: log, capped: new(atomic.Bool)}
}

// serialLead is how many seconds serial is ahead of the clock at now (RFC
// 1982 difference; negative when behind).
func serialLead(serial uint32, now time.Time) int64 {
	return int64(int32(serial - clockSerial(now)))
}

// wait returns at once while the zone's serial is less than z.lead ahead of
// the clock; at or past it, at the clock's next second (or with ctx's
// error), so that the write after it does not run the serial further
// ahead. It never waits longer: a lead past the cap that was not made by
// writes (the clock stepped back, a serial moved past a secondary's) must
// not hold publications back for its length.
func (z leadCapped) wait(ctx context.Context) error {
	soa, err := z.SOA(z.zone)
	if err != nil {
		return nil // no such zone: the write says so
	}
	now := time.Now()
	lead := serialLead(soa.Serial, now)
	if lead < int64(z.lead/time.Second) {
		if z.capped.CompareAndSwap(true, false) {
			z.log.Info("the zone's serial is back under its lead cap: writes no longer wait", "serial", soa.Serial, "leadSeconds", lead)
		}
		return nil
	}
	if !z.capped.Swap(true) {
		z.log.Warn("the zone's serial is at its lead cap over the clock (a long burst of changes): writes wait for the clock, one a second",
			"serial", soa.Serial, "leadSeconds", lead, "cap", z.lead.String())
	}
	t := time.NewTimer(now.Truncate(time.Second).Add(time.Second).Sub(now))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// SetRecords waits for the lead cap, then writes.
func (z leadCapped) SetRecords(ctx context.Context, zone string, rs []libdns.Record) ([]libdns.Record, error) {
	if err := z.wait(ctx); err != nil {
		return nil, err
	}
	return z.Provider.SetRecords(ctx, zone, rs)
}

// DeleteRecords waits for the lead cap, then deletes.
func (z leadCapped) DeleteRecords(ctx context.Context, zone string, rs []libdns.Record) ([]libdns.Record, error) {
	if err := z.wait(ctx); err != nil {
		return nil, err
	}
	return z.Provider.DeleteRecords(ctx, zone, rs)
}

// ReplaceRecords waits for the lead cap, then deletes and sets in one
// change (memory.Provider.ReplaceRecords): the embedded reconciler's switch
// of a name between its addresses and its failover CNAME is one version,
// never one with neither (NODATA for a configured name, I2).
func (z leadCapped) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	if err := z.wait(ctx); err != nil {
		return err
	}
	return z.Provider.ReplaceRecords(ctx, zone, del, set)
}

// ReplaceFenced waits for the lead cap, then writes.
func (z leadCapped) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	if err := z.wait(ctx); err != nil {
		return err
	}
	return z.Provider.ReplaceFenced(ctx, zone, was, now, del, set)
}
