package record

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/provider/rfc2136"
)

// ask queries a real server and returns the answer's records of qtype as
// "data" strings, sorted, and the response code.
func ask(t *testing.T, server, name string, qtype uint16) ([]string, int) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Timeout: 5 * time.Second}
	in, _, err := c.Exchange(m, server)
	require.NoError(t, err)
	var out []string
	for _, rr := range in.Answer {
		if rr.Header().Rrtype != qtype {
			continue
		}
		f := strings.SplitN(rr.String(), "\t", 5)
		out = append(out, f[len(f)-1])
	}
	slices.Sort(out)
	return out, in.Rcode
}

// TestReconcilerAgainstBIND publishes through RFC 2136 to a real BIND 9
// and reads the zone back with DNS queries. It runs outside a synctest
// bubble (real sockets) and asserts outcomes, never speed.
func TestReconcilerAgainstBIND(t *testing.T) {
	srv := testbind.Start(t, "example.test.")
	p, err := rfc2136.New(rfc2136.Config{Server: srv.Addr, KeyName: srv.KeyName, KeyAlg: srv.KeyAlg, Secret: srv.Secret,
		Timeout: 10 * time.Second})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	rec := &recorder{}
	r, err := New(p, LocalConfig("dep-bind"), Options{Observer: rec})
	require.NoError(t, err)
	zone := srv.Zone
	d := Desired{Sets: []RRSet{
		{Zone: zone, Name: "@", Type: "A", TTL: 30 * time.Second, Values: []string{"127.0.0.50"}},
		{Zone: zone, Name: "www", Type: "A", TTL: 30 * time.Second, Values: []string{"127.0.0.10", "127.0.0.11"}},
		{Zone: zone, Name: "app", Type: "CNAME", TTL: 30 * time.Second, Values: []string{"www." + zone}},
		{Zone: zone, Name: "ns1", Type: "A", TTL: 30 * time.Second, Values: []string{"127.0.0.99"}},
	}}
	rep, err := r.Apply(ctx, d)
	require.NoError(t, err)
	require.Len(t, rep.Changes.Refused, 1, "the glue ns1 is not ours")
	assert.ErrorIs(t, rep.Changes.Refused[0].Err, ErrNotOwned)

	got, _ := ask(t, srv.Addr, "www."+zone, dns.TypeA)
	assert.Equal(t, []string{"127.0.0.10", "127.0.0.11"}, got)
	got, _ = ask(t, srv.Addr, zone, dns.TypeA)
	assert.Equal(t, []string{"127.0.0.50"}, got)
	got, _ = ask(t, srv.Addr, "app."+zone, dns.TypeCNAME)
	assert.Equal(t, []string{"www." + zone}, got)
	got, _ = ask(t, srv.Addr, "_gslb-owner.www."+zone, dns.TypeTXT)
	assert.Equal(t, []string{`"dep-bind"`}, got)
	got, _ = ask(t, srv.Addr, "ns1."+zone, dns.TypeA)
	assert.Equal(t, []string{"127.0.0.1"}, got, "foreign glue untouched")

	// Steady state: the zone transfer's doubled SOA and the apex NS do not
	// make the plan write anything.
	rep, err = r.ReconcileOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Writes, "%s", rep.Changes)

	// Every address fails: held stale, BIND keeps answering.
	d.Sets[1].Values = nil
	rep, err = r.Apply(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Writes)
	require.Len(t, rep.Held, 1)
	got, _ = ask(t, srv.Addr, "www."+zone, dns.TypeA)
	assert.Equal(t, []string{"127.0.0.10", "127.0.0.11"}, got)

	// One recovers: one update.
	d.Sets[1].Values = []string{"127.0.0.11"}
	rep, err = r.Apply(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Writes)
	got, _ = ask(t, srv.Addr, "www."+zone, dns.TypeA)
	assert.Equal(t, []string{"127.0.0.11"}, got)

	// Withdraw the CNAME: NXDOMAIN once the marker is gone too.
	d.Sets = slices.Delete(d.Sets, 2, 3)
	d.Withdraw = []Key{{Zone: zone, Name: "app"}}
	_, err = r.Apply(ctx, d)
	require.NoError(t, err)
	_, rcode := ask(t, srv.Addr, "app."+zone, dns.TypeCNAME)
	assert.Equal(t, dns.RcodeNameError, rcode)
	_, rcode = ask(t, srv.Addr, "_gslb-owner.app."+zone, dns.TypeTXT)
	assert.Equal(t, dns.RcodeNameError, rcode)
	rep, err = r.ReconcileOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Writes)
}
