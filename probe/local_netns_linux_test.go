//go:build linux

package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testproc"
)

// TestLocalUnreachableClassification runs TestLocalNoRouteChild in a new
// network namespace (inside a new user namespace, so no privilege is
// needed): a namespace with no route at all, where the host's own table
// makes every address unreachable (local), and a route through a router
// that answers "host unreachable" (the target's network's verdict).
func TestLocalUnreachableClassification(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLocalNoRouteChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "GSLBKIT_PROBE_NETNS_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC)) {
		testproc.Missing(t, netnsRequireEnv, fmt.Sprintf("probe: no user and network namespace here (%v)", err))
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		t.Log(l)
	}
	require.NoError(t, err, "child failed")
	require.Contains(t, string(out), "--- PASS: TestLocalNoRouteChild", "the child ran")
	if i := strings.Index(string(out), halfNotRun); i >= 0 {
		line, _, _ := strings.Cut(string(out[i:]), "\n")
		testproc.Missing(t, netnsRequireEnv, "probe: "+line)
	}
}

// netnsRequireEnv, set to "1", makes a missing namespace or tool a failure
// of TestLocalUnreachableClassification instead of a skip.
const netnsRequireEnv = "GSLBKIT_REQUIRE_NETNS"

// halfNotRun starts the line TestLocalNoRouteChild logs where a tool the
// unreachable-target half needs is missing; the child still passes (the
// parent checks that it did) and the parent then skips or fails.
const halfNotRun = "the unreachable-target half is not run"

// TestLocalNoRouteChild is the child of TestLocalUnreachableClassification.
func TestLocalNoRouteChild(t *testing.T) {
	if os.Getenv("GSLBKIT_PROBE_NETNS_CHILD") == "" {
		t.Skip("run by TestLocalUnreachableClassification")
	}
	probers := func(addr string) map[string]Prober {
		tc, err := NewTCP(addr, DefaultTCPConfig())
		require.NoError(t, err)
		h, err := NewHTTP(addr, DefaultHTTPConfig())
		require.NoError(t, err)
		return map[string]Prober{"tcp": tc, "http": h}
	}
	run := func(t *testing.T, p Prober, timeout time.Duration) (worker, loop Result) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return p.Probe(ctx), loopRun(t, p, timeout)
	}

	// No route at all (the namespace's loopback is down, its table empty):
	// connect fails at once, nothing is sent.
	_, err := net.Dial("udp", "192.0.2.1:80")
	require.True(t, probeUnreachable(err), "a namespace without routes: %v", err)
	for name, p := range probers("192.0.2.1:80") {
		w, l := run(t, p, 5*time.Second)
		assert.Equal(t, KindLocal, w.Kind, "no route, %s on a worker: %s", name, w.Detail)
		assert.Equal(t, KindLocal, l.Kind, "no route, %s in the event loop: %s", name, l.Detail)
		assert.Contains(t, w.Detail, "network is unreachable")
		t.Logf("no route, %s: worker %q, loop %q", name, w.Detail, l.Detail)
	}

	// A route through a router (a second namespace, over a veth pair) that
	// answers ICMP host unreachable: the SYN went out and the network said
	// the target is unreachable, so it counts against the target.
	var tools [3]string
	for i, name := range []string{"ip", "unshare", "nsenter"} {
		if tools[i] = testproc.Find(name); tools[i] == "" {
			t.Logf("%s: %s is not installed (apt-get install -y iproute2 util-linux)", halfNotRun, name)
			return
		}
	}
	ipc, unshare, nsenter := tools[0], tools[1], tools[2]
	router := exec.Command(unshare, "-n", "sh", "-c", "echo ready; exec sleep 120")
	rout, err := router.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, router.Start())
	defer func() {
		_ = router.Process.Kill()
		_ = router.Wait()
	}()
	line := make([]byte, 6)
	_, err = io.ReadFull(rout, line) // the router is in its namespace
	require.NoError(t, err)
	pid := strconv.Itoa(router.Process.Pid)
	sh := func(argv ...string) {
		t.Helper()
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		require.NoError(t, err, "%v: %s", argv, out)
	}
	sh(ipc, "link", "add", "v0", "type", "veth", "peer", "name", "v1", "netns", pid)
	sh(ipc, "addr", "add", "10.9.0.1/24", "dev", "v0")
	sh(ipc, "link", "set", "v0", "up")
	sh(ipc, "route", "add", "10.10.0.0/24", "via", "10.9.0.2")
	sh(nsenter, "-t", pid, "-n", "sh", "-c", "ip addr add 10.9.0.2/24 dev v1 && ip link set v1 up && "+
		"echo 1 > /proc/sys/net/ipv4/ip_forward && echo 0 > /proc/sys/net/ipv4/icmp_ratelimit && "+
		"ip route add unreachable 10.10.0.0/24")
	for name, p := range probers("10.10.0.5:80") {
		w, l := run(t, p, 10*time.Second)
		assert.Equal(t, KindNetwork, w.Kind, "target unreachable, %s on a worker: %s", name, w.Detail)
		assert.Equal(t, KindNetwork, l.Kind, "target unreachable, %s in the event loop: %s", name, l.Detail)
		assert.Contains(t, w.Detail, "no route to host")
		t.Logf("target unreachable, %s: worker %q, loop %q", name, w.Detail, l.Detail)
	}
}

// A probe the event loop reaches only after its deadline is a local
// failure, not a timeout of the target.
func TestLoopLateStartIsLocal(t *testing.T) {
	tc, err := NewTCP("127.0.0.1:9", DefaultTCPConfig())
	require.NoError(t, err)
	lt, ok := loopTargetOf(tc)
	require.True(t, ok)
	lp, err := newEvLoop()
	require.NoError(t, err)
	defer lp.close()
	now := time.Now()
	lp.start(loopJob{t: &monTarget{id: "t"}, lt: lt, start: now.Add(-2 * time.Second), timeout: time.Second}, now)
	d := lp.takeDone()
	require.Len(t, d, 1)
	assert.Equal(t, KindLocal, d[0].r.Kind, d[0].r.Detail)
	assert.Contains(t, d[0].r.Detail, "after its deadline")
	assert.Zero(t, lp.inFlight())
}
