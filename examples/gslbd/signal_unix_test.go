//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMShutsDownGracefully wires run to SIGTERM the way main does and
// sends the signal to this process: run returns nil after logging "stopped".
func TestSIGTERMShutsDownGracefully(t *testing.T) {
	b := newBackend(t)
	path := filepath.Join(t.TempDir(), "gslbd.yaml")
	y := controllerYAML("", fmt.Sprintf("  - name: www.example.test.\n    addresses: [{ip: 192.0.2.7, probeAddr: %q}]\n", b.addr()))
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	out, errb := newSyncBuffer(), newSyncBuffer()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-config", path}, out, errb) }()
	select {
	case <-out.first:
	case err := <-done:
		t.Fatalf("gslbd exited before serving: %v\n%s", err, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatal("hang guard: gslbd did not start")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("hang guard: gslbd did not stop after SIGTERM")
	}
	if !strings.Contains(errb.String(), `"msg":"stopped"`) {
		t.Errorf("no shutdown log:\n%s", errb.String())
	}
}
