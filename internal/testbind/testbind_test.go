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

	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: map[string]string{dns.Fqdn(s.KeyName): s.Secret}}
	rr, err := dns.NewRR("www.example.test. 60 IN A 192.0.2.1")
	require.NoError(t, err)

	unsigned := new(dns.Msg)
	unsigned.SetUpdate(s.Zone)
	unsigned.Insert([]dns.RR{rr})
	r, _, err := c.Exchange(unsigned, s.Addr)
	require.NoError(t, err)
	require.Equal(t, dns.RcodeRefused, r.Rcode, "unsigned update")

	signed := new(dns.Msg)
	signed.SetUpdate(s.Zone)
	signed.Insert([]dns.RR{rr})
	signed.SetTsig(dns.Fqdn(s.KeyName), dns.Fqdn(s.KeyAlg), 300, time.Now().Unix())
	r, _, err = c.Exchange(signed, s.Addr)
	require.NoError(t, err)
	require.Equal(t, dns.RcodeSuccess, r.Rcode, "signed update")

	q := new(dns.Msg)
	q.SetQuestion("www.example.test.", dns.TypeA)
	r, _, err = (&dns.Client{Timeout: 5 * time.Second}).Exchange(q, s.Addr)
	require.NoError(t, err)
	require.Len(t, r.Answer, 1)
	require.Equal(t, "192.0.2.1", r.Answer[0].(*dns.A).A.String())
}

// An update survives Stop and Run (the zone file and journal are kept, the
// port stays), and an MX whose target has no address is accepted
// (check-integrity is off).
func TestStopRun(t *testing.T) {
	s := testbind.Start(t, "example.test.")
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: map[string]string{dns.Fqdn(s.KeyName): s.Secret}}
	mx, err := dns.NewRR("example.test. 60 IN MX 10 mail.elsewhere.example.test.")
	require.NoError(t, err)
	u := new(dns.Msg)
	u.SetUpdate(s.Zone)
	u.Insert([]dns.RR{mx})
	u.SetTsig(dns.Fqdn(s.KeyName), dns.Fqdn(s.KeyAlg), 300, time.Now().Unix())
	r, _, err := c.Exchange(u, s.Addr)
	require.NoError(t, err)
	require.Equal(t, dns.RcodeSuccess, r.Rcode, "update adding an MX without an address")

	s.Stop()
	q := new(dns.Msg)
	q.SetQuestion(s.Zone, dns.TypeMX)
	_, _, err = (&dns.Client{Timeout: 200 * time.Millisecond}).Exchange(q, s.Addr)
	require.Error(t, err, "a stopped named answers")

	s.Run(t)
	r, _, err = (&dns.Client{Timeout: 5 * time.Second}).Exchange(q, s.Addr)
	require.NoError(t, err)
	require.Len(t, r.Answer, 1)
	require.Equal(t, "mail.elsewhere.example.test.", r.Answer[0].(*dns.MX).Mx)
}
