package conformance_test

import (
	"testing"

	"github.com/libdns/libdns"
	"github.com/libdns/libdns/libdnstest"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const zone = "example.test."

// full is what libdnstest needs: the four libdns record interfaces.
type full interface {
	provider.Provider
	libdns.RecordAppender
}

// row is one provider of the matrix: how to get it, and where it differs
// from the strict reading of the libdns contract.
type row struct {
	name string
	make func(t *testing.T) full
	caps providertest.Capabilities
	// skip are the record types libdnstest must not write there.
	skip map[string]bool
}

func rows() []row {
	return []row{
		{name: "memory", make: func(t *testing.T) full {
			p := new(memory.Provider)
			if err := p.AddZone(zone); err != nil {
				t.Fatal(err)
			}
			return p
		}, caps: providertest.Capabilities{CNAMEBesideData: providertest.Accept, ApexCNAME: providertest.Refuse}},
		// BIND ignores a CNAME beside other data (and at the apex) without
		// an error: the update succeeds and changes nothing.
		{name: "bind", make: func(t *testing.T) full { return rfc(t, startBIND(t, zone)) },
			caps: providertest.Capabilities{CNAMEBesideData: providertest.Ignore, ApexCNAME: providertest.Ignore}},
		{name: "knot", make: func(t *testing.T) full { return rfc(t, startKnot(t, zone)) },
			caps: providertest.Capabilities{CNAMEBesideData: providertest.Ignore, ApexCNAME: providertest.Ignore}},
		// PowerDNS refuses (REFUSED) a CNAME beside other data and at the
		// apex. It does not apply the deletion of one SVCB/HTTPS record of
		// a set, which libdnstest's DeleteRecords does: the adapter
		// replaces such a set by what stays instead.
		{name: "pdns", make: func(t *testing.T) full { return rfc(t, startPDNS(t, zone)) },
			caps: providertest.Capabilities{CNAMEBesideData: providertest.Refuse, ApexCNAME: providertest.Refuse}},
		// moto accepts a CNAME beside other data and at the apex (Route 53
		// refuses both).
		{name: "route53-moto", make: func(t *testing.T) full {
			s := startMoto(t, zone)
			cfg := route53.DefaultConfig()
			cfg.HostedZoneID, cfg.Region, cfg.AccessKeyID, cfg.SecretAccessKey = s.zoneID, "us-east-1", "testing", "testing"
			cfg.MaxAttempts = 1
			p, err := route53.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, caps: providertest.Capabilities{CNAMEBesideData: providertest.Accept, ApexCNAME: providertest.Accept}},
	}
}

func rfc(t *testing.T, s *server) full {
	t.Helper()
	cfg := rfc2136.DefaultConfig()
	cfg.Server, cfg.KeyName, cfg.KeyAlg, cfg.Secret = s.addr, s.keyName, "hmac-sha256", s.secret
	p, err := rfc2136.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMatrix runs gslbkit's suite and libdns's on every provider, each
// against its own server.
func TestMatrix(t *testing.T) {
	for _, r := range rows() {
		t.Run(r.name, func(t *testing.T) {
			p := r.make(t)
			t.Run("providertest", func(t *testing.T) { providertest.Run(t, p, zone, r.caps) })
			t.Run("libdnstest", func(t *testing.T) {
				s := libdnstest.NewTestSuite(libdnstest.WrapNoZoneLister(p), zone)
				s.SkipRRTypes = r.skip
				s.RunTests(t)
			})
		})
	}
}
