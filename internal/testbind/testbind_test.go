package testbind_test

import (
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A started named answers the SOA and accepts an update signed with the
// generated key; an unsigned update is refused.
func TestStart(t *testing.T) {
	s := testbind.Start(t, "Example.Test")
	require.Equal(t, "example.test.", s.Zone)

	require.Equal(t, dns.RcodeRefused, update(t, s, "www.example.test. 60 IN A 192.0.2.1", false), "unsigned update")
	require.Equal(t, dns.RcodeSuccess, update(t, s, "www.example.test. 60 IN A 192.0.2.1", true), "signed update")

	q := new(dns.Msg)
	q.SetQuestion("www.example.test.", dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(q, s.Addr)
	require.NoError(t, err)
	require.Len(t, r.Answer, 1)
	require.Equal(t, "192.0.2.1", r.Answer[0].(*dns.A).A.String())
}

// An update survives Stop and Run (the zone file and journal are kept, the
// port stays), and an MX whose target has no address is accepted
// (check-integrity is off).
func TestStopRun(t *testing.T) {
	s := testbind.Start(t, "example.test.")
	require.Equal(t, dns.RcodeSuccess, update(t, s, "example.test. 60 IN MX 10 mail.elsewhere.example.test.", true),
		"update adding an MX without an address")

	s.Stop()
	q := new(dns.Msg)
	q.SetQuestion(s.Zone, dns.TypeMX)
	_, _, err := (&dns.Client{Timeout: 200 * time.Millisecond}).Exchange(q, s.Addr)
	require.Error(t, err, "a stopped named answers")

	s.Run(t)
	r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(q, s.Addr)
	require.NoError(t, err)
	require.Len(t, r.Answer, 1)
	require.Equal(t, "mail.elsewhere.example.test.", r.Answer[0].(*dns.MX).Mx)
}

// update sends s an RFC 2136 update adding rr, signed with s's key where
// signed is set, and returns the reply's rcode.
func update(t *testing.T, s *testbind.Server, rr string, signed bool) int {
	t.Helper()
	r, err := dns.NewRR(rr)
	require.NoError(t, err)
	m := new(dns.Msg)
	m.SetUpdate(s.Zone)
	m.Insert([]dns.RR{r})
	if signed {
		m.SetTsig(dns.Fqdn(s.KeyName), dns.Fqdn(s.KeyAlg), 300, time.Now().Unix())
	}
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: map[string]string{dns.Fqdn(s.KeyName): s.Secret}}
	reply, _, err := c.Exchange(m, s.Addr)
	require.NoError(t, err)
	return reply.Rcode
}
