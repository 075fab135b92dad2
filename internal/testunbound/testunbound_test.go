package testunbound_test

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/internal/testunbound"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// authority serves example.test.: "who.example.test." answers the
// client subnet it was sent (10.<a>.<b>.1 for a.b/16; 192.0.2.1 without
// one) with that scope, "ready" answers 192.0.2.53.
func authority(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Authoritative = true
		name := q.Question[0].Name
		ip := "192.0.2.53"
		if name == "who.example.test." {
			ip = "192.0.2.1"
			if o := q.IsEdns0(); o != nil {
				for _, opt := range o.Option {
					if s, ok := opt.(*dns.EDNS0_SUBNET); ok && s.Family == 1 {
						a := netip.AddrFrom4([4]byte(s.Address.To4()))
						ip = netip.AddrFrom4([4]byte{10, a.As4()[1], a.As4()[2], 1}).String()
						s.SourceScope = s.SourceNetmask
						m.SetEdns0(1232, false)
						m.IsEdns0().Option = append(m.IsEdns0().Option, s)
					}
				}
			}
		}
		rr, _ := dns.NewRR(name + " 300 IN A " + ip)
		m.Answer = append(m.Answer, rr)
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

func ask(t *testing.T, resolver string, subnet netip.Prefix) string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("who.example.test.", dns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1,
		SourceNetmask: uint8(subnet.Bits()), Address: subnet.Addr().AsSlice()})
	r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, resolver)
	require.NoError(t, err)
	require.Len(t, r.Answer, 1, "%v", r)
	return r.Answer[0].(*dns.A).A.String()
}

// With the subnet cache, each client subnet gets the answer chosen for
// it, also from the cache; without, the resolver sends no subnet and
// every client gets the one answer.
func TestSubnetCache(t *testing.T) {
	auth := authority(t)
	ecs := testunbound.Start(t, testunbound.Config{Stubs: map[string]string{"example.test.": auth}, SubnetCache: true, Ready: "ready.example.test."})
	plain := testunbound.Start(t, testunbound.Config{Stubs: map[string]string{"example.test.": auth}})
	for range 2 { // the second round comes from unbound's cache
		assert.Equal(t, "10.1.2.1", ask(t, ecs, netip.MustParsePrefix("10.1.2.0/24")))
		assert.Equal(t, "10.7.8.1", ask(t, ecs, netip.MustParsePrefix("10.7.8.0/24")))
		assert.Equal(t, "192.0.2.1", ask(t, plain, netip.MustParsePrefix("10.1.2.0/24")))
		assert.Equal(t, "192.0.2.1", ask(t, plain, netip.MustParsePrefix("10.7.8.0/24")))
	}
}
