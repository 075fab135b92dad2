package memory_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/miekg/dns"
)

// knotRequireEnv makes a missing knotd a test failure instead of a skip
// (.ci/run sets it).
const knotRequireEnv = "GSLBKIT_REQUIRE_KNOT"

// knotServer is a knotd serving one zone file on 127.0.0.1.
type knotServer struct {
	addr string
	dir  string
	proc *testproc.Process
	log  *testproc.Buffer
}

// findKnotd returns knotd's path, or "".
func findKnotd() string {
	if p, err := exec.LookPath("knotd"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/knotd", "/usr/local/sbin/knotd"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// startKnot runs knotd for zone (fully qualified) with the zone file text
// and returns once it answers the zone's SOA; knotd is stopped in
// t.Cleanup. Without knotd the test is skipped, or fails when
// GSLBKIT_REQUIRE_KNOT=1.
func startKnot(t *testing.T, zone, zoneText string) *knotServer {
	t.Helper()
	knotd := findKnotd()
	if knotd == "" {
		msg := "knotd (Knot DNS) is not installed; install knot (apt-get install -y knot) to run this test"
		if os.Getenv(knotRequireEnv) == "1" {
			t.Fatalf("%s (%s=1 requires it)", msg, knotRequireEnv)
		}
		t.Skip(msg)
	}
	var last error
	for range 3 { // the free port may be taken between the check and knotd's bind
		s, err := tryStartKnot(t, knotd, zone, zoneText)
		if err == nil {
			return s
		}
		last = err
	}
	t.Fatalf("start knotd: %v", last)
	return nil
}

func tryStartKnot(t *testing.T, knotd, zone, zoneText string) (*knotServer, error) {
	port, err := testproc.FreePort()
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	s := &knotServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, log: &testproc.Buffer{}}
	conf := fmt.Sprintf(`server:
    listen: 127.0.0.1@%[1]d
    rundir: %[2]s
log:
  - target: stderr
    any: info
database:
    storage: %[2]s
template:
  - id: default
    storage: %[2]s
    zonefile-sync: -1
    journal-content: none
zone:
  - domain: %[3]s
    file: %[2]s/zone.db
`, port, dir, zone)
	if err := os.WriteFile(filepath.Join(dir, "knot.conf"), []byte(conf), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "zone.db"), []byte(zoneText), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(knotd, "-c", filepath.Join(dir, "knot.conf"))
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if s.proc, err = testproc.Start(cmd); err != nil {
		return nil, err
	}
	if err := s.waitReady(zone); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w; knotd log:\n%s", err, s.log.String())
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("knotd log:\n%s", s.log.String())
		}
	})
	return s, nil
}

// waitReady polls the SOA until knotd answers it with AA, knotd exits or
// 30 s pass (a hang guard, not a speed assertion).
func (s *knotServer) waitReady(zone string) error {
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if r, _, err := c.Exchange(m, s.addr); err == nil && r.Authoritative && len(r.Answer) == 1 {
			return nil
		}
		select {
		case <-s.proc.Done():
			return errors.New("knotd exited before answering")
		case <-deadline.C:
			return fmt.Errorf("knotd did not answer the SOA of %s on %s within 30s", zone, s.addr)
		case <-tick.C:
		}
	}
}

func (s *knotServer) stop() { s.proc.Stop() }

// exchange sends raw query bytes and returns the raw reply, or nil when
// knotd sends none within the wait (it drops some malformed messages).
func (s *knotServer) exchange(q []byte, tcp bool, wait time.Duration) ([]byte, error) {
	network := "udp"
	if tcp {
		network = "tcp"
	}
	c, err := net.Dial(network, s.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	if tcp {
		if _, err := c.Write(append([]byte{byte(len(q) >> 8), byte(len(q))}, q...)); err != nil {
			return nil, err
		}
		var l [2]byte
		if _, err := readFull(c, l[:]); err != nil {
			return nil, nil
		}
		out := make([]byte, int(l[0])<<8|int(l[1]))
		if _, err := readFull(c, out); err != nil {
			return nil, nil
		}
		return out, nil
	}
	if _, err := c.Write(q); err != nil {
		return nil, err
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, nil
		}
		return nil, err
	}
	return buf[:n], nil
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
