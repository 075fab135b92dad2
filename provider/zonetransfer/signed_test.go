package zonetransfer_test

import (
	"bytes"
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// TestTransferRefusesSignedZone: an online-signed zone is not transferred
// (a secondary would serve it unsigned) unless SignedUnsigned says so.
func TestTransferRefusesSignedZone(t *testing.T) {
	k, err := dnssec.GenerateKey(xfrZone, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 300)
	require.NoError(t, err)
	s, err := dnssec.NewSigner(xfrZone, dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
	require.NoError(t, err)
	p := new(memory.Provider)
	zc := memory.DefaultZoneConfig()
	zc.Signer = s
	require.NoError(t, p.AddZoneWith(xfrZone, zc))
	_, err = p.SetRecords(context.Background(), xfrZone, []libdns.Record{libdns.Address{Name: "a", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")}})
	require.NoError(t, err)
	q := new(dns.Msg)
	q.SetAxfr(xfrZone)
	wire, err := q.Pack()
	require.NoError(t, err)
	for _, allow := range []bool{false, true} {
		cfg := zonetransfer.DefaultTransferConfig()
		cfg.Allow = []zonetransfer.TransferRule{{}}
		cfg.SignedUnsigned = allow
		x, err := zonetransfer.NewTransfer(p, cfg, nil)
		require.NoError(t, err)
		var buf bytes.Buffer
		handled, err := x.ServeTCP(&buf, wire, netip.MustParseAddr("127.0.0.1"), nil)
		require.NoError(t, err)
		require.True(t, handled)
		b := buf.Bytes()
		require.Greater(t, len(b), 2)
		r := new(dns.Msg)
		require.NoError(t, r.Unpack(b[2:2+int(b[0])<<8|int(b[1])]))
		if allow {
			require.Equal(t, dns.RcodeSuccess, r.Rcode)
			require.NotEmpty(t, r.Answer)
		} else {
			require.Equal(t, dns.RcodeRefused, r.Rcode)
			require.Equal(t, uint64(1), x.Stats().Refused)
		}
	}
}
