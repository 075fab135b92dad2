package testdnssec

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testunbound"
	"github.com/miekg/dns"
)

// Validator is a validating unbound on a loopback port.
type Validator struct {
	// Addr is the validating unbound's address, "127.0.0.1:port".
	Addr string
	// PlainAddr is a second, non-validating unbound (same stub zones)
	// that delv uses as its recursive resolver: delv sends no CD bit, so
	// behind the validating one it would only see its SERVFAILs.
	PlainAddr string
	// Dir holds the trust anchor files (unbound's and delv's).
	Dir string

	delv    string
	control string
	confs   []string
	root    string
	server  *testunbound.Server
}

// Log returns what unbound has written so far (verbosity 1, val-log-level 2:
// one line per validation failure, saying why).
func (v *Validator) Log() string { return v.server.Log() }

// StartValidator runs unbound validating with the given trust anchors
// (DNSKEY or DS records; root is the name delv treats as the root of
// trust, the anchors' owner) and one stub zone per entry of stubs (zone →
// "127.0.0.1:port"). It returns once unbound answers; unbound is stopped,
// and waited for, in t.Cleanup.
func StartValidator(t testing.TB, anchors []dns.RR, stubs map[string]string) *Validator {
	t.Helper()
	bins := Require(t, "unbound", "unbound-control", "delv")
	if len(anchors) == 0 {
		t.Fatal("testdnssec: StartValidator needs a trust anchor")
	}
	v := &Validator{delv: bins[2], control: bins[1], Dir: t.TempDir(), root: anchors[0].Header().Name}
	var ta, delvTA strings.Builder
	delvTA.WriteString("trust-anchors {\n")
	for _, rr := range anchors {
		ta.WriteString(rr.String() + "\n")
		switch a := rr.(type) {
		case *dns.DNSKEY:
			fmt.Fprintf(&delvTA, "  %q static-key %d %d %d %q;\n", a.Hdr.Name, a.Flags, a.Protocol, a.Algorithm, a.PublicKey)
		case *dns.DS:
			fmt.Fprintf(&delvTA, "  %q static-ds %d %d %d %q;\n", a.Hdr.Name, a.KeyTag, a.Algorithm, a.DigestType, a.Digest)
		default:
			t.Fatalf("testdnssec: a trust anchor is a DNSKEY or a DS, not %s", rr)
		}
	}
	delvTA.WriteString("};\n")
	if err := os.WriteFile(filepath.Join(v.Dir, "anchor"), []byte(ta.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.Dir, "delv.anchor"), []byte(delvTA.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, validating := range []bool{true, false} {
		cfg := testunbound.Config{Stubs: stubs, NoQnameMinimisation: true, Control: true}
		if validating {
			cfg.TrustAnchorFile = filepath.Join(v.Dir, "anchor")
		}
		u := testunbound.Run(t, cfg)
		v.confs = append(v.confs, u.Conf)
		if validating {
			v.Addr, v.server = u.Addr, u
		} else {
			v.PlainAddr = u.Addr
		}
	}
	return v
}

// Answer is what unbound said to one query.
type Answer struct {
	// Msg is the reply.
	Msg *dns.Msg
	// Rcode is its rcode (NXDOMAIN restored from the extended rcode too).
	Rcode int
	// AD is the Authenticated Data bit: unbound validated the answer.
	AD bool
	// Reason is, when unbound answered SERVFAIL, its extended DNS error
	// (code and text) and the validation-failure lines its log holds for
	// the name; "" otherwise.
	Reason string
}

// Secure reports whether the answer validated: AD set and no error other
// than NXDOMAIN.
func (a Answer) Secure() bool {
	return a.AD && (a.Rcode == dns.RcodeSuccess || a.Rcode == dns.RcodeNameError)
}

func (a Answer) String() string {
	s := fmt.Sprintf("%s ad=%v", dns.RcodeToString[a.Rcode], a.AD)
	if a.Reason != "" {
		s += " reason: " + a.Reason
	}
	return s
}

// Query asks unbound for name/qtype with RD and DO set.
func (v *Validator) Query(t testing.TB, name string, qtype uint16) Answer {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.SetEdns0(1232, true)
	c := &dns.Client{Net: "udp", Timeout: 10 * time.Second, UDPSize: 1232}
	r, _, err := c.Exchange(m, v.Addr)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.Exchange(m, v.Addr)
	}
	if err != nil {
		t.Fatalf("testdnssec: query %s %s: %v", name, dns.TypeToString[qtype], err)
	}
	a := Answer{Msg: r, Rcode: r.Rcode, AD: r.AuthenticatedData}
	if a.Rcode == dns.RcodeServerFailure {
		var why []string
		if opt := r.IsEdns0(); opt != nil {
			for _, o := range opt.Option {
				if e, ok := o.(*dns.EDNS0_EDE); ok {
					why = append(why, fmt.Sprintf("EDE %d (%s) %s", e.InfoCode, dns.ExtendedErrorCodeToString[e.InfoCode], e.ExtraText))
				}
			}
		}
		for _, line := range strings.Split(v.Log(), "\n") {
			if strings.Contains(line, "validation failure") && strings.Contains(strings.ToLower(line), strings.ToLower(strings.TrimSuffix(name, "."))) {
				why = append(why, strings.TrimSpace(line))
			}
		}
		a.Reason = strings.Join(why, "; ")
	}
	return a
}

// Flush drops zone and everything under it from both unbounds' caches
// (records, keys, negative answers, bogus marks), standing in for TTLs
// running out.
func (v *Validator) Flush(t testing.TB, zone string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for _, conf := range v.confs {
		// flush_zone drops the zone's RRsets, messages (negative and
		// bogus ones too) and keys.
		cmd := exec.CommandContext(ctx, v.control, "-c", conf, "flush_zone", dns.Fqdn(zone))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("testdnssec: unbound-control flush_zone %s: %v\n%s", zone, err, out)
		}
	}
}
