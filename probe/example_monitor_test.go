package probe_test

import (
	"context"
	"fmt"

	"github.com/gslbkit/gslb/probe"
)

// A Monitor probes its targets on their policies' schedules and reports
// state changes to an observer. Here one target with the Envoy preset starts
// critical and its first pass makes it passing; the observer stops the run.
func ExampleMonitor() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	obs := probe.ObserverFunc(func(e probe.Event) {
		fmt.Printf("%s: %s -> %s (%s), served: %v\n",
			e.Target, e.Transition.From, e.Transition.To, e.Transition.Cause, e.Served)
		cancel() // seen what we wanted: stop the Monitor
	})
	m, err := probe.NewMonitor(probe.DefaultMonitorConfig(), obs, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	up := probe.ProberFunc(func(context.Context) probe.Result {
		return probe.Result{Status: probe.Pass, Code: 200}
	})
	if err := m.Add(probe.Target{ID: "web-1", Prober: up, Policy: probe.Envoy()}); err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Run(ctx); err != nil { // returns once the observer cancels
		fmt.Println(err)
		return
	}
	st, _ := m.Stats("web-1")
	fmt.Println(st.State, st.Probes, st.Passes)
	// Output:
	// web-1: critical -> passing (probe), served: true
	// passing 1 1
}
