//go:build linux

package dnsserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childNofile is the descriptor limit (soft and hard) of the server
// process in the tests below.
const childNofile = 64

// TestDescriptorChild is the server process of the tests below; it runs
// only when started by them. It lowers its descriptor limit, serves the
// fixture zone, logs JSON to stdout, and answers "stats" on stdin with its
// ServerStats.
func TestDescriptorChild(t *testing.T) {
	if os.Getenv("GSLBKIT_FD_CHILD") == "" {
		t.Skip("run by the descriptor tests")
	}
	lim := syscall.Rlimit{Cur: childNofile, Max: childNofile}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	maxConns, _ := strconv.Atoi(os.Getenv("GSLBKIT_FD_CHILD_MAXCONNS"))
	out := &lockedWriter{mu: make(chan struct{}, 1), w: os.Stdout}
	log := slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := dnsserver.DefaultServerConfig()
	cfg.Addr, cfg.MaxTCPConns, cfg.TCPIdleTimeout = "127.0.0.1:0", maxConns, time.Minute
	srv, err := dnsserver.NewServer(fixture(t), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	out.printf("addr %s\n", srv.Addr())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		b, _ := json.Marshal(srv.Stats())
		out.printf("stats %s\n", b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type lockedWriter struct {
	mu chan struct{}
	w  *os.File
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	if l.mu == nil {
		return l.w.Write(b)
	}
	l.mu <- struct{}{}
	defer func() { <-l.mu }()
	return l.w.Write(b)
}

func (l *lockedWriter) printf(format string, args ...any) { fmt.Fprintf(l, format, args...) }

// fdChild is a running server process.
type fdChild struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin *os.File
	lines chan string
	addr  string
}

func startFDChild(t *testing.T, maxConns int) *fdChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDescriptorChild$", "-test.v")
	cmd.Env = append(os.Environ(), "GSLBKIT_FD_CHILD=1", fmt.Sprintf("GSLBKIT_FD_CHILD_MAXCONNS=%d", maxConns))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdin = r
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	r.Close()
	c := &fdChild{t: t, cmd: cmd, stdin: w, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		w.Close()
		_ = cmd.Wait()
	})
	c.addr = strings.TrimPrefix(c.waitLine("addr "), "addr ")
	return c
}

// waitLine returns the next line that contains s (hang guard 30 s).
func (c *fdChild) waitLine(s string) string {
	c.t.Helper()
	guard := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("server process exited before printing %q", s)
			}
			if strings.Contains(l, s) {
				return l
			}
		case <-guard:
			c.t.Fatalf("hang guard: no %q from the server process", s)
		}
	}
}

func (c *fdChild) stats() dnsserver.ServerStats {
	c.t.Helper()
	_, err := c.stdin.WriteString("stats\n")
	require.NoError(c.t, err)
	var st dnsserver.ServerStats
	require.NoError(c.t, json.Unmarshal([]byte(strings.TrimPrefix(c.waitLine("stats "), "stats ")), &st))
	return st
}

// askUDP asks the child for www over UDP.
func askUDP(t *testing.T, addr string) {
	t.Helper()
	cl := &dns.Client{Net: "udp", Timeout: 10 * time.Second}
	m, _, err := cl.Exchange(query("www.example.test.", dns.TypeA), addr)
	require.NoError(t, err)
	assert.Equal(t, dns.RcodeSuccess, m.Rcode)
}

// askTCP opens a connection and asks for www over it.
func askTCP(t *testing.T, addr string, id uint16) {
	t.Helper()
	c := dial(t, addr)
	tcpQuery(t, c, id, "www.example.test.", dns.TypeA)
	assert.Equal(t, id, tcpReply(t, c).Id)
	c.Close()
}

// TestServerTCPFloodKeepsDescriptors floods a server whose descriptor limit
// is 64 with 200 idle connections: with the derived connection limit (16)
// it evicts the idle ones instead of running out of descriptors, never
// fails to accept, and keeps answering over UDP and over new connections.
func TestServerTCPFloodKeepsDescriptors(t *testing.T) {
	child := startFDChild(t, 0)
	var flood []net.Conn
	for range 200 {
		c, err := net.Dial("tcp", child.addr)
		require.NoError(t, err)
		flood = append(flood, c)
	}
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	// The listener accepts in order: once a newer connection is answered,
	// the flood has been accepted.
	askTCP(t, child.addr, 7)
	askUDP(t, child.addr)
	st := child.stats()
	t.Logf("after 200 idle connections: %+v", st)
	assert.Equal(t, 16, st.TCPLimit, "a quarter of 64 descriptors")
	assert.LessOrEqual(t, st.TCPOpen, 16)
	assert.EqualValues(t, 0, st.AcceptErrors, "no descriptor ran out")
	assert.GreaterOrEqual(t, st.TCPEvicted, uint64(200-16))
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(child.cmd.Process.Pid) + "/fd")
	require.NoError(t, err)
	t.Logf("server descriptors open: %d (limit %d)", len(fds), childNofile)
	assert.LessOrEqual(t, len(fds), 16+24, "descriptors: the connection limit plus a small constant")
}

// TestServerAcceptBacksOff sets a connection limit above the descriptor
// limit, so a flood does exhaust descriptors: accept fails with EMFILE and
// the loop backs off (5ms doubling to 1s) instead of spinning, UDP keeps
// answering, and TCP service returns once the flood leaves.
func TestServerAcceptBacksOff(t *testing.T) {
	child := startFDChild(t, 1000)
	var flood []net.Conn
	for range 100 {
		c, err := net.Dial("tcp", child.addr)
		require.NoError(t, err)
		flood = append(flood, c)
	}
	child.waitLine("tcp accept failed")
	blind := time.Now()
	askUDP(t, child.addr)
	st := child.stats()
	elapsed := time.Since(blind)
	// Back-off allows at most this many failures in elapsed: the doubling
	// steps up to 1s, then one a second. A spinning loop makes thousands.
	allowed := 2 + int(math.Log2(float64(time.Second/(5*time.Millisecond)))) + int(elapsed/time.Second)
	t.Logf("out of descriptors for %v: %d accept errors (back-off allows %d); %+v", elapsed, st.AcceptErrors, allowed, st)
	assert.GreaterOrEqual(t, st.AcceptErrors, uint64(1))
	assert.LessOrEqual(t, st.AcceptErrors, uint64(allowed))

	for _, c := range flood {
		c.Close()
	}
	askTCP(t, child.addr, 9)
	t.Logf("tcp answered again %v after the flood left", time.Since(blind)-elapsed)
}
