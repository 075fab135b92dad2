package testknot_test

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/internal/testknot"
	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const zoneText = `$ORIGIN example.test.
$TTL 30
@   IN SOA ns1 hostmaster 1 60 60 600 30
@   IN NS  ns1
ns1 IN A   127.0.0.1
www IN A   192.0.2.1
`

func lookup(t *testing.T, addr, name string) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, addr)
	require.NoError(t, err)
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	return out
}

// A started primary answers from its zone file.
func TestStartPrimary(t *testing.T) {
	k := testknot.Start(t, testknot.Config{Zone: "example.test.", ZoneText: zoneText})
	require.Equal(t, []string{"192.0.2.1"}, lookup(t, k.Addr, "www.example.test."))
}

// An updatable primary takes an UPDATE signed with its key (and refuses one
// without), and serves the change again after Stop and Run.
func TestUpdatablePrimary(t *testing.T) {
	const key = "gslb-key."
	secret := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	k := testknot.Start(t, testknot.Config{Zone: "example.test.", ZoneText: zoneText, Updates: true, KeyName: key, Secret: secret})

	rr, err := dns.NewRR("new.example.test. 30 IN A 192.0.2.9")
	require.NoError(t, err)
	update := func(signed bool) int {
		m := new(dns.Msg)
		m.SetUpdate("example.test.")
		m.Insert([]dns.RR{rr})
		c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
		if signed {
			m.SetTsig(key, dns.HmacSHA256, 300, time.Now().Unix())
			c.TsigSecret = map[string]string{key: secret}
		}
		r, _, err := c.Exchange(m, k.Addr)
		require.NoError(t, err)
		return r.Rcode
	}
	require.NotEqual(t, dns.RcodeSuccess, update(false), "an unsigned update")
	require.Equal(t, dns.RcodeSuccess, update(true), "a signed update")
	require.True(t, waitFor(func() bool { return len(lookup(t, k.Addr, "new.example.test.")) == 1 }), "the primary serves the update; log:\n%s", k.Log.String())
	k.Stop()
	k.Run(t)
	require.Equal(t, []string{"192.0.2.9"}, lookup(t, k.Addr, "new.example.test."), "after a restart")
}

// A secondary made with New gets its primary's address later, transfers
// the zone signed with its key, and serves it again after Stop and Run.
func TestSecondary(t *testing.T) {
	const key = "xfr-key."
	secret := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	k := testknot.New(t, testknot.Config{Zone: "example.test.", KeyName: key, Secret: secret})

	p := new(memory.Provider)
	require.NoError(t, p.AddZone("example.test."))
	_, err := p.AppendRecords(context.Background(), "example.test.", []libdns.Record{testrecords.Address("www", "192.0.2.7")})
	require.NoError(t, err)
	xc := zonetransfer.DefaultTransferConfig()
	xc.Keys = []zonetransfer.TSIGKey{{Name: key, Secret: secret}}
	xc.Allow = []zonetransfer.TransferRule{{Key: key}}
	x, err := zonetransfer.NewTransfer(p, xc, nil)
	require.NoError(t, err)
	sc := dnsserver.DefaultServerConfig()
	sc.Addr = "127.0.0.1:0"
	srv, err := dnsserver.NewServer(p, sc, nil)
	require.NoError(t, err)
	require.NoError(t, srv.SetTransfer(x))
	require.NoError(t, srv.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	k.Config.Primary = srv.Addr()
	for range 2 {
		k.Run(t)
		require.True(t, waitFor(func() bool { return len(lookup(t, k.Addr, "www.example.test.")) == 1 }), "the secondary serves the zone; log:\n%s", k.Log.String())
		require.Equal(t, []string{"192.0.2.7"}, lookup(t, k.Addr, "www.example.test."))
		k.Stop()
	}
}

// waitFor polls ok every 10 ms until it holds or 30 s pass (a hang guard).
func waitFor(ok func() bool) bool {
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-guard.C:
			return false
		case <-tick.C:
		}
	}
	return true
}
