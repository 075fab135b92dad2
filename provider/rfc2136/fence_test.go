package rfc2136_test

import (
	"context"
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
	"github.com/gslbkit/gslb/record/fencetest"
	"github.com/gslbkit/gslb/record/replacetest"
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

// The fencing kit's scenarios against a real BIND: a compare-and-set
// takeover, a late writer refused with nothing of its UPDATE applied, and
// the frozen leader's late write refused by the fence (landing without).
func TestFencingBIND(t *testing.T) {
	fencetest.Run(t, "example.test.", func(context.Context) (fencetest.Store, error) {
		return newProvider(t, testbind.Start(t, "example.test.")), nil
	})
}

// The ReplaceRecords kit's scenarios against a real BIND: one UPDATE
// switches a name between addresses and a CNAME (BIND would ignore a
// CNAME added beside the addresses in a separate UPDATE), never read with
// neither, and a Reconciler's type switch is that one UPDATE.
func TestReplaceRecordsBIND(t *testing.T) {
	replacetest.Run(t, "example.test.", func(context.Context) (replacetest.Store, error) {
		return newProvider(t, testbind.Start(t, "example.test.")), nil
	})
}
