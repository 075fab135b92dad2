package zonetransfer_test

import (
	"testing"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// xfrServer is a DNS server serving transfers through x.
type xfrServer struct {
	*dnsserver.Server
	x *zonetransfer.Transfer
}

// Transfer returns the server's Transfer.
func (s xfrServer) Transfer() *zonetransfer.Transfer { return s.x }

// startServer runs a DNS server for p on a free port of 127.0.0.1 with
// zone transfers per cfg, until the test ends.
func startServer(t *testing.T, p *memory.Provider, cfg zonetransfer.TransferConfig) xfrServer {
	t.Helper()
	x, err := zonetransfer.NewTransfer(p, cfg, nil)
	require.NoError(t, err)
	sc := dnsserver.DefaultServerConfig()
	sc.Addr = "127.0.0.1:0"
	srv, err := dnsserver.NewServer(p, sc, nil)
	require.NoError(t, err)
	require.NoError(t, srv.SetTransfer(x))
	runServer(t, srv)
	return xfrServer{srv, x}
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}
