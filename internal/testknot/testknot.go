package testknot

import (
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

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/internal/testproc"
)

// RequireEnv is the environment variable that makes a missing knotd a
// test failure instead of a skip.
const RequireEnv = "GSLBKIT_REQUIRE_KNOT"

// readyTimeout bounds how long a start waits for knotd to answer (a hang
// guard, not a speed assertion).
const readyTimeout = 30 * time.Second

// Config is the zone knotd serves.
type Config struct {
	// Zone is the zone, "example.test." (the trailing dot is optional).
	Zone string
	// ZoneText is the zone file of a primary, written at each Run. Unless
	// Updates is set, knotd keeps no journal and never writes the file
	// back.
	ZoneText string
	// Updates makes a primary updatable: the holder of the key KeyName
	// and Secret may change the zone by RFC 2136 UPDATE and transfer it.
	// knotd keeps the changes in its journal in Dir (never in the zone
	// file), and Run writes ZoneText only when Dir holds no zone file yet,
	// so a Run after Stop serves the zone as it was when knotd stopped.
	Updates bool
	// Primary, "host:port", makes knotd a secondary of Zone: it transfers
	// the zone from Primary, signing with KeyName and Secret, and takes
	// NOTIFY from Primary's host. ZoneText and Updates are then unused.
	Primary string
	// KeyName and Secret (base64) are the hmac-sha256 TSIG key of a
	// secondary, or of an updatable primary's clients.
	KeyName, Secret string
}

// Render returns the knot.conf written for cfg, with dir as knotd's
// directory and port as its port on 127.0.0.1.
func (cfg Config) Render(dir string, port int) string {
	zone := strings.TrimSuffix(cfg.Zone, ".")
	key := strings.TrimSuffix(cfg.KeyName, ".")
	var b strings.Builder
	fmt.Fprintf(&b, `server:
    listen: 127.0.0.1@%[1]d
    rundir: %[2]s
log:
  - target: stderr
    any: info
database:
    storage: %[2]s
`, port, dir)
	if cfg.Primary != "" || cfg.Updates {
		fmt.Fprintf(&b, `key:
  - id: %s
    algorithm: hmac-sha256
    secret: %s
`, key, cfg.Secret)
	}
	if cfg.Primary != "" {
		host, port2, _ := net.SplitHostPort(cfg.Primary)
		fmt.Fprintf(&b, `remote:
  - id: primary
    address: %[3]s@%[4]s
    key: %[5]s
acl:
  - id: notify
    address: %[3]s
    action: notify
template:
  - id: default
    storage: %[1]s
zone:
  - domain: %[2]s
    master: primary
    acl: notify
    file: %[1]s/zone.db
`, dir, zone, host, port2, key)
	} else { // a primary, journaling its changes if it takes updates
		journal, acl := "none", ""
		if cfg.Updates {
			fmt.Fprintf(&b, `acl:
  - id: update
    key: %s
    action: [transfer, update]
`, key)
			journal, acl = "changes", "\n    acl: update"
		}
		fmt.Fprintf(&b, `template:
  - id: default
    storage: %[1]s
    zonefile-sync: -1
    journal-content: %[3]s
zone:
  - domain: %[2]s
    file: %[1]s/zone.db%[4]s
`, dir, zone, journal, acl)
	}
	return b.String()
}

// Server is a knotd for one test.
type Server struct {
	// Config is what Run serves; a test may change it between runs (a
	// secondary's Primary, once the primary has its address).
	Config Config
	// Addr is knotd's address, "127.0.0.1:port", for UDP and TCP; it
	// stays the same across runs.
	Addr string
	// Dir is the temporary directory holding the configuration, the zone
	// file and knotd's journal and timers; it stays across runs, so a
	// restarted secondary resumes from the serial it held, and a restarted
	// updatable primary from its changes.
	Dir string
	// Log is what knotd writes (stderr, info level), across runs.
	Log *testproc.Buffer

	bin  string
	port int
	proc *testproc.Process
}

// Find returns the path of knotd, or "" when it is not installed.
func Find() string { return testproc.Find("knotd") }

// Require returns knotd's path; where it is missing it skips t, or fails
// it when RequireEnv is "1". A test calls it first to skip before starting
// anything else.
func Require(t testing.TB) string {
	t.Helper()
	return testproc.Require(t, RequireEnv, "testknot: knotd (Knot DNS) is not installed; install knot (apt-get install -y knot) to run this test", "knotd")
}

// Start runs knotd for cfg and returns once it answers (see Run). A port
// found free may be taken before knotd binds it: Start tries a few.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	bin := Require(t)
	var last error
	for range 3 {
		s, err := newServer(t, bin, cfg)
		if err != nil {
			t.Fatalf("testknot: %v", err)
		}
		if last = s.run(); last == nil {
			s.cleanup(t)
			return s
		}
	}
	t.Fatalf("testknot: %v", last)
	return nil
}

// New prepares a knotd for cfg on a free port and a fresh directory,
// without running it: a test that needs knotd's address first (to send it
// NOTIFY) runs it later with Run. knotd is stopped, and waited for, when t
// ends, and its log is written to t if t failed. It calls Require first.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := newServer(t, Require(t), cfg)
	if err != nil {
		t.Fatalf("testknot: %v", err)
	}
	s.cleanup(t)
	return s
}

func newServer(t testing.TB, bin string, cfg Config) (*Server, error) {
	port, err := testproc.FreePort()
	if err != nil {
		return nil, err
	}
	return &Server{Config: cfg, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: t.TempDir(),
		Log: &testproc.Buffer{}, bin: bin, port: port}, nil
}

func (s *Server) cleanup(t testing.TB) {
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("testknot: knotd log:\n%s", s.Log.String())
		}
	})
}

// Run runs knotd (again, after Stop) with s.Config and returns once it
// answers the zone's SOA: a primary authoritatively, a secondary with any
// reply (it may not hold the zone yet). A knotd that exits first, or does
// not answer within 30 seconds, fails t.
func (s *Server) Run(t testing.TB) {
	t.Helper()
	if err := s.run(); err != nil {
		t.Fatalf("testknot: %v", err)
	}
}

func (s *Server) run() error {
	conf := filepath.Join(s.Dir, "knot.conf")
	if err := os.WriteFile(conf, []byte(s.Config.Render(s.Dir, s.port)), 0o600); err != nil {
		return err
	}
	if err := s.writeZone(); err != nil {
		return err
	}
	cmd := exec.Command(s.bin, "-c", conf)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	var err error
	if s.proc, err = testproc.Start(cmd); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	if err := s.waitReady(); err != nil {
		s.Stop()
		return fmt.Errorf("%w; knotd log:\n%s", err, s.Log.String())
	}
	return nil
}

// writeZone writes a primary's zone file: at every run, or for an
// updatable primary only at the first (its journal holds the changes made
// since, on top of that file).
func (s *Server) writeZone() error {
	if s.Config.Primary != "" {
		return nil
	}
	file := filepath.Join(s.Dir, "zone.db")
	if s.Config.Updates {
		if _, err := os.Stat(file); err == nil {
			return nil
		}
	}
	return os.WriteFile(file, []byte(s.Config.ZoneText), 0o644)
}

// waitReady queries the SOA until knotd answers as Run says, knotd exits,
// or readyTimeout passes.
func (s *Server) waitReady() error {
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(s.Config.Zone), dns.TypeSOA)
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		r, _, err := c.Exchange(m, s.Addr)
		if err == nil && (s.Config.Primary != "" || r.Authoritative && len(r.Answer) == 1) {
			return nil
		}
		select {
		case <-s.proc.Done():
			return errors.New("knotd exited before answering")
		case <-deadline.C:
			return fmt.Errorf("knotd did not answer the SOA of %s on %s within %v", s.Config.Zone, s.Addr, readyTimeout)
		case <-tick.C:
		}
	}
}

// Stop stops knotd (SIGTERM, then SIGKILL after 10 seconds) and waits for
// it; stopping a knotd that is not running does nothing.
func (s *Server) Stop() { s.proc.Stop() }
