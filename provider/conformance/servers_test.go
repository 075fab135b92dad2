package conformance_test

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

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/internal/testknot"
	"github.com/gslbkit/gslb/internal/testproc"
)

// server is a DNS server started for one test on a free
// loopback port, stopped in t.Cleanup.
type server struct {
	addr            string // 127.0.0.1:port
	keyName, secret string // TSIG, hmac-sha256
	// stop stops the server and waits for it to exit.
	stop func()
	// restart starts the server again on the same port with the same
	// files (after stop), and waits until it is ready; failing that, it
	// fails t with the server's log.
	restart func(t *testing.T)
}

// find returns the path of the first of names installed; where none is,
// the test is skipped, or fails when the variable env is "1".
func find(t *testing.T, env, install string, names ...string) string {
	t.Helper()
	return testproc.Require(t, env, fmt.Sprintf("%s is not installed (%s)", names[0], install), names...)
}

func newSecret(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// start runs cmd (built by mk for a free port) until ready succeeds,
// trying a few ports: one found free may be taken before the server binds.
func start(t *testing.T, what string, mk func(port int) (*exec.Cmd, *server, error), ready func(*server) error) *server {
	t.Helper()
	var last error
	for range 3 {
		port, err := testproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		cmd, s, err := mk(port)
		if err != nil {
			t.Fatal(err)
		}
		log := &testproc.Buffer{}
		var proc *testproc.Process
		run := func(cmd *exec.Cmd) error {
			cmd.Stdout, cmd.Stderr = log, log
			var err error
			if proc, err = testproc.Start(cmd); err != nil {
				return err
			}
			return waitReady(s, proc, ready)
		}
		s.stop = func() { proc.Stop() }
		if err = run(cmd); err == nil {
			s.restart = func(t *testing.T) {
				t.Helper()
				cmd, _, err := mk(port)
				if err == nil {
					err = run(cmd)
				}
				if err != nil {
					t.Fatalf("restart %s: %v\n%s", what, err, log.String())
				}
			}
			t.Cleanup(func() {
				s.stop()
				if t.Failed() {
					t.Logf("%s log:\n%s", what, log.String())
				}
			})
			return s
		}
		s.stop()
		last = fmt.Errorf("%w; %s log:\n%s", err, what, log.String())
	}
	t.Fatalf("%s: %v", what, last)
	return nil
}

// waitReady polls ready every 25 ms until it succeeds, proc exits, or 30 s
// pass (a hang guard).
func waitReady(s *server, proc *testproc.Process, ready func(*server) error) error {
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ready(s)
		if err == nil {
			return nil
		}
		select {
		case <-proc.Done():
			return errors.New("exited before it was ready")
		case <-deadline.C:
			return fmt.Errorf("not ready within 30s: %v", err)
		case <-tick.C:
		}
	}
}

// soaReady asks for the zone's SOA and wants an authoritative answer.
func soaReady(zone string) func(*server) error {
	return func(s *server) error {
		c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
		m := new(dns.Msg)
		m.SetQuestion(zone, dns.TypeSOA)
		r, _, err := c.Exchange(m, s.addr)
		if err != nil {
			return err
		}
		if r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) == 0 {
			return fmt.Errorf("SOA answer %s", dns.RcodeToString[r.Rcode])
		}
		return nil
	}
}

func zoneText(zone string) string {
	return fmt.Sprintf(`$ORIGIN %[1]s
$TTL 30
@   IN SOA ns1.%[1]s hostmaster.%[1]s 1 60 60 600 30
@   IN NS  ns1.%[1]s
ns1 IN A   127.0.0.1
`, zone)
}

// startBIND runs named (internal/testbind) with a TSIG key allowed to
// update and transfer zone, and check-integrity off (libdnstest writes an
// MX and an SRV whose targets have no address records, which BIND
// otherwise refuses).
func startBIND(t *testing.T, zone string) *server {
	b := testbind.Start(t, zone)
	return &server{addr: b.Addr, keyName: b.KeyName, secret: b.Secret, stop: b.Stop,
		restart: func(t *testing.T) { t.Helper(); b.Run(t) }}
}

// startKnot runs knotd (internal/testknot) as a primary whose TSIG key may
// update and transfer zone, its changes journaled across restarts.
func startKnot(t *testing.T, zone string) *server {
	k := testknot.Start(t, testknot.Config{Zone: zone, ZoneText: zoneText(zone), Updates: true, KeyName: "gslb-key", Secret: newSecret(t)})
	return &server{addr: k.Addr, keyName: k.Config.KeyName, secret: k.Config.Secret, stop: k.Stop,
		restart: func(t *testing.T) { t.Helper(); k.Run(t) }}
}

// startPDNS runs pdns_server on an SQLite database with zone, a TSIG key
// allowed to update (SOA-EDIT-DNSUPDATE INCREASE) and transfer it.
func startPDNS(t *testing.T, zone string) *server {
	pdns := find(t, "GSLBKIT_REQUIRE_PDNS", "apt-get install -y pdns-server pdns-backend-sqlite3", "pdns_server")
	pdnsutil := find(t, "GSLBKIT_REQUIRE_PDNS", "apt-get install -y pdns-server", "pdnsutil")
	schema := "/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql"
	if _, err := os.Stat(schema); err != nil {
		find(t, "GSLBKIT_REQUIRE_PDNS", "apt-get install -y pdns-backend-sqlite3", "pdns-backend-sqlite3-schema")
	}
	sqlite := find(t, "GSLBKIT_REQUIRE_PDNS", "apt-get install -y sqlite3", "sqlite3")
	dir := t.TempDir()
	secret := newSecret(t)
	db := filepath.Join(dir, "pdns.sqlite3")
	sql, err := os.ReadFile(schema)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sqlite, db)
	cmd.Stdin = strings.NewReader(string(sql))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	return start(t, "pdns_server", func(port int) (*exec.Cmd, *server, error) {
		conf := fmt.Sprintf(`launch=gsqlite3
gsqlite3-database=%[1]s
local-address=127.0.0.1
local-port=%[2]d
socket-dir=%[3]s
guardian=no
daemon=no
dnsupdate=yes
allow-dnsupdate-from=127.0.0.0/8
disable-axfr=no
api=no
webserver=no
setuid=
setgid=
cache-ttl=0
query-cache-ttl=0
negquery-cache-ttl=0
`, db, port, dir)
		if err := os.WriteFile(filepath.Join(dir, "pdns.conf"), []byte(conf), 0o600); err != nil {
			return nil, nil, err
		}
		z := strings.TrimSuffix(zone, ".")
		for _, args := range [][]string{
			{"create-zone", z, "ns1." + zone},
			{"add-record", z, "ns1", "A", "30", "127.0.0.1"},
			{"import-tsig-key", "gslb-key", "hmac-sha256", secret},
			{"set-meta", z, "TSIG-ALLOW-DNSUPDATE", "gslb-key"},
			{"set-meta", z, "TSIG-ALLOW-AXFR", "gslb-key"},
			{"set-meta", z, "SOA-EDIT-DNSUPDATE", "INCREASE"},
		} {
			if _, err := os.Stat(filepath.Join(dir, "zone-made")); err == nil {
				break // a retry on another port: the database is ready
			}
			out, err := exec.Command(pdnsutil, append([]string{"--config-dir=" + dir}, args...)...).CombinedOutput()
			if err != nil {
				return nil, nil, fmt.Errorf("pdnsutil %v: %v\n%s", args, err, out)
			}
		}
		_ = os.WriteFile(filepath.Join(dir, "zone-made"), nil, 0o600)
		return exec.Command(pdns, "--config-dir="+dir), &server{addr: hostPort(port), keyName: "gslb-key", secret: secret}, nil
	}, soaReady(zone))
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
