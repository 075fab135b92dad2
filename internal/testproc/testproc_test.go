//go:build unix

package testproc_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
)

// TestStartStop: Stop ends a child that honours SIGTERM and waits for it;
// Stop again, and Stop of a nil Process, do nothing.
func TestStartStop(t *testing.T) {
	p, err := testproc.Start(exec.Command("sleep", "60"))
	if err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	p.Stop()
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("hang guard: Done not closed after Stop")
	}
	if p.Cmd.ProcessState == nil || p.Cmd.ProcessState.Success() {
		t.Fatalf("child state %v, want ended by a signal", p.Cmd.ProcessState)
	}
	p.Stop()
	var none *testproc.Process
	none.Stop()
}
