package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
)

// signedAnswer asks z for name/qtype with DO and returns the records of
// the answer section by type, or nil with the rcode when it is not
// NOERROR.
func signedAnswer(z *memory.Provider, name string, qtype uint16) ([]dns.RR, int) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(1232, true)
	r := z.Respond(m, netip.MustParseAddr("192.0.2.99"), true)
	return r.Answer, r.Rcode
}

func hasRRSIG(rrs []dns.RR) bool {
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeRRSIG {
			return true
		}
	}
	return false
}

func dnskeys(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		if k, ok := rr.(*dns.DNSKEY); ok {
			out = append(out, k.PublicKey)
		}
	}
	return out
}

// TestDNSSECControllerAndNodes: a controller with a dnssec block and no
// key files makes one key in <stateDir>/dnssec (0700, .private 0600),
// keeps it across a restart, and signs its answers; two nodes given the
// key files sign the zone replication brings them with the same DNSKEY;
// the signatures metrics count, and no dnssec problem is reported.
func TestDNSSECControllerAndNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := ParseConfig([]byte(withStateDir(syncTestYAML + "dnssec: {validity: 2h}\n")))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		quiet := slog.New(slog.DiscardHandler)
		probes := &fakeProbers{}
		inproc := &inProcess{handlers: map[string]http.Handler{}, down: map[string]bool{}}
		client := &http.Client{Transport: inproc}
		met := newMetrics()
		ctl, err := newController(cfg, deps{prober: probes.prober, client: client}, met, quiet)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(cfg.StateDir, keyDirName)
		st, err := os.Stat(dir)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("key directory: %v, mode %v, want 0700", err, st.Mode().Perm())
		}
		privs, _ := filepath.Glob(filepath.Join(dir, "*.private"))
		if len(privs) != 1 {
			t.Fatalf("key files: %v, want one .private", privs)
		}
		if st, err := os.Stat(privs[0]); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v, want 0600", privs[0], st.Mode().Perm())
		}
		apexKeys, _ := signedAnswer(ctl.zone, "example.test.", dns.TypeDNSKEY)
		want := dnskeys(apexKeys)
		if len(want) != 1 || !hasRRSIG(apexKeys) {
			t.Fatalf("controller's DNSKEY answer: %v", apexKeys)
		}

		// A restart keeps the key.
		again, err := newController(cfg, deps{prober: probes.prober, client: client}, newMetrics(), quiet)
		if err != nil {
			t.Fatal(err)
		}
		rrs, _ := signedAnswer(again.zone, "example.test.", dns.TypeDNSKEY)
		if got := dnskeys(rrs); len(got) != 1 || got[0] != want[0] {
			t.Fatalf("after a restart the DNSKEY is %v, want %v", got, want)
		}

		// Nodes are given the key files.
		inproc.handlers["controller"] = ctl.handler()
		ncfg := cfg
		ncfg.DNSSEC = &DNSSECConfig{Keys: []string{privs[0]}, Validity: cfg.DNSSEC.Validity}
		if err := ncfg.ValidateNode(); err != nil {
			t.Fatal(err)
		}
		var nodes []*node
		var nodeMets []*metrics
		for range 2 {
			nm := newMetrics()
			n, err := newNode(ncfg, client, nm, quiet)
			if err != nil {
				t.Fatal(err)
			}
			nodes, nodeMets = append(nodes, n), append(nodeMets, nm)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = ctl.Run(ctx) })
		for _, n := range nodes {
			wg.Go(func() { _ = n.Run(ctx) })
		}
		defer func() { cancel(); wg.Wait() }()
		for start := time.Now(); ; {
			done := true
			for _, n := range nodes {
				if rrs, _ := signedAnswer(n.zone, "app.example.test.", dns.TypeA); len(rrs) == 0 {
					done = false
				}
			}
			if done {
				break
			}
			if time.Since(start) > 10*time.Minute {
				t.Fatal("the nodes never answered app.example.test.")
			}
			time.Sleep(time.Second)
			synctest.Wait()
		}
		for i, n := range nodes {
			rrs, _ := signedAnswer(n.zone, "app.example.test.", dns.TypeA)
			if !hasRRSIG(rrs) {
				t.Errorf("node %d answers unsigned: %v", i, rrs)
			}
			rrs, _ = signedAnswer(n.zone, "example.test.", dns.TypeDNSKEY)
			if got := dnskeys(rrs); len(got) != 1 || got[0] != want[0] {
				t.Errorf("node %d's DNSKEY is %v, want the controller's %v", i, got, want)
			}
			for _, p := range nodeMets[i].ready.evaluate(time.Now()) {
				if strings.HasPrefix(p.Name, "dnssec") {
					t.Errorf("node %d: problem %s: %s", i, p.Name, p.Detail)
				}
			}
		}
		for _, p := range met.ready.evaluate(time.Now()) {
			if strings.HasPrefix(p.Name, "dnssec") {
				t.Errorf("controller: problem %s: %s", p.Name, p.Detail)
			}
		}
		fams, err := met.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		made := -1.0
		for _, f := range fams {
			if f.GetName() != "gslbkit_dnssec_signatures_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				if m.GetLabel()[0].GetValue() == "made" {
					made = m.GetCounter().GetValue()
				}
			}
		}
		if made < 1 {
			t.Errorf("gslbkit_dnssec_signatures_total{result=\"made\"} = %v, want at least 1", made)
		}
	})
}

// TestDNSSECConfigErrors: the dnssec block's mistakes are config errors
// naming the field, and a private key open to others is refused at start.
func TestDNSSECConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, field string
		node              bool
	}{
		{"algorithm", "dnssec: {algorithm: rsasha256}\n", "dnssec.algorithm", false},
		{"validity", "dnssec: {validity: 10m}\n", "dnssec.validity", false},
		{"node without key files", "dnssec: {}\n", "dnssec.keys", true},
		{"no keys and no stateDir", "stateDir: \"\"\ndnssec: {}\n", "dnssec.keys", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(withStateDir(syncTestYAML + tc.yaml)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.node {
				err = cfg.ValidateNode()
			} else {
				err = cfg.Validate()
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path != tc.field || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("got %v, want a config error at %s", err, tc.field)
			}
		})
	}
	t.Run("private key readable by others", func(t *testing.T) {
		cfg, err := ParseConfig([]byte(withStateDir(syncTestYAML + "dnssec: {}\n")))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, err := newController(cfg, deps{}, newMetrics(), nil); err != nil {
			t.Fatal(err)
		}
		privs, _ := filepath.Glob(filepath.Join(cfg.StateDir, keyDirName, "*.private"))
		if len(privs) != 1 {
			t.Fatalf("key files: %v", privs)
		}
		if err := os.Chmod(privs[0], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := newController(cfg, deps{}, newMetrics(), nil); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("a .private file of mode 0644: %v, want a refusal saying chmod 600", err)
		}
	})
}
