package record

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
)

// parseZoneText reads "name type ttl data" lines as a provider might return
// them; malformed lines are skipped.
func parseZoneText(text string) []libdns.Record {
	var out []libdns.Record
	for _, l := range strings.Split(text, "\n") {
		f := strings.SplitN(l, " ", 4)
		if len(f) != 4 {
			continue
		}
		ttl, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		rr := libdns.RR{Name: f[0], Type: f[1], TTL: time.Duration(ttl) * time.Second, Data: f[3]}
		if rec, err := rr.Parse(); err == nil {
			out = append(out, rec)
		} else {
			out = append(out, rr)
		}
	}
	return out
}

// FuzzPlan feeds Plan desired states read from JSON (as a config would
// give them) and zones of arbitrary records (as a provider would return
// them). Plan must not panic; a plan must be deterministic, must never
// delete a set whose desired state is empty, must leave names it does not
// own alone, and once applied to the in-memory zone must leave nothing to
// do.
func FuzzPlan(f *testing.F) {
	f.Add(`{"sets":[{"zone":"example.com.","name":"www","type":"A","ttl":"60s","values":["192.0.2.1"]}]}`,
		"_gslb-owner.www TXT 300 dep-1\nwww A 60 192.0.2.2\nmail MX 60 10 mx.example.com.")
	f.Add(`{"sets":[{"zone":"example.com","name":"app","type":"CNAME","ttl":30,"values":["pool.example.com"]}],"withdraw":[{"zone":"example.com.","name":"old"}]}`,
		"_gslb-owner.app TXT 300 dep-1\napp A 30 192.0.2.1\n_gslb-owner.old TXT 300 dep-1\nold AAAA 30 2001:db8::1")
	f.Add(`{"sets":[{"zone":"example.com.","name":"@","type":"A","values":[]}],"adopt":[{"zone":"example.com.","name":"x"}]}`,
		"@ SOA 60 ns1.example.com. h.example.com. 1 60 60 600 30\n@ NS 60 ns1.example.com.\n@ A 60 192.0.2.9\nx TXT 60 hi")
	f.Add(`{"sets":[{"zone":"Example.COM.","name":"WWW.example.com.","type":"aaaa","ttl":1,"values":["2001:DB8::1","2001:db8::1"]}]}`,
		"_gslb-owner.www TXT 300 other\n")
	f.Add(`{"sets":[{"zone":"example.com.","name":"app","type":"CNAME","ttl":"30s","values":["app.pool.example.com."]},{"zone":"example.com.","name":"app.pool","type":"A","ttl":"30s","values":["192.0.2.1"]}]}`,
		"app.pool A 60 203.0.113.66\n_gslb-owner.app TXT 300 dep-1\napp CNAME 30 backup.example.net.")
	f.Add(`{"sets":[{"zone":"example.com.","name":"www","type":"A","ttl":"30s","values":["192.0.2.1"],"needs":[{"zone":"example.com.","name":"db"},{"zone":"other.test","name":"x","type":"AAAA"}]}]}`,
		"db TXT 60 here")
	f.Fuzz(func(t *testing.T, desiredJSON, zoneText string) {
		var d Desired
		if json.Unmarshal([]byte(desiredJSON), &d) != nil {
			return
		}
		cfg := DefaultConfig("dep-1")
		cfg.AllowTypeSwitch = len(zoneText)%2 == 0
		zones, err := d.normalize(cfg.MarkerPrefix, false)
		if err != nil {
			return
		}
		var current []Zone
		recs := parseZoneText(zoneText)
		for zn := range zones {
			current = append(current, Zone{Name: zn, Records: recs})
		}
		plan, err := Plan(d, current, cfg)
		if err != nil {
			t.Fatalf("valid desired state, all zones given: %v", err)
		}
		again, _ := Plan(d, current, cfg)
		if plan.String() != again.String() {
			t.Fatalf("plan is not deterministic:\n%s\n%s", plan, again)
		}
		for _, zc := range plan.Zones {
			idx := indexZone(zc.Zone, recs, cfg.MarkerPrefix)
			zd := zones[zc.Zone]
			for _, c := range zc.Changes {
				name := c.Key.Name
				if c.Op == OpClaim || c.Op == OpRelease {
					name = strings.TrimPrefix(strings.TrimPrefix(name, cfg.MarkerPrefix), ".")
					if name == "" {
						name = "@"
					}
				}
				own, _ := idx.owner(cfg.OwnerID, idx.lookup(name))
				if own == foreign || (own == unmarked && !zd.adopt[name]) {
					t.Fatalf("%s on %s, which is not ours", c.Op, c.Key)
				}
				if c.Op == OpDelete && !c.Switch {
					w := zd.withdraw[name]
					if w == nil || !(w[""] || w[c.Key.Type]) {
						t.Fatalf("deleted %s without a withdraw", c.Key)
					}
				}
				if (c.Op == OpCreate || c.Op == OpUpdate) && len(c.New.Values) == 0 {
					t.Fatalf("%s publishes an empty set", c.Key)
				}
			}
		}
		// Apply to the in-memory zone (which may refuse odd records) and
		// plan again: nothing may be left to do.
		m := newMemory(t)
		for zn := range zones {
			if m.AddZone(zn) != nil {
				return
			}
			if _, err := m.AppendRecords(context.Background(), zn, recs); err != nil {
				return
			}
		}
		r, err := New(m, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Apply(context.Background(), d); err != nil {
			return
		}
		rep, err := r.ReconcileOnce(context.Background())
		if err != nil || !rep.Changes.Empty() {
			t.Fatalf("not converged after one reconcile (err %v):\n%s", err, rep.Changes)
		}
	})
}
