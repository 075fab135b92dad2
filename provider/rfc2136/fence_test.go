package rfc2136_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/record"
)

var _ record.Fencer = (*rfc2136.Provider)(nil)

func fenceTXT(text string) libdns.TXT {
	return libdns.TXT{Name: "_gslb-fence", TTL: time.Minute, Text: text}
}

func a(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: time.Minute, IP: netip.MustParseAddr(ip)}
}

// data returns the sorted data of the zone's records at name and type.
func data(t *testing.T, p *rfc2136.Provider, name, typ string) []string {
	t.Helper()
	recs, err := p.GetRecords(context.Background(), "example.test.")
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		if rr := r.RR(); rr.Name == name && rr.Type == typ {
			out = append(out, rr.Data)
		}
	}
	slices.Sort(out)
	return out
}

// Against a real BIND: a fenced UPDATE carries the fence as a value
// dependent prerequisite (RFC 2136 section 2.4.2), so once a newer writer
// has replaced the fence, a late writer that still expects the old value
// is refused by the server (NXRRSET) and nothing of its UPDATE is applied;
// expecting no fence where one is gets YXRRSET (section 2.4.3).
func TestReplaceFencedBIND(t *testing.T) {
	ctx := context.Background()
	p := newProvider(t, testbind.Start(t, "example.test."))
	require.NoError(t, p.ReplaceFenced(ctx, "example.test.", libdns.TXT{Name: "_gslb-fence"}, fenceTXT("d 1"),
		nil, []libdns.Record{a("app", "192.0.2.1")}))
	require.NoError(t, p.ReplaceFenced(ctx, "example.test.", fenceTXT("d 1"), fenceTXT("d 2"),
		[]libdns.Record{a("app", "192.0.2.1")}, []libdns.Record{a("app", "192.0.2.2")}))
	assert.Equal(t, []string{"d 2"}, data(t, p, "_gslb-fence", "TXT"))

	err := p.ReplaceFenced(ctx, "example.test.", fenceTXT("d 1"), fenceTXT("d 1"),
		[]libdns.Record{a("app", "192.0.2.2")}, []libdns.Record{a("app", "192.0.2.9"), a("late", "192.0.2.9")})
	var re *rfc2136.ResponseError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, dns.RcodeNXRrset, re.Rcode)
	assert.True(t, re.Fenced())
	assert.Equal(t, []string{"192.0.2.2"}, data(t, p, "app", "A"))
	assert.Empty(t, data(t, p, "late", "A"))
	assert.Equal(t, []string{"d 2"}, data(t, p, "_gslb-fence", "TXT"))

	err = p.ReplaceFenced(ctx, "example.test.", libdns.TXT{Name: "_gslb-fence"}, fenceTXT("d 1"), nil, nil)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, dns.RcodeYXRrset, re.Rcode)
	assert.True(t, re.Fenced())
	assert.Equal(t, []string{"d 2"}, data(t, p, "_gslb-fence", "TXT"))
}

// Two Reconcilers on a real BIND, the older one frozen between its read
// and its write while the newer one takes over: with fencing the late
// write is refused (record.ErrFenced); without (the same scenario, token
// 0) it lands over the newer writer's.
func TestFencedReconcilersBIND(t *testing.T) {
	for _, fencing := range []bool{true, false} {
		t.Run(map[bool]string{true: "fenced", false: "unfenced"}[fencing], func(t *testing.T) {
			ctx := context.Background()
			p := newProvider(t, testbind.Start(t, "example.test."))
			z := &frozen{Provider: p}
			tok := map[bool][2]uint64{true: {1, 2}, false: {0, 0}}[fencing]
			mk := func(tok uint64) *record.Reconciler {
				r, err := record.New(z, record.LocalConfig("deploy"), record.Options{FenceToken: tok})
				require.NoError(t, err)
				return r
			}
			w1, w2 := mk(tok[0]), mk(tok[1])
			app := func(ip string) record.Desired {
				return record.Desired{Sets: []record.RRSet{{Zone: "example.test.", Name: "app", Type: "A", TTL: time.Minute, Values: []string{ip}}}}
			}
			_, err := w1.Apply(ctx, app("192.0.2.1"))
			require.NoError(t, err)
			z.pause = func() {
				_, err := w2.Apply(ctx, app("192.0.2.2"))
				require.NoError(t, err)
			}
			_, err = w1.Apply(ctx, app("192.0.2.9"))
			if !fencing {
				require.NoError(t, err)
				assert.Equal(t, []string{"192.0.2.9"}, data(t, p, "app", "A"), "without a fence the late write lands")
				return
			}
			require.True(t, errors.Is(err, record.ErrFenced), "%v", err)
			assert.Equal(t, []string{"192.0.2.2"}, data(t, p, "app", "A"))
			assert.Equal(t, []string{"deploy 2 0"}, data(t, p, "_gslb-fence", "TXT"))
		})
	}
}

// frozen runs pause (once) before the next write reaches the server.
type frozen struct {
	*rfc2136.Provider
	pause func()
}

func (f *frozen) hold() {
	if p := f.pause; p != nil {
		f.pause = nil
		p()
	}
}

func (f *frozen) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	f.hold()
	return f.Provider.ReplaceFenced(ctx, zone, was, now, del, set)
}

func (f *frozen) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	f.hold()
	return f.Provider.SetRecords(ctx, zone, recs)
}
