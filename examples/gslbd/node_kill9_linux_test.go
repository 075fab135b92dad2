//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestNodeKill9AfterSerialChangeNeverGoesBack: a node is killed -9 the
// instant its served SOA serial changed, and restarted while its
// controller is stopped (SIGSTOP: it accepts, never answers): the
// restarted node answers from its directory, and its serial is never
// below the one seen before the kill (I3). Before, the node applied a
// sync and saved its copy only after, so a kill between the two
// restarted it on the older copy.
func TestNodeKill9AfterSerialChangeNeverGoesBack(t *testing.T) {
	b := newBackend(t)
	const secret = "node-kill9-replication-secret-01"
	y, ctlDNS, ctlHTTP := fixedPorts(t, controllerYAML("replication: {secret: "+secret+"}",
		fmt.Sprintf("  - name: app.example.test.\n    addresses:\n      - {ip: 192.0.2.1, probeAddr: %q}\n      - {ip: 192.0.2.2, probeAddr: %q}\n", b.addr(), b.addr())))
	dir := t.TempDir()
	ctlPath, nodePath := filepath.Join(dir, "ctl.yaml"), filepath.Join(dir, "node.yaml")
	nodeDNS, nodeHTTP := freeAddr(t), freeAddr(t)
	node := fmt.Sprintf("stateDir: %s\nzone: example.test.\ndns: {addr: %q}\nhttp: {addr: %q}\nreplication: {secret: %s}\nnode: {url: \"http://%s/replication\", interval: 200ms, dir: %s}\n",
		filepath.Join(dir, "node-state"), nodeDNS, nodeHTTP, secret, ctlHTTP, filepath.Join(dir, "node-copy"))
	if err := os.WriteFile(ctlPath, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nodePath, []byte(node), 0o600); err != nil {
		t.Fatal(err)
	}
	ctl, err := startGslbd("controller", ctlPath, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ctl.cmd.Process.Signal(syscall.SIGCONT); _ = ctl.term() })
	n, err := startGslbd("node", nodePath, 0, "-node")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.term() })
	guard := 60 * time.Second
	waitFor(t, guard, "both answered", func() bool { a, _ := answer(ctlDNS, "app.example.test."); return len(a) == 2 })
	waitFor(t, guard, "the node follows", func() bool { return soaSerial(nodeDNS) == soaSerial(ctlDNS) && soaSerial(nodeDNS) != 0 })

	const rounds = 8
	var log []string
	for i := range rounds {
		before := soaSerial(nodeDNS)
		verb := "drain"
		if i%2 == 1 {
			verb = "undrain"
		}
		if code := post(t, ctlHTTP, "/api/records/app.example.test/addresses/192.0.2.2/"+verb); code != 200 {
			t.Fatalf("%s: %d", verb, code)
		}
		// The instant the node serves the new serial, kill it.
		var seen uint32
		deadline := time.Now().Add(guard)
		for seen = soaSerial(nodeDNS); seen == before || seen == 0; seen = soaSerial(nodeDNS) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the node never served past serial %d", i, before)
			}
		}
		n.kill9()
		if err := ctl.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if n, err = startGslbd("node", nodePath, 0, "-node"); err != nil {
			t.Fatal(err)
		}
		after := soaSerial(nodeDNS)
		log = append(log, fmt.Sprintf("%d→%d (restarted: %d)", before, seen, after))
		if after < seen {
			t.Errorf("round %d: served serial %d before the kill -9, %d after the restart with the controller stopped", i, seen, after)
		}
		if err := ctl.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		waitFor(t, guard, "the node follows again", func() bool { return soaSerial(nodeDNS) == soaSerial(ctlDNS) })
	}
	t.Logf("serials, node killed -9 at once after each change: %v", log)
}
