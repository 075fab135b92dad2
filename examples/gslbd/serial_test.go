package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider/memory"
)

// TestSerialLeadIsCapped: a burst of changes runs the serial ahead of the
// clock (one second a change, memory.SerialUnixTime) only up to the cap;
// past it each write waits for the clock, so the lead a restart without
// state leaves to a secondary gslbd does not know of is bounded. A write
// waiting gives up with its context, and never waits more than a second.
func TestSerialLeadIsCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const zone = "example.test."
		p, err := memory.New(memory.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		zc := memory.DefaultZoneConfig()
		zc.Serial = clockSerial(time.Now())
		zc.SerialPolicy = memory.SerialUnixTime
		if err := p.AddZoneWith(zone, zc); err != nil {
			t.Fatal(err)
		}
		const lead = 10 * time.Second
		z := newLeadCapped(p, zone, lead, slog.New(slog.DiscardHandler))
		start := time.Now()
		maxLead := int64(0)
		for i := range 40 {
			rr := libdns.Address{Name: "www", TTL: time.Second, IP: netip.MustParseAddr(fmt.Sprintf("192.0.2.%d", i+1))}
			if _, err := z.SetRecords(context.Background(), zone, []libdns.Record{rr}); err != nil {
				t.Fatal(err)
			}
			soa, _ := p.SOA(zone)
			maxLead = max(maxLead, serialLead(soa.Serial, time.Now()))
		}
		if maxLead > int64(lead/time.Second) {
			t.Fatalf("the serial ran %d s ahead of the clock, the cap is %v", maxLead, lead)
		}
		if maxLead < int64(lead/time.Second)-1 {
			t.Fatalf("a burst of 40 changes ran the serial only %d s ahead: the cap (%v) was not reached", maxLead, lead)
		}
		// 40 changes, the first 10 at once, then one a second.
		if took := time.Since(start); took < 29*time.Second || took > 31*time.Second {
			t.Fatalf("40 writes took %v (fake clock), want about 30 s: one a second past the cap", took)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		soa, _ := p.SOA(zone)
		for serialLead(soa.Serial, time.Now()) < int64(lead/time.Second) {
			rr := libdns.Address{Name: "www", TTL: time.Second, IP: netip.MustParseAddr(fmt.Sprintf("198.51.100.%d", soa.Serial%200+1))}
			if _, err := z.SetRecords(context.Background(), zone, []libdns.Record{rr}); err != nil {
				t.Fatal(err)
			}
			soa, _ = p.SOA(zone)
		}
		rr := libdns.Address{Name: "www", TTL: time.Second, IP: netip.MustParseAddr("203.0.113.1")}
		if _, err := z.DeleteRecords(ctx, zone, []libdns.Record{rr}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a write waiting at the cap, its context ended: %v", err)
		}
		// A lead past the cap that writes did not make (the clock stepped
		// back) holds a write back for a second at most.
		soa, _ = p.SOA(zone)
		if _, _, err := p.AdvanceSerial(zone, soa.Serial+uint32(3*lead/time.Second)); err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		if _, err := z.SetRecords(context.Background(), zone, []libdns.Record{rr}); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(before); took > time.Second {
			t.Fatalf("at a lead of %v past the cap a write waited %v", 3*lead, took)
		}
		if got := serialLead(clockSerial(time.Unix(100, 0))+3, time.Unix(100, 0)); got != 3 {
			t.Fatalf("serialLead: %d", got)
		}
	})
}
