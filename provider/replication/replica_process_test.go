//go:build unix

package replication_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// TestReplicaNodeChild is the DNS node of TestReplicaNodeRestartsWhileSourceDown;
// it runs only when started by it. It follows GSLBKIT_NODE_URL with its copy
// in GSLBKIT_NODE_DIR, serves DNS on 127.0.0.1, and prints "dns ADDR" and
// one "event KIND" line per replica event on stdout, until it is killed.
func TestReplicaNodeChild(t *testing.T) {
	if os.Getenv("GSLBKIT_NODE_URL") == "" {
		t.Skip("run by TestReplicaNodeRestartsWhileSourceDown")
	}
	out := &logBuffer{w: os.Stdout}
	cfg := replicaConfig(os.Getenv("GSLBKIT_NODE_URL"), zone)
	cfg.Dir = os.Getenv("GSLBKIT_NODE_DIR")
	cfg.Interval = 100 * time.Millisecond
	cfg.Timeout = time.Second
	local := new(memory.Provider)
	rep, err := replication.NewReplica(local, cfg, nil, observerFunc(func(e replication.ReplicaEvent) {
		fmt.Fprintf(out, "event %s\n", e.Kind)
	}), nil)
	require.NoError(t, err)
	scfg := dnsserver.DefaultServerConfig()
	scfg.Addr = "127.0.0.1:0"
	srv, err := dnsserver.NewServer(local, scfg, nil)
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	fmt.Fprintf(out, "dns %s\n", srv.Addr())
	ctx := context.Background()
	go func() { _ = srv.Run(ctx) }()
	_ = rep.Run(ctx) // until killed
}

type nodeProcess struct {
	cmd   *exec.Cmd
	dns   string
	lines chan string
}

func startNode(t *testing.T, url, dir string) *nodeProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaNodeChild$")
	cmd.Env = append(os.Environ(), "GSLBKIT_NODE_URL="+url, "GSLBKIT_NODE_DIR="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	n := &nodeProcess{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			n.lines <- sc.Text()
		}
		close(n.lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	line := n.waitLine(t, "dns ")
	n.dns = strings.TrimPrefix(line, "dns ")
	return n
}

// waitLine returns the next line starting with prefix, under a 60 s hang guard.
func (n *nodeProcess) waitLine(t *testing.T, prefix string) string {
	t.Helper()
	guard := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-n.lines:
			if !ok {
				t.Fatalf("node exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-guard:
			t.Fatalf("node printed no %q within 60s", prefix)
		}
	}
}

// kill sends SIGKILL: the node gets no chance to save or clean up.
func (n *nodeProcess) kill(t *testing.T) {
	require.NoError(t, n.cmd.Process.Kill())
	_ = n.cmd.Wait()
}

func askA(t *testing.T, addr, name string) []string {
	t.Helper()
	c := &dns.Client{Net: "udp", Timeout: 10 * time.Second}
	m, _, err := c.Exchange(query(name, dns.TypeA), addr)
	require.NoError(t, err)
	var out []string
	for _, rr := range m.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	if m.Rcode != dns.RcodeSuccess {
		out = append(out, dns.RcodeToString[m.Rcode])
	}
	return out
}

// TestReplicaNodeRestartsWhileSourceDown: a node process syncs from its
// controller and is killed (SIGKILL); the controller goes away; a new node
// process over the same directory answers the last good copy instead of
// REFUSED for the whole zone.
func TestReplicaNodeRestartsWhileSourceDown(t *testing.T) {
	ctl := newController(t, goodSource(t))
	dir := t.TempDir()
	first := startNode(t, ctl.srv.URL, dir)
	first.waitLine(t, "event synced")
	require.Equal(t, []string{"192.0.2.1"}, askA(t, first.dns, "www.example.test."))
	first.kill(t)

	ctl.srv.Close() // the controller is gone: connections are refused
	second := startNode(t, ctl.srv.URL, dir)
	defer second.kill(t)
	require.Equal(t, []string{"192.0.2.1"}, askA(t, second.dns, "www.example.test."), "the restarted node answers from its saved copy")
	second.waitLine(t, "event degraded") // from disk, before the first sync
	second.waitLine(t, "event sync-failed")
	require.Equal(t, []string{"192.0.2.1"}, askA(t, second.dns, "www.example.test."), "and goes on answering while the controller is down")
}
