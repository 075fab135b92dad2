//go:build unix

package testproc_test

import (
	"os/exec"
	"strings"
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

// TestBufferWait: Wait returns once a write makes the predicate true, and
// false when its guard passes first.
func TestBufferWait(t *testing.T) {
	var b testproc.Buffer
	started := make(chan struct{})
	go func() {
		<-started
		_, _ = b.Write([]byte("first line\n"))
		_, _ = b.Write([]byte("Transfer completed\n"))
	}()
	close(started)
	if !b.Wait(time.Minute, func(s string) bool { return strings.Contains(s, "Transfer completed") }) {
		t.Fatalf("Wait gave up; buffer %q", b.String())
	}
	if b.Wait(10*time.Millisecond, func(s string) bool { return strings.Contains(s, "never written") }) {
		t.Fatal("Wait reported a line that was never written")
	}
}
