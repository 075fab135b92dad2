package zonetransfer_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testdnssec"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// signedXfrProvider holds xfr.test signed online, with names a0..a9.
func signedXfrProvider(t *testing.T) *memory.Provider {
	t.Helper()
	k, err := dnssec.GenerateKey(xfrZone, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 30)
	require.NoError(t, err)
	s, err := dnssec.NewSigner(xfrZone, dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
	require.NoError(t, err)
	p, err := memory.New(memory.DefaultConfig())
	require.NoError(t, err)
	zc := memory.DefaultZoneConfig()
	zc.Signer = s
	require.NoError(t, p.AddZoneWith(xfrZone, zc))
	recs := make([]libdns.Record, 10)
	for i := range recs {
		recs[i] = libdns.Address{Name: fmt.Sprintf("a%d", i), TTL: 30 * time.Second, IP: netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})}
	}
	_, err = p.SetRecords(context.Background(), xfrZone, recs)
	require.NoError(t, err)
	return p
}

// TestSecondariesOfSignedZone runs a real Knot and a real BIND as
// secondaries of a zone the embedded server signs online. By default the
// transfer is refused (REFUSED, counted), so a secondary never holds, let
// alone serves, an unsigned copy of a zone whose parent may hold a DS.
// With TransferConfig.SignedUnsigned the secondary gets the stored records
// without any DNSSEC record, and answers DO queries unsigned: what the
// option is documented to do, for secondaries that serve no validator.
func TestSecondariesOfSignedZone(t *testing.T) {
	for _, kind := range []string{"knot", "bind"} {
		t.Run(kind, func(t *testing.T) {
			p := signedXfrProvider(t)
			srv := startServer(t, p, xfrConfig())
			x := srv.Transfer()
			sec := newSecondary(t, kind, xfrSecret)
			sec.primary = srv.Addr()
			sec.start(t)
			guard := time.NewTimer(30 * time.Second)
			defer guard.Stop()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for x.Stats().Refused == 0 {
				select {
				case <-guard.C:
					t.Fatalf("%s asked for no transfer within 30s", kind)
				case <-tick.C:
				}
			}
			require.True(t, sec.log.Wait(10*time.Second, func(log string) bool {
				return strings.Contains(strings.ToLower(log), "refused")
			}), "the secondary's log shows the refusal")
			_, _, err := sec.serves("a1." + xfrZone)
			require.Error(t, err, "a secondary refused the signed zone serves none of it")
			require.Zero(t, x.Stats().AXFR, "no transfer went out")

			// Told to, the transfer goes out unsigned: a zone DNSSEC
			// checkers reject (no DNSKEY, no RRSIG, no NSEC chain).
			cfg := xfrConfig()
			cfg.SignedUnsigned = true
			cfg.Allow = append(cfg.Allow, zonetransfer.TransferRule{Prefix: netip.MustParsePrefix("127.0.0.1/32")})
			srv2 := startServer(t, p, cfg)
			sec2 := newSecondary(t, kind, xfrSecret)
			sec2.primary = srv2.Addr()
			sec2.start(t)
			soa, err := p.SOA(xfrZone)
			require.NoError(t, err)
			sec2.waitServes(t, soa.Serial, "a1."+xfrZone, "10.0.0.1")
			m := query("a1."+xfrZone, dns.TypeA)
			m.SetEdns0(1232, true)
			r, _, err := (&dns.Client{Net: "udp", Timeout: 2 * time.Second}).Exchange(m, sec2.addr)
			require.NoError(t, err)
			for _, rr := range append(r.Answer, r.Ns...) {
				require.NotEqual(t, dns.TypeRRSIG, rr.Header().Rrtype, "the copy SignedUnsigned transfers holds no signature: %v", r)
			}
			rrs, err := testdnssec.Transfer(xfrZone, srv2.Addr())
			require.NoError(t, err)
			err = testdnssec.CheckZone(t, xfrZone, rrs)
			require.Error(t, err, "kzonecheck and ldns-verify-zone reject the unsigned copy")
			t.Logf("what the secondary got, checked: %v", err)
		})
	}
}
