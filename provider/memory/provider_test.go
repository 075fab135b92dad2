package memory_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const zone = "example.test."

func a(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: 30 * time.Second, IP: netip.MustParseAddr(ip)}
}

func cname(name, target string) libdns.Record {
	return libdns.CNAME{Name: name, TTL: 30 * time.Second, Target: target}
}

func txt(name, text string) libdns.Record {
	return libdns.TXT{Name: name, TTL: 30 * time.Second, Text: text}
}

func newZone(t *testing.T, recs ...libdns.Record) *memory.Provider {
	t.Helper()
	p := new(memory.Provider)
	require.NoError(t, p.AddZone(zone))
	if len(recs) > 0 {
		_, err := p.AppendRecords(context.Background(), zone, recs)
		require.NoError(t, err)
	}
	return p
}

// dump renders the zone (without the apex NS) as "name type data ttl" lines.
func dump(t *testing.T, p *memory.Provider) []string {
	t.Helper()
	recs, err := p.GetRecords(context.Background(), zone)
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		rr := r.RR()
		if rr.Type == "NS" && rr.Name == "@" {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s %d", rr.Name, rr.Type, rr.Data, int(rr.TTL.Seconds())))
	}
	return out
}

func TestSetRecords(t *testing.T) {
	tests := []struct {
		name    string
		before  []libdns.Record
		input   []libdns.Record
		want    []string
		wantErr error
	}{
		{
			name:   "replaces the rrset and leaves other types (libdns example 1)",
			before: []libdns.Record{a("@", "192.0.2.1"), a("@", "192.0.2.2"), txt("@", "hello world")},
			input:  []libdns.Record{a("@", "192.0.2.3")},
			want:   []string{"@ A 192.0.2.3 30", "@ TXT hello world 30"},
		},
		{
			name: "leaves other names (libdns example 2)",
			before: []libdns.Record{a("alpha", "2001:db8::1"), a("alpha", "2001:db8::2"),
				a("beta", "2001:db8::3"), a("beta", "2001:db8::4")},
			input: []libdns.Record{a("alpha", "2001:db8::1"), a("alpha", "2001:db8::2"), a("alpha", "2001:db8::5")},
			want: []string{"alpha AAAA 2001:db8::1 30", "alpha AAAA 2001:db8::2 30", "alpha AAAA 2001:db8::5 30",
				"beta AAAA 2001:db8::3 30", "beta AAAA 2001:db8::4 30"},
		},
		{
			name:   "names are case-insensitive",
			before: []libdns.Record{a("www", "192.0.2.1")},
			input:  []libdns.Record{a("WWW", "192.0.2.9"), a("www.EXAMPLE.test.", "192.0.2.8")},
			want:   []string{"www A 192.0.2.9 30", "www A 192.0.2.8 30"},
		},
		{
			name:   "CNAME replaces an address set in one call",
			before: []libdns.Record{a("app", "192.0.2.1"), a("app", "2001:db8::1")},
			input:  []libdns.Record{cname("app", "failover.example.test.")},
			want:   []string{"app CNAME failover.example.test. 30"},
		},
		{
			name:   "an address set replaces a CNAME in one call",
			before: []libdns.Record{cname("app", "failover.example.test")},
			input:  []libdns.Record{a("app", "192.0.2.1")},
			want:   []string{"app A 192.0.2.1 30"},
		},
		{
			name:    "CNAME beside TXT is refused",
			before:  []libdns.Record{txt("app", "x")},
			input:   []libdns.Record{cname("app", "other.example.test.")},
			wantErr: memory.ErrCNAMEConflict,
			want:    []string{"app TXT x 30"},
		},
		{
			name:    "TXT beside a CNAME is refused",
			before:  []libdns.Record{cname("app", "other.example.test.")},
			input:   []libdns.Record{txt("app", "x")},
			wantErr: memory.ErrCNAMEConflict,
			want:    []string{"app CNAME other.example.test. 30"},
		},
		{
			name:    "CNAME and A in one call are refused",
			input:   []libdns.Record{cname("app", "other.example.test."), a("app", "192.0.2.1")},
			wantErr: memory.ErrCNAMEConflict,
		},
		{
			name:    "two CNAMEs at a name are refused",
			input:   []libdns.Record{cname("app", "x.example.test."), cname("app", "y.example.test.")},
			wantErr: memory.ErrCNAMEConflict,
		},
		{
			name:    "CNAME at the apex is refused",
			input:   []libdns.Record{cname("@", "other.example.net.")},
			wantErr: memory.ErrApexCNAME,
		},
		{
			name:    "a bad record refuses the whole call",
			before:  []libdns.Record{a("x", "192.0.2.1")},
			input:   []libdns.Record{a("x", "192.0.2.2"), libdns.RR{Name: "y", Type: "A", Data: "not-an-ip"}},
			wantErr: memory.ErrInvalidRecord,
			want:    []string{"x A 192.0.2.1 30"},
		},
		{
			name:    "names outside the zone are refused",
			input:   []libdns.Record{a("www.example.net.", "192.0.2.1")},
			wantErr: memory.ErrNotInZone,
		},
		{
			name:    "SOA is refused",
			input:   []libdns.Record{libdns.RR{Name: "@", Type: "SOA", Data: "a. b. 1 2 3 4 5"}},
			wantErr: memory.ErrUnsupportedType,
		},
		{
			name:    "an empty name is refused",
			input:   []libdns.Record{libdns.RR{Name: "", Type: "A", Data: "192.0.2.1"}},
			wantErr: memory.ErrInvalidRecord,
		},
		{
			name:    "a negative TTL is refused",
			input:   []libdns.Record{libdns.Address{Name: "x", TTL: -time.Second, IP: netip.MustParseAddr("192.0.2.1")}},
			wantErr: memory.ErrInvalidRecord,
		},
		{
			name:  "duplicates collapse, TTLs truncate to seconds",
			input: []libdns.Record{libdns.Address{Name: "x", TTL: 1500 * time.Millisecond, IP: netip.MustParseAddr("192.0.2.1")}, a("x", "192.0.2.1")},
			want:  []string{"x A 192.0.2.1 1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newZone(t, tc.before...)
			before := p.Version()
			_, err := p.SetRecords(context.Background(), zone, tc.input)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.Equal(t, before, p.Version(), "a refused call changes nothing")
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.want, dump(t, p))
		})
	}
}

func TestAppendRecords(t *testing.T) {
	tests := []struct {
		name        string
		before      []libdns.Record
		input       []libdns.Record
		wantCreated int
		want        []string
		wantErr     error
	}{
		{
			name:        "adds beside existing records",
			before:      []libdns.Record{a("x", "192.0.2.1")},
			input:       []libdns.Record{a("x", "192.0.2.2")},
			wantCreated: 1,
			want:        []string{"x A 192.0.2.1 30", "x A 192.0.2.2 30"},
		},
		{
			name:        "an existing record is not created twice",
			before:      []libdns.Record{a("x", "192.0.2.1")},
			input:       []libdns.Record{a("X", "192.0.2.1"), a("x", "192.0.2.2")},
			wantCreated: 1,
			want:        []string{"x A 192.0.2.1 30", "x A 192.0.2.2 30"},
		},
		{
			name:    "CNAME beside an address is refused",
			before:  []libdns.Record{a("x", "192.0.2.1")},
			input:   []libdns.Record{cname("x", "y.example.test.")},
			want:    []string{"x A 192.0.2.1 30"},
			wantErr: memory.ErrCNAMEConflict,
		},
		{
			name:        "TXT is stored raw, quotes and backslashes included",
			input:       []libdns.Record{txt("t", `quotes " backslashes \000`)},
			wantCreated: 1,
			want:        []string{`t TXT quotes " backslashes \000 30`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newZone(t, tc.before...)
			created, err := p.AppendRecords(context.Background(), zone, tc.input)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
				assert.Len(t, created, tc.wantCreated)
			}
			assert.Equal(t, tc.want, dump(t, p))
		})
	}
}

func TestDeleteRecords(t *testing.T) {
	base := []libdns.Record{a("x", "192.0.2.1"), a("x", "192.0.2.2"), a("x", "2001:db8::1"), txt("x", "t")}
	tests := []struct {
		name        string
		input       []libdns.Record
		wantDeleted int
		want        []string
	}{
		{"exact match", []libdns.Record{a("x", "192.0.2.1")}, 1,
			[]string{"x A 192.0.2.2 30", "x AAAA 2001:db8::1 30", "x TXT t 30"}},
		{"wrong TTL matches nothing", []libdns.Record{libdns.Address{Name: "x", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")}}, 0,
			[]string{"x A 192.0.2.1 30", "x A 192.0.2.2 30", "x AAAA 2001:db8::1 30", "x TXT t 30"}},
		{"empty data deletes the rrset", []libdns.Record{libdns.RR{Name: "x", Type: "A"}}, 2,
			[]string{"x AAAA 2001:db8::1 30", "x TXT t 30"}},
		{"empty type deletes the name", []libdns.Record{libdns.RR{Name: "X"}}, 4, nil},
		{"absent records are ignored", []libdns.Record{a("nope", "192.0.2.1")}, 0,
			[]string{"x A 192.0.2.1 30", "x A 192.0.2.2 30", "x AAAA 2001:db8::1 30", "x TXT t 30"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newZone(t, base...)
			deleted, err := p.DeleteRecords(context.Background(), zone, tc.input)
			require.NoError(t, err)
			assert.Len(t, deleted, tc.wantDeleted)
			assert.Equal(t, tc.want, dump(t, p))
		})
	}
}

func TestTypedOutput(t *testing.T) {
	p := newZone(t, a("a", "192.0.2.1"), cname("c", "a.example.test."), txt("t", "v"),
		libdns.MX{Name: "@", TTL: time.Minute, Preference: 10, Target: "mail.example.test."})
	recs, err := p.GetRecords(context.Background(), zone)
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, r := range recs {
		kinds[fmt.Sprintf("%T", r)]++
	}
	assert.Equal(t, map[string]int{"libdns.NS": 1, "libdns.MX": 1, "libdns.Address": 1, "libdns.CNAME": 1, "libdns.TXT": 1}, kinds)
}

func TestZones(t *testing.T) {
	p := new(memory.Provider)
	ctx := context.Background()
	require.NoError(t, p.AddZone("Example.TEST"))
	require.ErrorIs(t, p.AddZone("example.test."), memory.ErrZoneExists)
	require.NoError(t, p.AddZone("other.test"))
	zs, err := p.ListZones(ctx)
	require.NoError(t, err)
	assert.Equal(t, []libdns.Zone{{Name: "example.test."}, {Name: "other.test."}}, zs)
	_, err = p.GetRecords(ctx, "missing.test.")
	require.ErrorIs(t, err, memory.ErrNoZone)
	_, err = p.SetRecords(ctx, "missing.test.", []libdns.Record{a("x", "192.0.2.1")})
	require.ErrorIs(t, err, memory.ErrNoZone)
	require.NoError(t, p.RemoveZone("other.test."))
	require.ErrorIs(t, p.RemoveZone("other.test."), memory.ErrNoZone)
	assert.Equal(t, []string{"example.test."}, p.Zones())

	bad := memory.DefaultZoneConfig()
	bad.TTL = -time.Second
	require.ErrorIs(t, p.AddZoneWith("z.test", bad), memory.ErrInvalidZone)
	require.ErrorIs(t, p.AddZone(""), memory.ErrInvalidZone)
	_, err = memory.New(memory.Config{JournalSize: -1})
	require.ErrorIs(t, err, memory.ErrInvalidConfig)
}

func TestSerialAndVersion(t *testing.T) {
	ctx := context.Background()
	p := newZone(t)
	soa, err := p.SOA(zone)
	require.NoError(t, err)
	require.Equal(t, uint32(1), soa.Serial)
	v := p.Version()
	_, err = p.SetRecords(ctx, zone, []libdns.Record{a("x", "192.0.2.1"), a("y", "192.0.2.1")})
	require.NoError(t, err)
	soa, _ = p.SOA(zone)
	assert.Equal(t, uint32(2), soa.Serial, "one bump per call")
	assert.Equal(t, v+1, p.Version())
	_, err = p.SetRecords(ctx, zone, []libdns.Record{a("x", "192.0.2.1")})
	require.NoError(t, err)
	soa, _ = p.SOA(zone)
	assert.Equal(t, uint32(2), soa.Serial, "no change, no bump")
	_, err = p.DeleteRecords(ctx, zone, []libdns.Record{a("y", "192.0.2.1")})
	require.NoError(t, err)
	soa, _ = p.SOA(zone)
	assert.Equal(t, uint32(3), soa.Serial)
}

func TestJournal(t *testing.T) {
	ctx := context.Background()
	p, err := memory.New(memory.Config{JournalSize: 3})
	require.NoError(t, err)
	require.NoError(t, p.AddZone(zone))                                                // version 1: addZone + NS (2 entries)
	_, err = p.SetRecords(ctx, zone, []libdns.Record{cname("app", "x.example.test.")}) // version 2
	require.NoError(t, err)
	ch, ok := p.Changes(1)
	require.True(t, ok)
	require.Len(t, ch, 1)
	assert.Equal(t, memory.Change{Version: 2, Kind: memory.ChangeRRSet, Zone: zone, Serial: 2, PrevSerial: 1, Name: "app", Type: "CNAME",
		Records: []memory.ZoneRecord{{Name: "app", Type: "CNAME", TTL: 30, Data: "x.example.test."}}}, ch[0])

	_, err = p.SetRecords(ctx, zone, []libdns.Record{a("app", "192.0.2.1")}) // version 3: CNAME removed, A set
	require.NoError(t, err)
	ch, ok = p.Changes(2)
	require.True(t, ok)
	require.Len(t, ch, 2)
	assert.Empty(t, ch[1].Records, "the CNAME rrset is gone")
	assert.Equal(t, "CNAME", ch[1].Type)

	_, ok = p.Changes(0)
	assert.False(t, ok, "the journal no longer reaches version 1")
	ch, ok = p.Changes(3)
	assert.True(t, ok)
	assert.Empty(t, ch)
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newZone(t)
		v := p.Version()
		got := make(chan uint64)
		go func() {
			nv, err := p.Wait(context.Background(), v)
			if err == nil {
				got <- nv
			}
		}()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("Wait returned before a change")
		default:
		}
		_, err := p.AppendRecords(context.Background(), zone, []libdns.Record{a("x", "192.0.2.1")})
		require.NoError(t, err)
		assert.Equal(t, v+1, <-got)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = p.Wait(ctx, p.Version())
		assert.True(t, errors.Is(err, context.DeadlineExceeded))
	})
}

// TestConcurrent runs writers and readers together under -race: every
// append is visible at the end and every read sees a consistent zone.
func TestConcurrent(t *testing.T) {
	p := newZone(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				_, err := p.AppendRecords(ctx, zone, []libdns.Record{a(fmt.Sprintf("w%d", w), fmt.Sprintf("192.0.2.%d", i+1))})
				assert.NoError(t, err)
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 100 {
				recs, err := p.GetRecords(ctx, zone)
				assert.NoError(t, err)
				assert.NotEmpty(t, recs)
			}
		})
	}
	wg.Wait()
	recs, err := p.GetRecords(ctx, zone)
	require.NoError(t, err)
	assert.Len(t, recs, 1+4*50)
	soa, _ := p.SOA(zone)
	assert.Equal(t, uint32(1+4*50), soa.Serial)
}
