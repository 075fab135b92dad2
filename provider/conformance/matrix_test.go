package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/libdns/libdns/libdnstest"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/internal/testmoto"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
	"github.com/gslbkit/gslb/record"
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
			id, err := testmoto.Start(t).Zone(t.Context(), zone)
			if err != nil {
				t.Fatal(err)
			}
			cfg := route53.DefaultConfig()
			cfg.HostedZoneID, cfg.MaxAttempts = id, 1
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
			t.Run("reconciler", func(t *testing.T) { reconcileSteady(t, p) })
		})
	}
}

// reconcileSteady applies a set of two addresses and an SPF record in
// several strings through the reconciler, with its read-back on: the
// first apply writes and reads back what it wrote unchanged, the second
// writes nothing (the strings read back as they were written).
func reconcileSteady(t *testing.T, p full) {
	var rb []record.ReadBackEvent
	obs := record.ObserverFunc(func(e record.Event) {
		if x, ok := e.(record.ReadBackEvent); ok {
			rb = append(rb, x)
		}
	})
	r, err := record.New(p, record.LocalConfig("matrix"), record.Options{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	d := record.Desired{Sets: []record.RRSet{
		{Zone: zone, Name: "gslbrec-www", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1", "192.0.2.2"}},
		{Zone: zone, Name: "gslbrec-www", Type: "TXT", TTL: time.Minute, Values: []string{`"v=spf1 include:a" " include:b ~all"`}},
	}}
	rep, err := r.Apply(context.Background(), d)
	if err != nil {
		t.Fatalf("first apply: %v", err)
	}
	if rep.Writes == 0 {
		t.Errorf("first apply wrote nothing")
	}
	rep, err = r.Apply(context.Background(), d)
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if rep.Writes != 0 || !rep.Changes.Empty() {
		t.Errorf("second apply: %d writes, plan:\n%s", rep.Writes, rep.Changes)
	}
	if len(rb) > 0 {
		t.Errorf("read-back differences: %v", rb[0].Err)
	}
	// Clean up the names (and their owner markers).
	for _, n := range []string{"gslbrec-www", "_gslb-owner.gslbrec-www"} {
		if _, err := p.DeleteRecords(context.Background(), zone, []libdns.Record{libdns.RR{Name: n}}); err != nil {
			t.Errorf("cleanup %s: %v", n, err)
		}
	}
}
