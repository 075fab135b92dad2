package testdnssec

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
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
	// Dir holds the configurations and the trust anchor files.
	Dir string

	t       testing.TB
	delv    string
	control string
	confs   []string
	root    string
	log     *testproc.Buffer
}

// Log returns what unbound has written so far (verbosity 1, val-log-level 2:
// one line per validation failure, saying why).
func (v *Validator) Log() string { return v.log.String() }

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
	v := &Validator{t: t, delv: bins[2], control: bins[1], Dir: t.TempDir(), root: anchors[0].Header().Name}
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
	zones := make([]string, 0, len(stubs))
	for z := range stubs {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	for _, validating := range []bool{true, false} {
		var lastErr error
		for range 3 { // a port found free may be taken before unbound binds it
			addr, log, err := v.start(zones, stubs, validating)
			if lastErr = err; err == nil {
				if validating {
					v.Addr, v.log = addr, log
				} else {
					v.PlainAddr = addr
				}
				break
			}
		}
		if lastErr != nil {
			t.Fatalf("testdnssec: %v", lastErr)
		}
	}
	return v
}

func (v *Validator) start(zones []string, stubs map[string]string, validating bool) (string, *testproc.Buffer, error) {
	port, err := testproc.FreePort()
	if err != nil {
		return "", nil, err
	}
	cport, err := testproc.FreePort()
	if err != nil {
		return "", nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	name, modules := "validating", "validator iterator"
	if !validating {
		name, modules = "plain", "iterator"
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, `server:
  interface: 127.0.0.1
  port: %[1]d
  do-ip6: no
  num-threads: 1
  do-not-query-localhost: no
  access-control: 127.0.0.0/8 allow
  username: ""
  chroot: ""
  directory: "%[2]s"
  pidfile: "%[2]s/%[4]s.pid"
  use-syslog: no
  logfile: ""
  verbosity: 1
  val-log-level: 2
  ede: yes
  qname-minimisation: no
  module-config: "%[5]s"
  trust-anchor-file: "%[2]s/anchor"
  local-zone: "test." nodefault
remote-control:
  control-enable: yes
  control-interface: 127.0.0.1
  control-port: %[3]d
  control-use-cert: no
`, port, v.Dir, cport, name, modules)
	for _, z := range zones {
		host, p, err := net.SplitHostPort(stubs[z])
		if err != nil {
			return "", nil, fmt.Errorf("stub %s: %w", z, err)
		}
		fmt.Fprintf(&conf, "stub-zone:\n  name: %q\n  stub-addr: %s@%s\n", dns.Fqdn(z), host, p)
	}
	path := filepath.Join(v.Dir, name+".conf")
	if err := os.WriteFile(path, []byte(conf.String()), 0o600); err != nil {
		return "", nil, err
	}
	bin := Require(v.t, "unbound")[0]
	log := &testproc.Buffer{}
	cmd := exec.Command(bin, "-d", "-c", path)
	cmd.Stdout, cmd.Stderr = log, log
	proc, err := testproc.Start(cmd)
	if err != nil {
		return "", nil, err
	}
	if err := v.waitReady(addr, proc); err != nil {
		proc.Stop()
		return "", nil, fmt.Errorf("unbound: %w; log:\n%s", err, log)
	}
	v.confs = append(v.confs, path)
	t := v.t
	t.Cleanup(func() {
		proc.Stop()
		if t.Failed() {
			t.Logf("testdnssec: %s unbound log:\n%s", name, log)
		}
	})
	return addr, log, nil
}

// waitReady asks for the trust anchor's DNSKEY until unbound answers at
// all (any rcode), it exits, or startTimeout passes.
func (v *Validator) waitReady(addr string, proc *testproc.Process) error {
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(v.root, dns.TypeDNSKEY)
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, _, err := c.Exchange(m, addr); err == nil {
			return nil
		}
		select {
		case <-proc.Done():
			return fmt.Errorf("exited before answering on %s", addr)
		case <-deadline.C:
			return fmt.Errorf("did not answer on %s within %v", addr, startTimeout)
		case <-tick.C:
		}
	}
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
