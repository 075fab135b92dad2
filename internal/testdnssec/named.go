package testdnssec

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/miekg/dns"
)

// startTimeout bounds how long a child process may take to answer.
const startTimeout = 30 * time.Second

// Authority is a named serving pre-signed zones on a loopback port.
type Authority struct {
	// Addr is named's address, "127.0.0.1:port", for UDP and TCP.
	Addr string
	// Dir holds named.conf and the zone files.
	Dir string

	t      testing.TB
	named  string
	mu     sync.Mutex
	zones  map[string]*Zone
	serial uint32
	proc   *testproc.Process
	log    *testproc.Buffer
}

// Log returns what named has written so far.
func (a *Authority) Log() string { return a.log.String() }

// StartAuthority runs named serving zones, each signed by dnssec-signzone,
// and returns once it answers every zone's SOA. named is stopped, and
// waited for, in t.Cleanup.
func StartAuthority(t testing.TB, zones ...*Zone) *Authority {
	t.Helper()
	named := Require(t, "named", "dnssec-signzone")[0]
	a := &Authority{t: t, named: named, Dir: t.TempDir(), zones: map[string]*Zone{},
		serial: uint32(time.Now().Unix())}
	for _, z := range zones {
		z.Name = dns.Fqdn(strings.ToLower(z.Name))
		a.zones[z.Name] = z
		z.SignTo(t, a.file(z.Name), a.serial)
	}
	var lastErr error
	for range 3 { // a port found free may be taken before named binds it
		if lastErr = a.start(); lastErr == nil {
			return a
		}
	}
	t.Fatalf("testdnssec: %v", lastErr)
	return nil
}

func (a *Authority) file(zone string) string {
	return filepath.Join(a.Dir, strings.TrimSuffix(zone, ".")+".signed")
}

func (a *Authority) start() error {
	port, err := testproc.FreePort()
	if err != nil {
		return err
	}
	a.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var conf strings.Builder
	fmt.Fprintf(&conf, `options {
  directory "%[1]s";
  pid-file "%[1]s/named.pid";
  listen-on port %[2]d { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
  allow-transfer { 127.0.0.1; };
};
controls { };
`, a.Dir, port)
	for name := range a.zones {
		fmt.Fprintf(&conf, "zone %q { type primary; file %q; };\n", name, a.file(name))
	}
	if err := os.WriteFile(filepath.Join(a.Dir, "named.conf"), []byte(conf.String()), 0o600); err != nil {
		return err
	}
	args := []string{"-g", "-c", filepath.Join(a.Dir, "named.conf")}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root")
	}
	a.log = &testproc.Buffer{}
	cmd := exec.Command(a.named, args...)
	cmd.Dir = a.Dir
	cmd.Stdout, cmd.Stderr = a.log, a.log
	if a.proc, err = testproc.Start(cmd); err != nil {
		return err
	}
	for name := range a.zones {
		if err := waitSerial(a.Addr, name, a.serial, a.proc.Done()); err != nil {
			a.proc.Stop()
			return fmt.Errorf("named: %w; log:\n%s", err, a.Log())
		}
	}
	proc, t := a.proc, a.t
	t.Cleanup(func() {
		proc.Stop()
		if t.Failed() {
			t.Logf("testdnssec: named log:\n%s", a.Log())
		}
	})
	return nil
}

// Update re-signs z (which must be one of the zones served, changed in
// place: its Text, keys or validity) with a new serial, makes named reload
// it (SIGHUP) and returns once named serves the new serial.
func (a *Authority) Update(t testing.TB, z *Zone) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.zones[dns.Fqdn(z.Name)] != z {
		t.Fatalf("testdnssec: %s is not served by this authority", z.Name)
	}
	a.serial++
	z.SignTo(t, a.file(z.Name), a.serial)
	if err := a.proc.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatalf("testdnssec: SIGHUP named: %v", err)
	}
	if err := waitSerial(a.Addr, z.Name, a.serial, a.proc.Done()); err != nil {
		t.Fatalf("testdnssec: named: %v; log:\n%s", err, a.Log())
	}
}

// waitSerial queries zone's SOA at addr until its serial is serial, done is
// closed (the server exited), or startTimeout passes.
func waitSerial(addr, zone string, serial uint32, done <-chan struct{}) error {
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		r, _, err := c.Exchange(m, addr)
		if err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
			if soa, ok := r.Answer[0].(*dns.SOA); ok && soa.Serial == serial {
				return nil
			}
		}
		select {
		case <-done:
			return errors.New("exited before serving " + zone)
		case <-deadline.C:
			return fmt.Errorf("did not serve %s serial %d on %s within %v", zone, serial, addr, startTimeout)
		case <-tick.C:
		}
	}
}
