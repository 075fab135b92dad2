package zonetransfer_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadXFR: a transfer read from one snapshot of the store is the AXFR,
// the IXFR differences or the SOA alone; a zone not held (also of a zero
// or nil Provider) is memory.ErrNoZone.
func TestReadXFR(t *testing.T) {
	_, err := zonetransfer.ReadXFR(new(memory.Provider), "example.test.", false, 0)
	assert.True(t, errors.Is(err, memory.ErrNoZone))
	_, err = zonetransfer.ReadXFR(nil, "example.test.", true, 1)
	assert.True(t, errors.Is(err, memory.ErrNoZone))

	p := new(memory.Provider)
	require.NoError(t, p.AddZone("example.test."))
	_, err = p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
	})
	require.NoError(t, err)
	x, err := zonetransfer.ReadXFR(p, "EXAMPLE.test", true, 1)
	require.NoError(t, err)
	assert.Equal(t, zonetransfer.XFRIncremental, x.Kind)
	assert.Equal(t, "example.test.", x.Zone)
	assert.Equal(t, uint32(2), x.Serial)
	assert.Len(t, x.Records, 5, "SOA, SOA 1, SOA 2, A, SOA")
	x, err = zonetransfer.ReadXFR(p, "example.test.", true, 2)
	require.NoError(t, err)
	assert.Equal(t, zonetransfer.XFRUpToDate, x.Kind)
	assert.Len(t, x.Records, 1)
	x, err = zonetransfer.ReadXFR(p, "example.test.", false, 0)
	require.NoError(t, err)
	assert.Equal(t, zonetransfer.XFRFull, x.Kind)
	assert.Equal(t, "AXFR", x.Kind.String())
	assert.Len(t, x.Records, 4, "SOA, NS, A, SOA")
}

// TestOpenXFR: OpenXFR leaves Records nil and All yields what ReadXFR
// collects: the SOA, the zone (apex first, the rest in no particular
// order), the SOA; an IXFR's differences in order.
func TestOpenXFR(t *testing.T) {
	var zero zonetransfer.XFR
	for range zero.All() {
		t.Fatal("the zero XFR yields a record")
	}
	p := new(memory.Provider)
	require.NoError(t, p.AddZone("example.test."))
	_, err := p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: "api", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.2")},
	})
	require.NoError(t, err)
	for _, c := range []struct {
		ixfr   bool
		client uint32
		kind   zonetransfer.XFRKind
		n      int
	}{{false, 0, zonetransfer.XFRFull, 5}, {true, 1, zonetransfer.XFRIncremental, 6}, {true, 2, zonetransfer.XFRUpToDate, 1}} {
		x, err := zonetransfer.OpenXFR(p, "example.test.", c.ixfr, c.client)
		require.NoError(t, err)
		assert.Nil(t, x.Records)
		assert.Equal(t, c.kind, x.Kind)
		streamed := slices.Collect(x.All())
		r, err := zonetransfer.ReadXFR(p, "example.test.", c.ixfr, c.client)
		require.NoError(t, err)
		require.Len(t, streamed, c.n)
		assert.Equal(t, c.kind, r.Kind)
		assert.Equal(t, c.n, len(r.Records))
		assert.ElementsMatch(t, rrStrings(r.Records), rrStrings(streamed))
		assert.Equal(t, slices.Collect(r.All()), r.Records, "All yields Records when set")
		if c.kind != zonetransfer.XFRIncremental {
			assert.Equal(t, dns.TypeSOA, streamed[0].Header().Rrtype)
		} else {
			assert.Equal(t, rrStrings(r.Records), rrStrings(streamed), "an IXFR's order is the journal's")
		}
	}
	_, err = zonetransfer.OpenXFR(p, "other.test.", false, 0)
	assert.ErrorIs(t, err, memory.ErrNoZone)
	_, err = zonetransfer.OpenXFR(nil, "example.test.", false, 0)
	assert.ErrorIs(t, err, memory.ErrNoZone)
}

func rrStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return out
}

// TestAXFRStreamConsistent: writes that land while an AXFR is being
// streamed (after its first message is out) do not reach it: the
// secondary gets exactly the zone version the transfer started on, its
// SOA first and last, every RRset's records together. The same for an
// IXFR that falls back to the AXFR.
func TestAXFRStreamConsistent(t *testing.T) {
	for _, ixfr := range []bool{false, true} {
		t.Run(fmt.Sprintf("ixfr=%v", ixfr), func(t *testing.T) {
			ctx := context.Background()
			cfg := memory.DefaultConfig()
			cfg.JournalSize = 1
			p, err := memory.New(cfg)
			require.NoError(t, err)
			require.NoError(t, p.AddZone("example.test."))
			var recs []libdns.Record
			for i := range 3000 {
				for j := range 2 {
					recs = append(recs, libdns.Address{Name: fmt.Sprintf("h%d", i), TTL: time.Minute,
						IP: netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), byte(j)})})
				}
			}
			_, err = p.SetRecords(ctx, "example.test.", recs)
			require.NoError(t, err)
			_, err = p.SetRecords(ctx, "example.test.", recs[:2]) // one more version: the journal no longer reaches serial 1
			require.NoError(t, err)
			before, err := p.ZoneState("example.test.")
			require.NoError(t, err)
			want := append([]string{before.SOA().String()}, rrStrings(before.Records())...)
			want = append(want, before.SOA().String())

			x, err := zonetransfer.NewTransfer(p, zonetransfer.TransferConfig{Allow: []zonetransfer.TransferRule{{}}}, nil)
			require.NoError(t, err)
			m := new(dns.Msg)
			if ixfr {
				m.SetIxfr("example.test.", 1, "ns1.example.test.", "hostmaster.example.test.")
			} else {
				m.SetAxfr("example.test.")
			}
			q, err := m.Pack()
			require.NoError(t, err)
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				_, err := x.ServeTCP(pw, q, netip.MustParseAddr("127.0.0.1"), nil)
				pw.CloseWithError(err)
				done <- err
			}()

			var got []dns.RR
			msgs := 0
			for {
				var l [2]byte
				if _, err := io.ReadFull(pr, l[:]); err == io.EOF {
					break
				} else {
					require.NoError(t, err)
				}
				b := make([]byte, binary.BigEndian.Uint16(l[:]))
				_, err := io.ReadFull(pr, b)
				require.NoError(t, err)
				r := new(dns.Msg)
				require.NoError(t, r.Unpack(b))
				got = append(got, r.Answer...)
				if msgs++; msgs == 1 {
					// The first message is out: change, delete and add
					// names, several versions.
					_, err = p.SetRecords(ctx, "example.test.", []libdns.Record{
						libdns.Address{Name: "h1", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
					})
					require.NoError(t, err)
					_, err = p.DeleteRecords(ctx, "example.test.", recs[100:2000])
					require.NoError(t, err)
					_, err = p.SetRecords(ctx, "example.test.", []libdns.Record{
						libdns.Address{Name: "late", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.2")},
					})
					require.NoError(t, err)
				}
			}
			require.NoError(t, <-done)
			assert.Greater(t, msgs, 3, "the zone takes several messages")
			require.Len(t, got, len(want))
			assert.Equal(t, want[0], got[0].String(), "the SOA first")
			assert.Equal(t, want[0], got[len(got)-1].String(), "the SOA last")
			assert.ElementsMatch(t, want, rrStrings(got))
			seen := map[string]bool{}
			for i := 1; i < len(got)-1; i++ {
				k := got[i].Header().Name
				if i > 1 && k == got[i-1].Header().Name {
					continue
				}
				assert.False(t, seen[k], "the records of %s split", k)
				seen[k] = true
			}
			now, err := p.SOA("example.test.")
			require.NoError(t, err)
			assert.Equal(t, before.SOA().Serial+3, now.Serial)
		})
	}
}
