package memory

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/fielderr"
)

// TestSerialUnixTime: under SerialUnixTime each change moves the serial to
// max(old + 1, now in Unix seconds): a burst within one second runs ahead
// of the clock by one a change, a change after a pause jumps to the clock,
// and a zone rebuilt at the clock after the burst (no saved serial) is
// never below a serial served before, while the clock moves forward.
// Restore keeps the zone's policy; the default stays one more a change.
func TestSerialUnixTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		add := func(p *Provider, i int) uint32 {
			t.Helper()
			ip := netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})
			if _, err := p.AppendRecords(ctx, "example.test.", []libdns.Record{libdns.Address{Name: "app", TTL: time.Second, IP: ip}}); err != nil {
				t.Fatal(err)
			}
			soa, err := p.SOA("example.test.")
			if err != nil {
				t.Fatal(err)
			}
			return soa.Serial
		}
		start := uint32(time.Now().Unix())
		zc := DefaultZoneConfig()
		zc.Serial, zc.SerialPolicy = start, SerialUnixTime
		p := &Provider{}
		if err := p.AddZoneWith("example.test.", zc); err != nil {
			t.Fatal(err)
		}
		var last uint32
		for i := 1; i <= 50; i++ { // a burst: 50 changes within one second
			last = add(p, i)
		}
		if last != start+50 {
			t.Fatalf("after 50 changes within a second: serial %d, want %d", last, start+50)
		}
		time.Sleep(time.Second) // less than the burst ran ahead
		if got := add(p, 51); got != last+1 {
			t.Fatalf("a change while the clock is behind: serial %d, want %d", got, last+1)
		}
		time.Sleep(time.Minute)
		now := uint32(time.Now().Unix())
		if got := add(p, 52); got != now {
			t.Fatalf("a change a minute later: serial %d, want the clock %d", got, now)
		}

		// A restart without the serial: a new zone at the clock, and its
		// first change, are never below what was served.
		served := add(p, 53)
		time.Sleep(time.Second)
		q := &Provider{}
		zc.Serial = uint32(time.Now().Unix())
		if err := q.AddZoneWith("example.test.", zc); err != nil {
			t.Fatal(err)
		}
		if got := add(q, 1); !SerialGreater(got, served) {
			t.Fatalf("after a restart at the clock: serial %d, not past %d served before", got, served)
		}

		// Restore keeps the policy of the zone it replaces.
		snap := p.Snapshot()
		time.Sleep(time.Hour)
		if err := q.Restore(snap); err != nil {
			t.Fatal(err)
		}
		if got, now := add(q, 200), uint32(time.Now().Unix()); got != now {
			t.Fatalf("after Restore: serial %d, want the clock %d", got, now)
		}

		// The default: one more a change, whatever the clock.
		d := &Provider{}
		if err := d.AddZone("example.test."); err != nil {
			t.Fatal(err)
		}
		if got := add(d, 1); got != 2 {
			t.Fatalf("default policy: serial %d after one change, want 2", got)
		}
	})
}

func TestSerialPolicyValidate(t *testing.T) {
	for _, ok := range []SerialPolicy{"", SerialIncrement, SerialUnixTime} {
		zc := DefaultZoneConfig()
		zc.SerialPolicy = ok
		if err := zc.Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	zc := DefaultZoneConfig()
	zc.SerialPolicy = "dateserial"
	err := zc.Validate()
	var fe *fielderr.Error
	if !errors.Is(err, ErrInvalidZone) || !errors.As(err, &fe) || fe.Path != "serialPolicy" {
		t.Fatalf("dateserial: %v", err)
	}
	if err := (&Provider{}).AddZoneWith("example.test.", zc); !errors.Is(err, ErrInvalidZone) {
		t.Fatalf("AddZoneWith with dateserial: %v", err)
	}
}
