package zoneops

import (
	"net/netip"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"pgregory.net/rapid"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const zone = "example.test."

func addr(name, ip string, ttl time.Duration) libdns.Record {
	return libdns.Address{Name: name, IP: netip.MustParseAddr(ip), TTL: ttl}
}

func TestZone(t *testing.T) {
	z, err := Zone(" Example.TEST ")
	require.NoError(t, err)
	assert.Equal(t, "example.test.", z)
	for _, bad := range []string{"", ".", "bad zone", "-x.test"} {
		_, err := Zone(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestMatches(t *testing.T) {
	r := addr("WWW", "192.0.2.1", time.Minute)
	cases := []struct {
		name string
		p    libdns.Record
		want bool
	}{
		{"exact", addr("www", "192.0.2.1", time.Minute), true},
		{"fqdn name", addr("www.example.test.", "192.0.2.1", time.Minute), true},
		{"ttl wildcard", libdns.RR{Name: "www", Type: "A", Data: "192.0.2.1"}, true},
		{"value wildcard", libdns.RR{Name: "www", Type: "A"}, true},
		{"type wildcard", libdns.RR{Name: "www"}, true},
		{"other ttl", addr("www", "192.0.2.1", 2*time.Minute), false},
		{"other value", addr("www", "192.0.2.2", time.Minute), false},
		{"other type", libdns.RR{Name: "www", Type: "TXT"}, false},
		{"other name", libdns.RR{Name: "api"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, Matches(r, c.p, zone)) })
	}
}

func TestSetChanges(t *testing.T) {
	existing := []libdns.Record{
		addr("www", "192.0.2.1", time.Minute), addr("www", "192.0.2.2", time.Minute),
		libdns.TXT{Name: "www", Text: "keep", TTL: time.Minute},
	}
	want := []libdns.Record{addr("www", "192.0.2.2", time.Minute), addr("www", "192.0.2.3", time.Minute)}
	ch := SetChanges(existing, want, zone)
	require.Len(t, ch, 1)
	assert.Equal(t, RRset{"www", "A"}, ch[0].Set)
	assert.Equal(t, []libdns.Record{want[1]}, ch[0].Add)
	assert.Equal(t, []libdns.Record{existing[0]}, ch[0].Delete)

	// A TTL change deletes and re-adds the same value.
	ch = SetChanges(existing[:1], []libdns.Record{addr("www", "192.0.2.1", 2*time.Minute)}, zone)
	require.Len(t, ch, 1)
	assert.Len(t, ch[0].Add, 1)
	assert.Len(t, ch[0].Delete, 1)

	assert.Empty(t, SetChanges(existing, existing[2:], zone), "nothing to do")
}

// Applying SetChanges to a zone yields exactly the wanted RRsets and leaves
// every other RRset alone.
func TestSetChangesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gen := rapid.Custom(func(t *rapid.T) libdns.Record {
			name := rapid.SampledFrom([]string{"a", "b", "@"}).Draw(t, "name")
			last := rapid.IntRange(1, 4).Draw(t, "ip")
			ttl := time.Duration(rapid.SampledFrom([]int{60, 120}).Draw(t, "ttl")) * time.Second
			return addr(name, netip.AddrFrom4([4]byte{192, 0, 2, byte(last)}).String(), ttl)
		})
		dedupe := func(rs []libdns.Record) []libdns.Record {
			seen := map[libdns.RR]bool{}
			var out []libdns.Record
			for _, r := range rs {
				if !seen[r.RR()] {
					seen[r.RR()] = true
					out = append(out, r)
				}
			}
			return out
		}
		existing := dedupe(rapid.SliceOf(gen).Draw(t, "existing"))
		want := dedupe(rapid.SliceOf(gen).Draw(t, "want"))
		zoneNow := map[libdns.RR]bool{}
		for _, r := range existing {
			zoneNow[r.RR()] = true
		}
		for _, c := range SetChanges(existing, want, zone) {
			for _, d := range c.Delete {
				delete(zoneNow, d.RR())
			}
			for _, a := range c.Add {
				zoneNow[a.RR()] = true
			}
		}
		wantSets := map[string]bool{}
		for _, w := range want {
			wantSets[w.RR().Name] = true
			if !zoneNow[w.RR()] {
				t.Fatalf("wanted %v missing", w.RR())
			}
		}
		for rr := range zoneNow {
			if wantSets[rr.Name] {
				found := false
				for _, w := range want {
					found = found || w.RR() == rr
				}
				if !found {
					t.Fatalf("unwanted %v left in a replaced RRset", rr)
				}
			} else {
				found := false
				for _, e := range existing {
					found = found || e.RR() == rr
				}
				if !found {
					t.Fatalf("%v appeared in an untouched RRset", rr)
				}
			}
		}
	})
}
