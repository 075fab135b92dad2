package failover_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/failover"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ips(ss ...string) []netip.Addr {
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func gw(name string, h failover.Health, addrs ...string) failover.Gateway {
	return failover.Gateway{Name: name, Health: h, Addrs: ips(addrs...)}
}

// assertWellFormed checks what every Desired must satisfy: no empty set,
// records of the set's type and name, no set also withdrawn.
func assertWellFormed(t tb, d failover.DesiredState) {
	t.Helper()
	for _, s := range d.Sets {
		require.NotEmpty(t, s.Records, "empty set %s %s", s.Name, s.Type)
		for _, r := range s.Records {
			rr := r.RR()
			require.Equal(t, s.Type, rr.Type, "record type in %s", s.Name)
			require.Equal(t, s.TTL, rr.TTL)
		}
		require.False(t, d.Withdrawn(s.View, s.Name, s.Type), "set and withdraw for %s %s", s.Name, s.Type)
		if s.Type == "CNAME" {
			require.Len(t, s.Records, 1)
			for _, typ := range []string{"A", "AAAA"} {
				_, clash := d.Lookup(s.View, s.Name, typ)
				require.False(t, clash, "CNAME beside %s at %s", typ, s.Name)
			}
		}
	}
}

// tb is what the helpers need from *testing.T and *rapid.T.
type tb interface {
	require.TestingT
	Helper()
}

func addrRecs(ss ...string) []libdns.Record {
	var out []libdns.Record
	for _, s := range ss {
		out = append(out, libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr(s)})
	}
	return out
}

func datas(rs []libdns.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.RR().Data)
	}
	return out
}

// rrsOf keeps an AnswerFunc's records, dropping its scope.
func rrsOf(rrs []libdns.Record, _ int) []libdns.Record { return rrs }
