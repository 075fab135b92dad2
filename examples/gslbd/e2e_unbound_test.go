package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// requireUnboundEnv makes a missing unbound a failure instead of a skip
// (.ci/run sets it after installing unbound).
const requireUnboundEnv = "GSLBKIT_REQUIRE_UNBOUND"

// startUnbound runs unbound in the foreground with a stub zone for zone
// pointing at auth (host:port) and returns its address; it is stopped by
// its PID when the test ends.
func startUnbound(t *testing.T, zone, auth string) string {
	t.Helper()
	bin, err := exec.LookPath("unbound")
	if err != nil {
		if os.Getenv(requireUnboundEnv) == "1" {
			t.Fatalf("unbound not installed and %s=1", requireUnboundEnv)
		}
		t.Skip("unbound not installed (apt-get install -y unbound); set " + requireUnboundEnv + "=1 to fail instead")
	}
	authHost, authPort, _ := net.SplitHostPort(auth)
	// A free port is picked by binding and closing it, so another process
	// may take it first: unbound then exits at once and we try another.
	for attempt := 1; ; attempt++ {
		addr, ok := tryUnbound(t, bin, zone, authHost, authPort, attempt == 5)
		if ok {
			return addr
		}
	}
}

// tryUnbound starts unbound on a free port and waits until it answers; it
// returns false when unbound exited before answering (the port was taken),
// unless last, when that fails the test.
func tryUnbound(t *testing.T, bin, zone, authHost, authPort string, last bool) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	conf := fmt.Sprintf(`server:
  interface: 127.0.0.1
  port: %d
  do-ip6: no
  num-threads: 1
  do-not-query-localhost: no
  access-control: 127.0.0.0/8 allow
  username: ""
  chroot: ""
  directory: "%s"
  pidfile: "%s/unbound.pid"
  use-syslog: no
  logfile: ""
  verbosity: 1
  module-config: "iterator"
  local-zone: "test." nodefault
stub-zone:
  name: "%s"
  stub-addr: %s@%s
`, port, dir, dir, strings.TrimSuffix(zone, "."), authHost, authPort)
	path := filepath.Join(dir, "unbound.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	cmd := exec.Command(bin, "-d", "-c", path)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start unbound: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // our own child, by PID
		<-exited
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, rc := answer(addr, zone); rc >= 0 {
			return addr, true
		}
		select {
		case <-exited:
			if last {
				t.Fatalf("unbound exited:\n%s", log.String())
			}
			t.Logf("unbound exited, trying another port:\n%s", log.String())
			return "", false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("hang guard: unbound did not answer within 30s:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a real process
	}
}

// TestEndToEndThroughUnbound serves gslbd's zone on loopback behind a real
// caching resolver (unbound, stub zone), kills a backend, and records when
// unbound's answer stops containing it. Asserted: the order of events (all
// three answered; backend killed; gslbd's own answer drops it; unbound's
// answer drops it, not before gslbd's). The time is reported beside the
// SPEC bound (probe.WorstCaseDetection + 0 publish delay + the TTL), not
// asserted: real time on a shared machine is not a test. Hang guard 60 s.
func TestEndToEndThroughUnbound(t *testing.T) {
	if _, err := exec.LookPath("unbound"); err != nil && os.Getenv(requireUnboundEnv) != "1" {
		t.Skip("unbound not installed (apt-get install -y unbound); set " + requireUnboundEnv + "=1 to fail instead")
	}
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t)}
	var recs strings.Builder
	recs.WriteString("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n")
	for i, b := range bs {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, probeAddr: %q}\n", i+1, b.addr())
	}
	yaml := controllerYAML("", recs.String())
	d := startDaemon(t, yaml)
	resolver := startUnbound(t, "example.test.", d.dns)

	const name = "app.example.test."
	const ttl = time.Second
	all := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
	guard := 60 * time.Second
	waitFor(t, guard, "unbound answers all three addresses", func() bool {
		got, _ := answer(resolver, name)
		return slices.Equal(got, all)
	})

	bs[1].srv.Close() // kill backend 2: connections are refused from now on
	killed := time.Now()
	var authGone, resolverGone time.Duration
	waitFor(t, guard, "unbound's answer drops the killed backend", func() bool {
		if authGone == 0 {
			if got, _ := answer(d.dns, name); len(got) > 0 && !slices.Contains(got, "192.0.2.2") {
				authGone = time.Since(killed)
			}
		}
		got, _ := answer(resolver, name)
		if len(got) > 0 && !slices.Contains(got, "192.0.2.2") {
			resolverGone = time.Since(killed)
			return true
		}
		return false
	})
	if authGone == 0 {
		t.Fatalf("unbound dropped the backend (after %v) before gslbd's own answer did", resolverGone)
	}
	if got, _ := answer(resolver, name); !slices.Equal(got, []string{"192.0.2.1", "192.0.2.3"}) {
		t.Errorf("unbound answers %v after the failover, want the two live backends", got)
	}
	pol := probe.DefaultPolicy()
	pol.Interval, pol.Timeout = 200*time.Millisecond, 200*time.Millisecond
	pol.WarningThreshold, pol.CriticalThreshold, pol.PassingThreshold = 1, 2, 1
	pol.MaxBackoff = 400 * time.Millisecond
	detect := probe.WorstCaseDetection(pol)
	t.Logf("gslbd's answer dropped the killed backend after %v; unbound's after %v; SPEC bound %v (worst-case detection %v + publish 0 + TTL %v; unbound keeps time in whole seconds, so a 1s TTL may live up to 2s in its cache)",
		authGone.Round(time.Millisecond), resolverGone.Round(time.Millisecond), (detect + ttl).Round(time.Millisecond), detect, ttl)
}
