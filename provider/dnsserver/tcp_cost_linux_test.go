//go:build linux

package dnsserver_test

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// TestServerIdleConnectionCost builds testdata/idleserver without -race,
// opens 2,000 idle TCP connections to it, and reports the heap and stack
// each one costs and the server's CPU over 2 s of that state (no spin).
// It asserts what does not depend on the machine's speed: every connection
// is held, queries over UDP and a fresh TCP connection are answered, the
// descriptor count stays within the connections plus a small constant, and
// an idle connection costs well under the 64 KiB buffer it used to.
func TestServerIdleConnectionCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program and opens 2,000 connections")
	}
	const conns = 2000
	bin := filepath.Join(t.TempDir(), "idleserver")
	build := exec.Command("go", "build", "-o", bin, "./testdata/idleserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-nofile", "4096", "-max-conns", "3000")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(prefix string) string {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "idleserver exited")
			require.True(t, strings.HasPrefix(l, prefix), "got %q", l)
			return strings.TrimPrefix(l, prefix)
		case <-time.After(60 * time.Second):
			t.Fatal("hang guard: idleserver said nothing")
			return ""
		}
	}
	addr := next("addr ")
	type mem struct {
		Heap, Stack uint64
		Server      struct{ TCPOpen int }
	}
	sample := func() mem {
		_, err := stdin.Write([]byte("mem\n"))
		require.NoError(t, err)
		var m mem
		require.NoError(t, json.Unmarshal([]byte(next("mem ")), &m))
		return m
	}
	before := sample()
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for range conns {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		flood = append(flood, c)
	}
	askTCP(t, addr, 11) // accepted in order: the flood is in
	askUDP(t, addr)
	after := sample()
	require.Equal(t, conns, after.Server.TCPOpen, "every idle connection held")
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/fd")
	require.NoError(t, err)
	require.LessOrEqual(t, len(fds), conns+32, "descriptors: connections plus a small constant")
	per := float64(after.Heap+after.Stack-before.Heap-before.Stack) / conns
	t0 := cpuTicks(t, cmd.Process.Pid)
	start := time.Now()
	time.Sleep(2 * time.Second) // the measurement window itself, not a wait for an event
	busy := float64(cpuTicks(t, cmd.Process.Pid)-t0) / 100 / time.Since(start).Seconds()
	m, _, err := (&dns.Client{Net: "udp", Timeout: 10 * time.Second}).Exchange(query("www.example.test.", dns.TypeA), addr)
	require.NoError(t, err)
	require.Equal(t, dns.RcodeSuccess, m.Rcode)
	t.Logf("%d idle connections: %.0f bytes of heap and stack each (%d of heap, %d of stack; %d descriptors open); server CPU while they idle: %.1f %% of a core",
		conns, per, int64(after.Heap-before.Heap)/conns, int64(after.Stack-before.Stack)/conns, len(fds), 100*busy)
	require.Less(t, per, float64(16<<10), "an idle connection costs more than 16 KiB (the goal is 8 KiB)")
}

// cpuTicks returns utime + stime of pid in clock ticks (100 a second on
// Linux).
func cpuTicks(t *testing.T, pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}
