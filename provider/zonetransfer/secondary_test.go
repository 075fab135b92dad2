package zonetransfer_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/internal/testknot"
	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/miekg/dns"
)

// secondary is a real Knot (knotd, run by internal/testknot) or BIND
// (named) following xfrZone from a primary on loopback, signing its
// requests with a TSIG key. It keeps its directory (zone copy, journal)
// across stop and start, so a restarted secondary resumes from the serial
// it held.
type secondary struct {
	kind    string // "knot" or "bind"
	addr    string
	primary string // host:port
	log     *testproc.Buffer
	knot    *testknot.Server // kind "knot"

	// kind "bind":
	bin    string
	port   int
	dir    string
	secret string
	proc   *testproc.Process
}

// newSecondary prepares a secondary of kind on a free port; start runs it.
// secret is the TSIG secret it signs with (xfrSecret for the right one).
// Where kind is not installed the test is skipped, or fails when the
// matching GSLBKIT_REQUIRE_* is 1, as in CI.
func newSecondary(t *testing.T, kind, secret string) *secondary {
	t.Helper()
	if kind == "knot" {
		k := testknot.New(t, testknot.Config{Zone: xfrZone, KeyName: xfrKeyName, Secret: secret})
		return &secondary{kind: kind, addr: k.Addr, log: k.Log, knot: k}
	}
	bin := testproc.Require(t, testbind.RequireEnv, "bind is not installed; install bind9 (apt-get install -y bind9) to run this test", "named")
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &secondary{kind: kind, bin: bin, port: port, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: t.TempDir(), secret: secret, log: &testproc.Buffer{}}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("%s log:\n%s", s.kind, s.log.String())
		}
	})
	return s
}

// config returns named's configuration and arguments.
func (s *secondary) config() (string, []string) {
	zone := strings.TrimSuffix(xfrZone, ".")
	ph, pp, _ := net.SplitHostPort(s.primary)
	args := []string{"-g", "-c", filepath.Join(s.dir, "conf")}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root")
	}
	return fmt.Sprintf(`key "%[1]s" { algorithm hmac-sha256; secret "%[2]s"; };
options {
  directory "%[3]s";
  pid-file "%[3]s/named.pid";
  listen-on port %[4]d { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
  min-refresh-time 1; max-refresh-time 2;
  min-retry-time 1; max-retry-time 2;
};
controls { };
zone "%[5]s" {
  type secondary;
  primaries { %[6]s port %[7]s key "%[1]s"; };
  file "%[3]s/%[5]s.db";
};
`, strings.TrimSuffix(xfrKeyName, "."), s.secret, s.dir, s.port, zone, ph, pp), args
}

// start runs the secondary (again, after stop) and returns once it answers
// on its port (with or without the zone).
func (s *secondary) start(t *testing.T) {
	t.Helper()
	if s.knot != nil {
		s.knot.Config.Primary = s.primary
		s.knot.Run(t)
		return
	}
	conf, args := s.config()
	if err := os.WriteFile(filepath.Join(s.dir, "conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = s.log, s.log
	var err error
	if s.proc, err = testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	c := &dns.Client{Net: "udp", Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(xfrZone, dns.TypeSOA)
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, _, err := c.Exchange(m, s.addr); err == nil {
			return
		}
		select {
		case <-s.proc.Done():
			t.Fatalf("%s exited before answering:\n%s", s.kind, s.log.String())
		case <-guard.C:
			t.Fatalf("%s did not answer on %s within 30s", s.kind, s.addr)
		case <-tick.C:
		}
	}
}

func (s *secondary) stop() {
	if s.knot != nil {
		s.knot.Stop()
		return
	}
	s.proc.Stop()
}

// waitSaved returns once a BIND secondary has written its copy of the zone
// to its file (named dumps it a moment after the first transfer; a stop
// before that restarts it with no zone, and it catches up by AXFR, not
// IXFR). Knot keeps its journal itself: nothing to wait for.
func (s *secondary) waitSaved(t *testing.T) {
	t.Helper()
	if s.kind != "bind" {
		return
	}
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if files, _ := filepath.Glob(filepath.Join(s.dir, "*.db")); len(files) > 0 {
			if fi, err := os.Stat(files[0]); err == nil && fi.Size() > 0 {
				return
			}
		}
		select {
		case <-guard.C:
			t.Fatalf("bind did not write its copy of the zone within 30s:\n%s", s.log.String())
		case <-tick.C:
		}
	}
}

// serves reports the secondary's serial for the zone and the A records of
// name (lower case), or an error while it does not serve the zone.
func (s *secondary) serves(name string) (uint32, []string, error) {
	c := &dns.Client{Net: "udp", Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(xfrZone, dns.TypeSOA)
	r, _, err := c.Exchange(m, s.addr)
	if err != nil {
		return 0, nil, err
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		return 0, nil, fmt.Errorf("SOA: %s", dns.RcodeToString[r.Rcode])
	}
	serial := r.Answer[0].(*dns.SOA).Serial
	m.SetQuestion(name, dns.TypeA)
	r, _, err = c.Exchange(m, s.addr)
	if err != nil {
		return serial, nil, err
	}
	var as []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			as = append(as, a.A.String())
		}
	}
	return serial, as, nil
}

// waitServes polls the secondary until it serves serial and, for name, the
// address want; it fails after 30 s (a hang guard) and returns how long it
// took.
func (s *secondary) waitServes(t *testing.T, serial uint32, name, want string) time.Duration {
	t.Helper()
	start := time.Now()
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		got, as, err := s.serves(name)
		if err == nil && got == serial && len(as) == 1 && as[0] == want {
			return time.Since(start)
		}
		last = fmt.Sprintf("serial %d, %s %v, err %v", got, name, as, err)
		select {
		case <-guard.C:
			t.Fatalf("%s did not serve serial %d with %s A %s within 30s; last: %s", s.kind, serial, name, want, last)
		case <-tick.C:
		}
	}
}
