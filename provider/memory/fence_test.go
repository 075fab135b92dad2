package memory_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/memory"
)

func fence(text string) libdns.TXT {
	return libdns.TXT{Name: "_gslb-fence", TTL: time.Minute, Text: text}
}

func addr(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: time.Minute, IP: netip.MustParseAddr(ip)}
}

// lookupA returns the addresses at name.
func lookupA(t *testing.T, p *memory.Provider, name string) []string {
	t.Helper()
	recs, err := p.GetRecords(context.Background(), "example.test.")
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		if a, ok := r.(libdns.Address); ok && a.Name == name {
			out = append(out, a.IP.String())
		}
	}
	return out
}

// A fenced write is a compare-and-set: it applies, with the new fence, in
// one version and one serial; a late writer that still expects the old
// fence is refused, and nothing it sent is visible.
func TestReplaceFencedRefusesLateWriter(t *testing.T) {
	ctx := context.Background()
	p := &memory.Provider{}
	require.NoError(t, p.AddZone("example.test."))
	soa := func() uint32 { s, err := p.SOA("example.test."); require.NoError(t, err); return s.Serial }

	// Writer 1 takes the free zone over (no fence yet) and writes.
	v, s := p.Version(), soa()
	require.NoError(t, p.ReplaceFenced(ctx, "example.test.", libdns.TXT{Name: "_gslb-fence"}, fence("d 1"),
		nil, []libdns.Record{addr("app", "192.0.2.1")}))
	assert.Equal(t, v+1, p.Version(), "one version")
	assert.Equal(t, s+1, soa(), "one serial")
	// Writer 2 takes over with a higher token (a compare-and-set from "d 1").
	require.NoError(t, p.ReplaceFenced(ctx, "example.test.", fence("d 1"), fence("d 2"),
		nil, []libdns.Record{addr("app", "192.0.2.2")}))
	// Writer 1, late, still expects "d 1": refused, nothing applied.
	v, s = p.Version(), soa()
	err := p.ReplaceFenced(ctx, "example.test.", fence("d 1"), fence("d 1"),
		[]libdns.Record{addr("app", "192.0.2.2")}, []libdns.Record{addr("app", "192.0.2.9"), addr("late", "192.0.2.9")})
	require.ErrorIs(t, err, memory.ErrFenced)
	var f interface{ Fenced() bool }
	require.True(t, errors.As(err, &f) && f.Fenced())
	assert.Equal(t, []string{"192.0.2.2"}, lookupA(t, p, "app"))
	assert.Empty(t, lookupA(t, p, "late"))
	assert.Equal(t, v, p.Version())
	assert.Equal(t, s, soa())
	// Expecting no fence where there is one is refused too.
	err = p.ReplaceFenced(ctx, "example.test.", libdns.TXT{Name: "_gslb-fence"}, fence("d 1"), nil, nil)
	require.ErrorIs(t, err, memory.ErrFenced)
	// A failed record check changes nothing, fence included.
	err = p.ReplaceFenced(ctx, "example.test.", fence("d 2"), fence("d 3"), nil,
		[]libdns.Record{libdns.CNAME{Name: "@", Target: "x.example."}})
	require.ErrorIs(t, err, memory.ErrApexCNAME)
	recs, err := p.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	assert.Contains(t, recs, libdns.Record(fence("d 2")))
}

// Without the fence the same late write lands: the scenario above
// depends on the condition, not on the order of the calls.
func TestLateWriterLandsWithoutFence(t *testing.T) {
	ctx := context.Background()
	p := &memory.Provider{}
	require.NoError(t, p.AddZone("example.test."))
	_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{addr("app", "192.0.2.2")})
	require.NoError(t, err)
	_, err = p.SetRecords(ctx, "example.test.", []libdns.Record{addr("app", "192.0.2.9")})
	require.NoError(t, err)
	assert.Equal(t, []string{"192.0.2.9"}, lookupA(t, p, "app"))
}

// benchZone is a zone of 100 names for the write benchmarks.
func benchZone(b *testing.B) *memory.Provider {
	p := &memory.Provider{}
	require.NoError(b, p.AddZone("example.test."))
	var recs []libdns.Record
	for i := range 100 {
		recs = append(recs, addr(fmt.Sprintf("n%d", i), fmt.Sprintf("192.0.2.%d", i)))
	}
	_, err := p.SetRecords(context.Background(), "example.test.", recs)
	require.NoError(b, err)
	return p
}

// BenchmarkWriteBatch: one batch of two RRsets, as SetRecords and as a
// fenced write (the same batch plus the fence's compare-and-set).
func BenchmarkWriteBatch(b *testing.B) {
	ctx := context.Background()
	batch := func(i int) []libdns.Record {
		return []libdns.Record{addr("app", fmt.Sprintf("198.51.100.%d", i%200)), addr("www", fmt.Sprintf("203.0.113.%d", i%200))}
	}
	b.Run("set", func(b *testing.B) {
		p := benchZone(b)
		for i := 0; b.Loop(); i++ {
			if _, err := p.SetRecords(ctx, "example.test.", batch(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fenced", func(b *testing.B) {
		p := benchZone(b)
		was := libdns.TXT{Name: "_gslb-fence"}
		for i := 0; b.Loop(); i++ {
			now := fence(fmt.Sprintf("d 1 %d", i))
			if err := p.ReplaceFenced(ctx, "example.test.", was, now, nil, batch(i)); err != nil {
				b.Fatal(err)
			}
			was = now
		}
	})
}
