package record

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testZone = "example.com."

// zoneOfLines builds a Zone from "name type ttl data" lines.
func zoneOfLines(t testing.TB, zone string, ls ...string) Zone {
	t.Helper()
	z := Zone{Name: zone}
	for _, l := range ls {
		f := strings.SplitN(l, " ", 4)
		require.Len(t, f, 4, l)
		ttl, err := strconv.Atoi(f[2])
		require.NoError(t, err)
		rr := libdns.RR{Name: f[0], Type: f[1], TTL: time.Duration(ttl) * time.Second, Data: f[3]}
		rec, err := rr.Parse()
		require.NoError(t, err)
		z.Records = append(z.Records, rec)
	}
	return z
}

func set(name, typ string, ttl int, values ...string) RRSet {
	return RRSet{Zone: testZone, Name: name, Type: typ, TTL: time.Duration(ttl) * time.Second, Values: values}
}

// planLines renders the changes of a plan as "op name type" lines.
func planLines(c Changes) []string {
	var out []string
	for _, z := range c.Zones {
		for _, ch := range z.Changes {
			s := ch.Op.String() + " " + ch.Key.Name + " " + ch.Key.Type
			if ch.Switch {
				s += " switch"
			}
			out = append(out, s)
		}
	}
	return out
}

func TestPlan(t *testing.T) {
	marker := func(name string) string { return "_gslb-owner" + name + " TXT 300 dep-1" }
	cases := []struct {
		name     string
		desired  Desired
		current  []string
		switchOK bool
		want     []string // planned changes in order
		held     []string // held keys "name type"
		refused  []error  // sentinels, in order
	}{
		{
			name:    "add to a free name claims it first",
			desired: Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1", "192.0.2.2")}},
			want:    []string{"claim _gslb-owner.www TXT", "create www A"},
		},
		{
			name:    "steady state plans nothing",
			desired: Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.2", "192.0.2.1")}},
			current: []string{marker(".www"), "www A 60 192.0.2.1", "www A 60 192.0.2.2"},
		},
		{
			name:    "remove a value is one update",
			desired: Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}},
			current: []string{marker(".www"), "www A 60 192.0.2.1", "www A 60 192.0.2.2"},
			want:    []string{"update www A"},
		},
		{
			name:    "TTL change is one update",
			desired: Desired{Sets: []RRSet{set("www", "A", 30, "192.0.2.1")}},
			current: []string{marker(".www"), "www A 60 192.0.2.1"},
			want:    []string{"update www A"},
		},
		{
			name:    "CNAME retarget is one replace",
			desired: Desired{Sets: []RRSet{set("app", "CNAME", 30, "pool-b.example.com.")}},
			current: []string{marker(".app"), "app CNAME 30 pool-a.example.com."},
			want:    []string{"update app CNAME"},
		},
		{
			name:    "CNAME target compared case- and dot-insensitively",
			desired: Desired{Sets: []RRSet{set("app", "CNAME", 30, "Pool-A.example.com")}},
			current: []string{marker(".app"), "app CNAME 30 pool-a.example.com."},
		},
		{
			name:    "withdraw deletes the records then releases the marker",
			desired: Desired{Withdraw: []Key{{Zone: testZone, Name: "old"}}},
			current: []string{marker(".old"), "old A 60 192.0.2.1", "old AAAA 60 2001:db8::1"},
			want:    []string{"delete old A", "delete old AAAA", "release _gslb-owner.old TXT"},
		},
		{
			name:    "withdraw one type keeps the marker",
			desired: Desired{Withdraw: []Key{{Zone: testZone, Name: "old", Type: "aaaa"}}},
			current: []string{marker(".old"), "old A 60 192.0.2.1", "old AAAA 60 2001:db8::1"},
			want:    []string{"delete old AAAA"},
		},
		{
			name:    "withdraw of an absent name does nothing",
			desired: Desired{Withdraw: []Key{{Zone: testZone, Name: "gone"}}},
		},
		{
			name:    "foreign records are never touched",
			desired: Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.9")}, Withdraw: []Key{{Zone: testZone, Name: "mail"}}},
			current: []string{"www A 60 192.0.2.1", "mail MX 60 10 mx.example.com."},
			refused: []error{ErrNotOwned, ErrNotOwned},
		},
		{
			name:    "another owner's marker is respected even when adopting",
			desired: Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.9")}, Adopt: []Name{{Zone: testZone, Name: "www"}}},
			current: []string{"_gslb-owner.www TXT 300 other", "www A 60 192.0.2.1"},
			refused: []error{ErrNotOwned},
		},
		{
			name:    "adoption writes the marker even without other changes",
			desired: Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}, Adopt: []Name{{Zone: testZone, Name: "www"}}},
			current: []string{"www A 60 192.0.2.1"},
			want:    []string{"claim _gslb-owner.www TXT"},
		},
		{
			name:    "foreign records beside owned ones stay",
			desired: Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.3")}},
			current: []string{marker(".www"), "www A 60 192.0.2.1", "www TXT 60 v=spf1", "other A 60 192.0.2.7"},
			want:    []string{"update www A"},
		},
		{
			name:    "empty desired set of a published name is held stale",
			desired: Desired{Sets: []RRSet{set("www", "A", 60)}},
			current: []string{marker(".www"), "www A 60 192.0.2.1"},
			held:    []string{"www A"},
		},
		{
			name:    "empty desired set of an unpublished name writes nothing",
			desired: Desired{Sets: []RRSet{set("new", "A", 60)}},
			refused: []error{ErrEmptySet},
		},
		{
			name:    "type switch refused by default",
			desired: Desired{Sets: []RRSet{set("app", "CNAME", 30, "failover.example.com.")}},
			current: []string{marker(".app"), "app A 30 192.0.2.1"},
			refused: []error{ErrTypeSwitch},
		},
		{
			name:     "type switch when allowed deletes the old type first",
			desired:  Desired{Sets: []RRSet{set("app", "CNAME", 30, "failover.example.com.")}},
			current:  []string{marker(".app"), "app A 30 192.0.2.1", "app AAAA 30 2001:db8::1"},
			switchOK: true,
			want:     []string{"delete app A switch", "delete app AAAA switch", "create app CNAME switch"},
		},
		{
			name:     "switch from CNAME to addresses",
			desired:  Desired{Sets: []RRSet{set("app", "A", 30, "192.0.2.1")}},
			current:  []string{marker(".app"), "app CNAME 30 failover.example.com."},
			switchOK: true,
			want:     []string{"delete app CNAME switch", "create app A switch"},
		},
		{
			name:    "zone apex: the SOA and NS do not make it occupied",
			desired: Desired{Sets: []RRSet{set("example.com.", "A", 60, "192.0.2.1")}},
			current: []string{"@ SOA 60 ns1.example.com. h.example.com. 1 60 60 600 30", "@ NS 60 ns1.example.com."},
			want:    []string{"claim _gslb-owner TXT", "create @ A"},
		},
		{
			name:    "withdrawing the apex leaves the SOA and NS",
			desired: Desired{Withdraw: []Key{{Zone: testZone, Name: "@"}}},
			current: []string{"_gslb-owner TXT 300 dep-1", "@ A 60 192.0.2.1", "@ NS 60 ns1.example.com.", "@ SOA 60 ns1.example.com. h.example.com. 1 60 60 600 30"},
			want:    []string{"delete @ A", "release _gslb-owner TXT"},
		},
		{
			name:    "a CNAME does not switch out an NS delegation below the apex",
			desired: Desired{Sets: []RRSet{set("sub", "CNAME", 60, "x.example.com.")}},
			current: []string{"_gslb-owner.sub TXT 300 dep-1", "sub NS 60 ns.other.net."},
			refused: []error{ErrTypeSwitch},
		},
		{
			name:    "zone apex owned, fully qualified name accepted",
			desired: Desired{Sets: []RRSet{set("EXAMPLE.com.", "A", 60, "192.0.2.1")}},
			current: []string{"_gslb-owner TXT 300 dep-1", "@ SOA 60 ns1.example.com. h.example.com. 1 60 60 600 30", "@ SOA 60 ns1.example.com. h.example.com. 1 60 60 600 30"},
			want:    []string{"create @ A"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig("dep-1")
			cfg.AllowTypeSwitch = tc.switchOK
			got, err := Plan(tc.desired, []Zone{zoneOfLines(t, testZone, tc.current...)}, cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, planLines(got))
			var held []string
			for _, h := range got.Held {
				held = append(held, h.Key.Name+" "+h.Key.Type)
			}
			assert.Equal(t, tc.held, held)
			require.Len(t, got.Refused, len(tc.refused), "%v", got.Refused)
			for i, want := range tc.refused {
				assert.ErrorIs(t, got.Refused[i].Err, want)
			}
			// Applying the plan's own inputs again is deterministic.
			again, err := Plan(tc.desired, []Zone{zoneOfLines(t, testZone, tc.current...)}, cfg)
			require.NoError(t, err)
			assert.Equal(t, got.String(), again.String())
		})
	}
}

func TestPlanMultiZoneOrder(t *testing.T) {
	cfg := DefaultConfig("dep-1")
	d := Desired{Sets: []RRSet{
		{Zone: "b.test", Name: "x", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.2"}},
		{Zone: "a.test.", Name: "y", Type: "AAAA", TTL: time.Minute, Values: []string{"2001:db8::1"}},
		{Zone: "a.test.", Name: "@", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1"}},
	}}
	got, err := Plan(d, []Zone{{Name: "a.test"}, {Name: "b.test."}}, cfg)
	require.NoError(t, err)
	require.Len(t, got.Zones, 2)
	assert.Equal(t, "a.test.", got.Zones[0].Zone)
	assert.Equal(t, []string{"claim _gslb-owner TXT", "create @ A", "claim _gslb-owner.y TXT", "create y AAAA",
		"claim _gslb-owner.x TXT", "create x A"}, planLines(got))

	_, err = Plan(d, []Zone{{Name: "a.test"}}, cfg)
	require.ErrorIs(t, err, ErrMissingZone)
}

func TestStepsBatching(t *testing.T) {
	cfg := DefaultConfig("dep-1")
	cfg.AllowTypeSwitch = true
	cur := zoneOfLines(t, testZone,
		"_gslb-owner.app TXT 300 dep-1", "app A 30 192.0.2.1",
		"_gslb-owner.old TXT 300 dep-1", "old A 30 192.0.2.5",
		"_gslb-owner.www TXT 300 dep-1", "www A 30 192.0.2.1")
	d := Desired{
		Sets: []RRSet{
			set("app", "CNAME", 30, "pool.example.com."),
			set("www", "A", 30, "192.0.2.2"),
			set("new", "A", 30, "192.0.2.3"),
		},
		Withdraw: []Key{{Zone: testZone, Name: "old"}},
	}
	got, err := Plan(d, []Zone{cur}, cfg)
	require.NoError(t, err)
	require.Len(t, got.Zones, 1)
	kinds := func(steps []Step) []string {
		var out []string
		for _, s := range steps {
			out = append(out, s.Kind.String()+":"+strconv.Itoa(len(s.Set)+len(s.Delete)))
		}
		return out
	}
	assert.Equal(t, []string{"set:1", "delete:2", "set:3", "delete:1"}, kinds(got.Zones[0].Steps(false)))
	assert.Equal(t, []string{"set:1", "replace:5", "delete:1"}, kinds(got.Zones[0].Steps(true)))
}

func TestDesiredValidate(t *testing.T) {
	cases := []struct {
		name string
		d    Desired
		in   string // substring of the error naming the field
	}{
		{"bad IPv4", Desired{Sets: []RRSet{set("www", "A", 60, "2001:db8::1")}}, "Sets[0].Values[0]"},
		{"bad IPv6", Desired{Sets: []RRSet{set("www", "AAAA", 60, "192.0.2.1")}}, "Sets[0].Values[0]"},
		{"empty value", Desired{Sets: []RRSet{set("www", "TXT", 60, "")}}, "Sets[0].Values[0]"},
		{"negative TTL", Desired{Sets: []RRSet{set("www", "A", -1, "192.0.2.1")}}, "Sets[0].TTL"},
		{"two CNAME targets", Desired{Sets: []RRSet{set("www", "CNAME", 60, "a.example.com.", "b.example.com.")}}, "Sets[0].Values"},
		{"apex CNAME", Desired{Sets: []RRSet{set("@", "CNAME", 60, "a.example.com.")}}, "apex"},
		{"outside zone", Desired{Sets: []RRSet{set("www.example.net.", "A", 60, "192.0.2.1")}}, "Sets[0].Name"},
		{"bad label", Desired{Sets: []RRSet{set("w w", "A", 60, "192.0.2.1")}}, "Sets[0].Name"},
		{"marker name", Desired{Sets: []RRSet{set("_gslb-owner.www", "TXT", 60, "x")}}, "owner marker"},
		{"no type", Desired{Sets: []RRSet{set("www", "", 60, "x")}}, "Sets[0].Type"},
		{"SOA", Desired{Sets: []RRSet{set("@", "SOA", 60, "x")}}, "Sets[0].Type"},
		{"apex NS", Desired{Sets: []RRSet{set("@", "NS", 60, "ns.example.com.")}}, "belongs to the zone"},
		{"duplicate", Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1"), set("WWW", "a", 60, "192.0.2.2")}}, "Sets[1]"},
		{"duplicate, unsorted", Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1"), set("abc", "A", 60, "192.0.2.1"), set("WWW", "a", 60, "192.0.2.2")}}, "Sets[2] = www.example.com. A: allowed each RRset once (it repeats Sets[0])"},
		{"CNAME beside A, unsorted", Desired{Sets: []RRSet{set("www", "CNAME", 60, "x.example.com."), set("abc", "A", 60, "192.0.2.1"), set("www", "A", 60, "192.0.2.1")}}, "Sets[0] = www.example.com.: allowed a CNAME alone"},
		{"CNAME beside A", Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1"), set("www", "CNAME", 60, "x.example.com.")}}, "CNAME"},
		{"withdraw and set", Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}, Withdraw: []Key{{Zone: testZone, Name: "www"}}}, "Withdraw[0]"},
		{"withdraw same type", Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}, Withdraw: []Key{{Zone: testZone, Name: "www", Type: "A"}}}, "Withdraw[0]"},
		{"bad zone", Desired{Sets: []RRSet{{Zone: "", Name: "www", Type: "A", Values: []string{"192.0.2.1"}}}}, "Sets[0].Zone"},
		{"bad adopt", Desired{Adopt: []Name{{Zone: testZone, Name: "a..b"}}}, "Adopt[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.d.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			var fe *FieldError
			assert.ErrorAs(t, err, &fe, "a field error")
			assert.Contains(t, err.Error(), tc.in)
		})
	}
	require.NoError(t, Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1"), set("www", "AAAA", 60, "2001:db8::1")},
		Withdraw: []Key{{Zone: testZone, Name: "www", Type: "TXT"}}}.Validate())
	require.NoError(t, Desired{}.Validate())
}

func TestRRSetHelpers(t *testing.T) {
	a := set("WWW", "a", int(60500*time.Millisecond/time.Second), "192.0.2.2", "192.0.2.1")
	b := set("www.example.com.", "A", 60, "192.0.2.1", "192.0.2.2", "192.0.2.1")
	assert.True(t, a.Equal(b))
	assert.False(t, a.Equal(set("www", "A", 61, "192.0.2.1", "192.0.2.2")))
	recs := set("www", "A", 60, "192.0.2.1").Records()
	require.Len(t, recs, 1)
	assert.IsType(t, libdns.Address{}, recs[0])
	assert.Equal(t, "www.example.com. A", a.normalized().Key().String())

	g := Group(testZone, zoneOfLines(t, testZone, "b A 60 192.0.2.1", "a A 60 192.0.2.2", "@ NS 60 ns.example.com.", "a A 30 192.0.2.3").Records)
	require.Len(t, g, 3)
	assert.Equal(t, "@", g[0].Name)
	assert.Equal(t, "a", g[1].Name)
	assert.Equal(t, 30*time.Second, g[1].TTL)
	assert.True(t, errors.Is(&EmptySetError{}, ErrEmptySet))
}

func TestDesiredJSON(t *testing.T) {
	in := `{"sets":[{"zone":"example.com.","name":"www","type":"A","ttl":"30s","values":["192.0.2.1"]},
	{"zone":"example.com.","name":"v6","type":"AAAA","ttl":60,"values":["2001:db8::1"]}],
	"withdraw":[{"zone":"example.com.","name":"old"}],"adopt":[{"zone":"example.com.","name":"www"}]}`
	var d Desired
	require.NoError(t, json.Unmarshal([]byte(in), &d))
	require.NoError(t, d.Validate())
	assert.Equal(t, 30*time.Second, d.Sets[0].TTL)
	assert.Equal(t, time.Minute, d.Sets[1].TTL)
	assert.Equal(t, Key{Zone: "example.com.", Name: "old"}, d.Withdraw[0])
	out, err := json.Marshal(d)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"ttl":"30s"`)
	var back Desired
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, d, back)
}
