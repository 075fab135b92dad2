package failover_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/failover"
)

// FuzzTopologyConfig decodes arbitrary JSON as a TopologyConfig: decoding,
// Validate and NewTopology never panic, agree with each other, reject with
// ErrInvalidConfig, and a valid config computes a Desired state.
func FuzzTopologyConfig(f *testing.F) {
	f.Add(`{"service":"edge","domain":"example.com","globalLabel":"global","localLabel":"local","failoverPrefix":"global-","ttl":"30s"}`)
	f.Add(`{"service":"edge","domain":"example.com","globalLabel":"g","localLabel":"l","failoverPrefix":"x-","ttl":5,"allUnhealthy":"fallback","fallbackTarget":"sorry.example.net","appNames":[{"name":"www.example.com"},{"name":"a.example.org","zone":"example.org"}]}`)
	f.Add(`{"service":"edge","domain":"example.com","globalZone":"global.example.com","globalLabel":"global","localLabel":"local","failoverPrefix":"global-","ttl":"1h","allUnhealthy":"failClosed"}`)
	f.Add(`{"ttl":"-3s","allUnhealthy":"nope"}`)
	s := twoRegions()
	f.Fuzz(func(t *testing.T, in string) {
		var cfg failover.TopologyConfig
		if err := json.Unmarshal([]byte(in), &cfg); err != nil {
			return
		}
		verr := cfg.Validate()
		tp, nerr := failover.NewTopology(cfg)
		if (verr == nil) != (nerr == nil) {
			t.Fatalf("Validate %v but NewTopology %v", verr, nerr)
		}
		if verr != nil {
			if !errors.Is(verr, failover.ErrInvalidConfig) {
				t.Fatalf("error does not wrap ErrInvalidConfig: %v", verr)
			}
			return
		}
		if _, err := json.Marshal(cfg); err != nil {
			t.Fatalf("valid config does not marshal: %v", err)
		}
		for i := range s.Regions {
			s.Regions[i].Zone = tp.RegionalName()
		}
		d, err := tp.Desired(s)
		if err != nil {
			t.Fatalf("desired: %v", err)
		}
		assertWellFormed(t, d)
	})
}

// FuzzRecordConfig decodes arbitrary JSON as a RecordConfig and, when
// valid, runs both outputs over a fixed record.
func FuzzRecordConfig(f *testing.F) {
	f.Add(`{"poolLabel":"pool","strategy":{"kind":"allHealthy"},"allUnhealthy":"keepLast"}`)
	f.Add(`{"poolLabel":"p","strategy":{"kind":"priority","order":["eu","us"]},"allUnhealthy":"failOpen"}`)
	f.Add(`{"poolLabel":"p","strategy":{"kind":"weighted"},"allUnhealthy":"fallback","fallbackTarget":"x.example"}`)
	f.Add(`{"strategy":{"kind":"priority","order":["",""]}}`)
	f.Fuzz(func(t *testing.T, in string) {
		var cfg failover.RecordConfig
		if err := json.Unmarshal([]byte(in), &cfg); err != nil {
			return
		}
		p, err := failover.NewRecordPolicy(cfg)
		if (err == nil) != (cfg.Validate() == nil) {
			t.Fatalf("Validate and NewRecordPolicy disagree: %v", err)
		}
		if err != nil {
			if !errors.Is(err, failover.ErrInvalidConfig) {
				t.Fatalf("error does not wrap ErrInvalidConfig: %v", err)
			}
			return
		}
		for _, r := range []failover.Record{baseRecord(), func() failover.Record { r := baseRecord(); allCritical(&r); r.FailoverFQDN = ""; return r }()} {
			for _, out := range []func(failover.Record) (failover.DesiredState, error){p.Provider, p.Embedded} {
				d, err := out(r)
				if err != nil {
					// A pool label can make the pool name too long: a
					// clear error, never a panic.
					if !errors.Is(err, failover.ErrInvalidSnapshot) {
						t.Fatalf("unexpected error %v", err)
					}
					continue
				}
				assertWellFormed(t, d)
			}
		}
	})
}

// FuzzGeoMap decodes arbitrary JSON as a GeoMap and, when valid, places an
// arbitrary client prefix: never a panic, and a region only from the map.
func FuzzGeoMap(f *testing.F) {
	f.Add(`{"prefixes":{"10.0.0.0/8":"us","10.1.0.0/16":"eu","2001:db8::/32":"ap"},"preferences":{"eu":["us"]}}`, []byte{10, 1, 2, 3}, 24)
	f.Add(`{"prefixes":{"::/0":"any","0.0.0.0/0":"v4"},"default":"d"}`, []byte{0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128)
	f.Add(`{"prefixes":{"10.0.0.1/8":"us"}}`, []byte{}, -1)
	f.Fuzz(func(t *testing.T, in string, addr []byte, bits int) {
		var g failover.GeoMap
		if err := json.Unmarshal([]byte(in), &g); err != nil {
			return
		}
		loc, err := failover.NewLocator(g)
		if err != nil {
			if !errors.Is(err, failover.ErrInvalidConfig) {
				t.Fatalf("error does not wrap ErrInvalidConfig: %v", err)
			}
			return
		}
		a, _ := netip.AddrFromSlice(addr)
		client := netip.PrefixFrom(a, bits)
		region, ok := loc.Locate(client)
		// The longest prefix that contains the whole client prefix, by
		// brute force.
		want, wantOK, best := g.Default, g.Default != "", -1
		if client.IsValid() {
			ca, cb := client.Addr().WithZone(""), client.Bits()
			if ca.Is4In6() {
				ca, cb = ca.Unmap(), max(cb-96, 0)
			}
			for p, r := range g.Prefixes {
				if p.Bits() <= cb && p.Bits() > best && p.Contains(ca) {
					want, wantOK, best = r, true, p.Bits()
				}
			}
		}
		if region != want || ok != wantOK {
			t.Fatalf("Locate(%v) = %q, %v; want %q, %v", client, region, ok, want, wantOK)
		}
		if !ok {
			return
		}
		found := region == g.Default
		for _, r := range g.Prefixes {
			found = found || r == region
		}
		if !found {
			t.Fatalf("region %q not in the map", region)
		}
		if p := loc.Preferences(region); len(p) == 0 || p[0] != region {
			t.Fatalf("preferences of %q: %v", region, p)
		}
	})
}
