package probe_test

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// A process out of descriptors cannot probe: its probes fail with EMFILE,
// which KindOf classifies as a local failure, and the Machine does not
// count it: the target stays where it was and keeps its schedule.
func ExampleKindLocal() {
	m, err := probe.NewMachine(probe.RecordService())
	if err != nil {
		fmt.Println(err)
		return
	}
	emfile := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}
	r := probe.Result{Status: probe.Fail, Kind: probe.KindOf(emfile), Detail: "connect: " + emfile.Error()}
	fmt.Println(r.Kind, r.IsLocal())
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 5 {
		st := m.Observe(now, r)
		now = now.Add(st.Next)
		fmt.Println(m.State(), st.Changed, st.Next)
	}
	// Output:
	// local true
	// passing false 10s
	// passing false 10s
	// passing false 10s
	// passing false 10s
	// passing false 10s
}
