package testunbound

import (
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/internal/testproc"
)

// RequireEnv names the variable that, set to "1", turns a missing unbound
// from a skip into a failure.
const RequireEnv = "GSLBKIT_REQUIRE_UNBOUND"

// Config is what the resolver does.
type Config struct {
	// Stubs maps each stub zone ("example.test.") to the authority that
	// serves it ("127.0.0.1:port").
	Stubs map[string]string
	// SubnetCache turns on unbound's subnet cache: it sends the client's
	// subnet (cut to /24) to the stub authorities and caches answers per
	// the scope they return.
	SubnetCache bool
	// Ready is a name whose A query must be answered NOERROR with an
	// answer before Start returns; empty: any reply to a SOA query of the
	// first stub zone will do.
	Ready string
	// TrustAnchorFile, when set, makes unbound validate DNSSEC (RFC 4035)
	// from the trust anchors the file holds (DNSKEY or DS records in zone
	// file form), log each validation failure with its reason
	// (val-log-level 2) and attach extended DNS errors (RFC 8914) to its
	// answers.
	TrustAnchorFile string
	// NoQnameMinimisation sends the full name to the stub authorities
	// (RFC 9156 off), as a validator test expects to see it.
	NoQnameMinimisation bool
	// Control enables unbound-control, without certificates, on a free
	// loopback port; Server.Conf is the file it reads (unbound-control -c).
	Control bool

	controlPort int // chosen by Run for Control
}

// Server is a running unbound.
type Server struct {
	// Addr is its address, "127.0.0.1:port".
	Addr string
	// Conf is its configuration file.
	Conf string

	log *testproc.Buffer
}

// Log returns what unbound has written so far.
func (s *Server) Log() string { return s.log.String() }

// Require returns unbound's path; where it is missing it skips t, or
// fails it when RequireEnv is "1". A test calls it first to skip before
// starting anything else.
func Require(t testing.TB) string {
	t.Helper()
	return testproc.Require(t, RequireEnv, "testunbound: unbound is not installed (apt-get install -y unbound)", "unbound")
}

// Start runs unbound with cfg and returns its address, "127.0.0.1:port".
// It calls Require first.
func Start(t testing.TB, cfg Config) string {
	t.Helper()
	return Run(t, cfg).Addr
}

// Run runs unbound with cfg and returns it once it answers; unbound is
// stopped, and waited for, when t ends, and its log is written to t if t
// failed. It calls Require first.
func Run(t testing.TB, cfg Config) *Server {
	t.Helper()
	bin := Require(t)
	if len(cfg.Stubs) == 0 {
		t.Fatal("testunbound: Config.Stubs is empty")
	}
	// A port found free may be taken before unbound binds it: unbound then
	// exits at once, and another port is tried.
	for attempt := 1; ; attempt++ {
		if s := try(t, bin, cfg, attempt == 5); s != nil {
			return s
		}
	}
}

// Render returns the unbound.conf Start writes for cfg, with dir as
// unbound's directory and port as its port.
func (cfg Config) Render(dir string, port int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `server:
  interface: 127.0.0.1
  port: %d
  do-ip6: no
  num-threads: 1
  do-not-query-localhost: no
  access-control: 127.0.0.0/8 allow
  username: ""
  chroot: ""
  directory: "%[2]s"
  pidfile: "%[2]s/unbound.pid"
  use-syslog: no
  logfile: ""
  verbosity: 1
  local-zone: "test." nodefault
`, port, dir)
	zones := slices.Sorted(maps.Keys(cfg.Stubs))
	if cfg.NoQnameMinimisation {
		b.WriteString("  qname-minimisation: no\n")
	}
	if cfg.TrustAnchorFile != "" {
		fmt.Fprintf(&b, "  trust-anchor-file: %q\n  val-log-level: 2\n  ede: yes\n", cfg.TrustAnchorFile)
	}
	if cfg.SubnetCache {
		b.WriteString("  module-config: \"subnetcache validator iterator\"\n  client-subnet-always-forward: yes\n  max-client-subnet-ipv4: 24\n")
		hosts := map[string]bool{}
		for _, z := range zones {
			if h, _, err := net.SplitHostPort(cfg.Stubs[z]); err == nil && !hosts[h] {
				hosts[h] = true
				fmt.Fprintf(&b, "  send-client-subnet: %s\n", h)
			}
		}
	} else if cfg.TrustAnchorFile != "" {
		b.WriteString("  module-config: \"validator iterator\"\n")
	} else {
		b.WriteString("  module-config: \"iterator\"\n")
	}
	if cfg.Control {
		b.WriteString("remote-control:\n  control-enable: yes\n  control-interface: 127.0.0.1\n  control-use-cert: no\n")
		if cfg.controlPort != 0 {
			fmt.Fprintf(&b, "  control-port: %d\n", cfg.controlPort)
		}
	}
	for _, z := range zones {
		host, port, _ := net.SplitHostPort(cfg.Stubs[z])
		fmt.Fprintf(&b, "stub-zone:\n  name: %q\n  stub-addr: %s@%s\n", strings.TrimSuffix(z, "."), host, port)
	}
	return b.String()
}

// ready reports whether the resolver at addr answers as cfg asks.
func (cfg Config) ready(addr string) bool {
	m := new(dns.Msg)
	if cfg.Ready != "" {
		m.SetQuestion(dns.Fqdn(cfg.Ready), dns.TypeA)
	} else {
		m.SetQuestion(dns.Fqdn(slices.Sorted(maps.Keys(cfg.Stubs))[0]), dns.TypeSOA)
	}
	c := &dns.Client{Timeout: 500 * time.Millisecond}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		return false
	}
	return cfg.Ready == "" || r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0
}

// try starts unbound on a free port and waits until it answers; it
// returns nil when unbound exited before answering (the port was taken),
// unless last, when that fails the test.
func try(t testing.TB, bin string, cfg Config, last bool) *Server {
	t.Helper()
	dir := t.TempDir()
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Control {
		if cfg.controlPort, err = testproc.FreePort(); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "unbound.conf")
	if err := os.WriteFile(path, []byte(cfg.Render(dir, port)), 0o600); err != nil {
		t.Fatal(err)
	}
	var log testproc.Buffer
	cmd := exec.Command(bin, "-d", "-c", path)
	cmd.Stdout, cmd.Stderr = &log, &log
	p, err := testproc.Start(cmd)
	if err != nil {
		t.Fatalf("testunbound: start unbound: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // our own child, by PID
		<-p.Done()
		if t.Failed() {
			t.Logf("testunbound: unbound log:\n%s", log.String())
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(30 * time.Second)
	for {
		if cfg.ready(addr) {
			return &Server{Addr: addr, Conf: path, log: &log}
		}
		select {
		case <-p.Done():
			if last {
				t.Fatalf("testunbound: unbound exited:\n%s", log.String())
			}
			t.Logf("testunbound: unbound exited, trying another port:\n%s", log.String())
			return nil
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("testunbound: hang guard: unbound did not answer within 30s:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a real process
	}
}
