package testbind

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/miekg/dns"
)

// RequireEnv is the environment variable that makes a missing named a
// test failure instead of a skip.
const RequireEnv = "GSLBKIT_REQUIRE_BIND"

// startTimeout bounds how long Start waits for named to answer.
const startTimeout = 30 * time.Second

// Server is a running named serving one zone.
type Server struct {
	// Addr is named's address, "127.0.0.1:port", for UDP and TCP.
	Addr string
	// Zone is the zone it serves, fully qualified ("example.test.").
	Zone string
	// KeyName, KeyAlg and Secret are the TSIG key that may update and
	// transfer the zone: KeyName "gslb-key", KeyAlg "hmac-sha256", Secret
	// base64.
	KeyName, KeyAlg, Secret string
	// Dir is the temporary directory holding the configuration, the zone
	// file and its journal; it stays across runs, so a restarted named
	// serves the zone as it was when it stopped.
	Dir string

	named string
	proc  *testproc.Process
	log   *testproc.Buffer
}

// Log returns what named has written so far (it runs with -g, logging to
// stderr).
func (s *Server) Log() string { return s.log.String() }

// Find returns the path of named, or "" when it is not installed.
func Find() string { return testproc.Find("named") }

// Start runs named for zone (e.g. "example.test.") and returns once it
// answers the zone's SOA. The zone holds an SOA, an apex NS "ns1" and its
// glue A 127.0.0.1; check-integrity is off, so an update may add an MX or
// SRV whose target has no address record (libdnstest writes such records).
// named is stopped, and waited for, in t.Cleanup, and its log is written
// to t if t failed.
func Start(t testing.TB, zone string) *Server {
	t.Helper()
	named := testproc.Require(t, RequireEnv, "testbind: named (BIND 9) is not installed; install bind9 (apt-get install -y bind9 bind9-utils) to run this test", "named")
	zone = dns.Fqdn(strings.ToLower(zone))
	var lastErr error
	// A port found free may be taken before named binds it: try a few.
	for range 3 {
		s, err := start(t, named, zone)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("testbind: %v", lastErr)
	return nil
}

func start(t testing.TB, named, zone string) (*Server, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	port, err := testproc.FreePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Zone:    zone,
		KeyName: "gslb-key",
		KeyAlg:  "hmac-sha256",
		Secret:  base64.StdEncoding.EncodeToString(secret),
		Dir:     t.TempDir(),
		named:   named,
		log:     &testproc.Buffer{},
	}
	if err := s.writeFiles(port); err != nil {
		return nil, err
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("testbind: named log:\n%s", s.Log())
		}
	})
	return s, nil
}

// Run runs named again after Stop, on the same port with the same files
// (the zone as it was, with its journal), and returns once it answers the
// zone's SOA; a named that exits first, or does not answer within 30
// seconds, fails t. A test stops and runs named to see a server outage.
func (s *Server) Run(t testing.TB) {
	t.Helper()
	if err := s.run(); err != nil {
		t.Fatalf("testbind: %v", err)
	}
}

func (s *Server) run() error {
	args := []string{"-g", "-c", filepath.Join(s.Dir, "named.conf")}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root")
	}
	cmd := exec.Command(s.named, args...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = s.log, s.log
	var err error
	if s.proc, err = testproc.Start(cmd); err != nil {
		return fmt.Errorf("start %s: %w", s.named, err)
	}
	if err := s.waitReady(); err != nil {
		s.Stop()
		return fmt.Errorf("%w; named log:\n%s", err, s.Log())
	}
	return nil
}

func (s *Server) writeFiles(port int) error {
	origin := strings.TrimSuffix(s.Zone, ".")
	conf := fmt.Sprintf(`key "%[1]s" { algorithm %[2]s; secret "%[3]s"; };
options {
  directory "%[4]s";
  pid-file "%[4]s/named.pid";
  listen-on port %[5]d { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
};
controls { };
zone "%[6]s" {
  type primary;
  file "%[4]s/zone.db";
  check-integrity no;
  allow-update { key "%[1]s"; };
  allow-transfer { key "%[1]s"; };
};
`, s.KeyName, s.KeyAlg, s.Secret, s.Dir, port, origin)
	zoneFile := fmt.Sprintf(`$ORIGIN %[1]s
$TTL 30
@   IN SOA ns1.%[1]s hostmaster.%[1]s 1 60 60 600 30
@   IN NS  ns1.%[1]s
ns1 IN A   127.0.0.1
`, s.Zone)
	if err := os.WriteFile(filepath.Join(s.Dir, "named.conf"), []byte(conf), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, "zone.db"), []byte(zoneFile), 0o644)
}

// waitReady queries the SOA until named answers it authoritatively, named
// exits, or startTimeout passes.
func (s *Server) waitReady() error {
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(s.Zone, dns.TypeSOA)
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		r, _, err := c.Exchange(m, s.Addr)
		if err == nil && r.Rcode == dns.RcodeSuccess && r.Authoritative && len(r.Answer) > 0 {
			return nil
		}
		select {
		case <-s.proc.Done():
			return errors.New("named exited before answering")
		case <-deadline.C:
			return fmt.Errorf("named did not answer the SOA of %s on %s within %v", s.Zone, s.Addr, startTimeout)
		case <-tick.C:
		}
	}
}

// Stop stops named (SIGTERM, then SIGKILL after 10 seconds) and waits for
// it; stopping a named that is not running does nothing.
func (s *Server) Stop() { s.proc.Stop() }
