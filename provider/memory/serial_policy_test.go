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

// TestAdvanceSerial: a serial behind or equal to the one given moves one
// past it, with a new Version and no journal entry (an IXFR from before
// no longer chains); one ahead stays; an unknown zone is ErrNoZone.
func TestAdvanceSerial(t *testing.T) {
	p := &Provider{}
	zc := DefaultZoneConfig()
	zc.Serial = 1000
	if err := p.AddZoneWith("example.test.", zc); err != nil {
		t.Fatal(err)
	}
	v := p.Version()
	got, moved, err := p.AdvanceSerial("Example.Test", 5000)
	if err != nil || !moved || got != 5001 {
		t.Fatalf("AdvanceSerial(5000) from 1000 = %d, %v, %v; want 5001, true", got, moved, err)
	}
	if soa, _ := p.SOA("example.test."); soa.Serial != 5001 {
		t.Fatalf("SOA serial %d, want 5001", soa.Serial)
	}
	if p.Version() != v+1 {
		t.Fatalf("version %d, want %d", p.Version(), v+1)
	}
	if ch, ok := p.Changes(v); !ok || len(ch) != 0 {
		t.Fatalf("journal after the move: %v %v, want no entry", ch, ok)
	}
	if got, moved, _ := p.AdvanceSerial("example.test.", 5001); !moved || got != 5002 {
		t.Fatalf("AdvanceSerial at the serial = %d, %v; want 5002, true", got, moved)
	}
	if got, moved, _ := p.AdvanceSerial("example.test.", 100); moved || got != 5002 {
		t.Fatalf("AdvanceSerial behind = %d, %v; want 5002, false", got, moved)
	}
	if got, moved, _ := p.AdvanceSerial("example.test.", 5002+1<<31-1); !moved || got != 5002+1<<31 {
		t.Fatalf("AdvanceSerial to 2^31-1 ahead = %d, %v; want one past it", got, moved)
	}
	if got, moved, _ := p.AdvanceSerial("example.test.", 0xFFFFFFFF); !moved || got != 1 {
		t.Fatalf("AdvanceSerial(2^32-1) = %d, %v; want 1 (0 skipped), true", got, moved)
	}
	if _, _, err := p.AdvanceSerial("other.test.", 1); !errors.Is(err, ErrNoZone) {
		t.Fatalf("unknown zone: %v", err)
	}
}
