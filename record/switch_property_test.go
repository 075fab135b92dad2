package record

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestTypeSwitchProperties lets names switch between a CNAME and an address
// set (Config.AllowTypeSwitch) under provider faults. Judged by reading the
// zone back: the name never holds a CNAME beside addresses, its records
// never sit without the owner marker, foreign records never change, and once
// faults stop it converges within three reconciles, then writes nothing.
func TestTypeSwitchProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		mem := newMemory(t, "a.test.", "b.test.")
		for z, recs := range propForeign {
			_, err := mem.AppendRecords(ctx, z, recs)
			require.NoError(t, err)
		}
		fp := &faulty{ZoneEditor: mem}
		cfg := localConfig()
		cfg.AllowTypeSwitch = true
		r, err := New(fp, cfg, Options{})
		require.NoError(t, err)
		foreign := foreignLines(zoneSets(rt, mem))
		names := []string{"sw1", "sw2"}
		// want[name] is the desired set at the name (one type at a time).
		want := map[string]RRSet{}
		for i, n := 0, rapid.IntRange(30, 60).Draw(rt, "steps"); i < n; i++ {
			name := rapid.SampledFrom(names).Draw(rt, "name")
			if rapid.Bool().Draw(rt, "cname") {
				want[name] = RRSet{Zone: "a.test.", Name: name, Type: "CNAME", TTL: 30 * time.Second,
					Values: []string{rapid.SampledFrom([]string{"pool-1.a.test.", "failover.b.test."}).Draw(rt, "target")}}
			} else {
				want[name] = RRSet{Zone: "a.test.", Name: name, Type: "A", TTL: 30 * time.Second,
					Values: rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}), 1, 3, rapid.ID[string]).Draw(rt, "ips")}
			}
			var d Desired
			for _, n := range names {
				if s, ok := want[n]; ok {
					d.Sets = append(d.Sets, s)
				}
			}
			fp.load(rapid.SliceOfN(rapid.SampledFrom([]faultKind{fNone, fThrottle, fTransient, fPermanent, fPartial, fTimeout}), 0, 3).Draw(rt, "faults"))
			_, _ = r.Apply(ctx, d)
			fp.load(nil)
			after := zoneSets(rt, mem)
			if got := foreignLines(after); got != foreign {
				rt.Fatalf("foreign records changed: %s", got)
			}
			for _, n := range names {
				cname := after[Key{"a.test.", n, "CNAME"}]
				addr := after[Key{"a.test.", n, "A"}]
				if len(cname.Values) > 0 && len(addr.Values) > 0 {
					rt.Fatalf("%s holds a CNAME beside addresses", n)
				}
				m := after[Key{"a.test.", markerName(DefaultMarkerPrefix, n), "TXT"}]
				if (len(cname.Values) > 0 || len(addr.Values) > 0) && !slices.Contains(m.Values, "dep-1") {
					rt.Fatalf("%s is published without its owner marker", n)
				}
			}
			if i%10 == 9 || i == n-1 {
				var err error
				for k := 0; k < 3; k++ {
					if _, err = r.ReconcileOnce(ctx); err == nil {
						break
					}
				}
				if err != nil {
					rt.Fatalf("no convergence: %v", err)
				}
				got := zoneSets(rt, mem)
				for _, n := range names {
					s := want[n]
					if now := got[s.normalized().Key()]; !now.Equal(s) {
						rt.Fatalf("%s is %v, want %s %v", n, now.Values, s.Type, s.Values)
					}
				}
				if rep, err := r.ReconcileOnce(ctx); err != nil || rep.Writes != 0 {
					rt.Fatalf("steady state wrote %d (%v)", rep.Writes, err)
				}
			}
		}
	})
}
