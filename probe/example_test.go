package probe_test

import (
	"fmt"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// A record-service target with passingThreshold 2 fails, backs off while
// critical, recovers through recovery, and is drained by an operator.
func ExampleMachine() {
	p := probe.RecordService()
	p.PassingThreshold = 2
	m, err := probe.NewMachine(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	show := func(what string, st probe.Step) {
		change := ""
		if st.Changed {
			change = fmt.Sprintf(" (%v → %v)", st.Transition.From, st.Transition.To)
		}
		fmt.Printf("%-9s %-8v served=%-5v next=%v%s\n", what, m.State(), m.Served(), st.Next, change)
		now = now.Add(st.Next)
	}
	pass := probe.Result{Status: probe.Pass}
	fail := probe.Result{Status: probe.Fail, Kind: probe.KindTimeout}
	for _, r := range []probe.Result{pass, fail, fail, fail, fail, pass, pass} {
		show(r.Status.String(), m.Observe(now, r))
	}
	show("drain", m.Override(now, probe.Critical))
	show("pass", m.Observe(now, pass))
	fmt.Println("worst-case detection:", probe.WorstCaseDetection(p))
	// Output:
	// pass      passing  served=true  next=10s
	// fail      warning  served=true  next=5s (passing → warning)
	// fail      warning  served=true  next=5s
	// fail      critical served=false next=10s (warning → critical)
	// fail      critical served=false next=20s
	// pass      recovery served=false next=5s (critical → recovery)
	// pass      passing  served=true  next=10s (recovery → passing)
	// drain     critical served=false next=10s (passing → critical)
	// pass      recovery served=false next=5s (critical → recovery)
	// worst-case detection: 21.032s
}

// Envoy Gateway's thresholds decode onto the Envoy preset; the record
// service's names work too, but not both names of one knob.
func ExampleDecodePolicyOnto() {
	p, err := probe.DecodePolicyOnto(probe.Envoy(), []byte(`{"interval":"5s","unhealthyThreshold":2}`))
	fmt.Println(p.Interval, p.CriticalThreshold, p.InitialState, err)
	_, err = probe.DecodePolicy([]byte(`{"criticalThreshold":2,"unhealthyThreshold":2}`))
	fmt.Println(err)
	_, err = probe.DecodePolicy([]byte(`{"warningThreshold":4}`))
	fmt.Println(err)
	// Output:
	// 5s 2 critical <nil>
	// probe: policy JSON: both criticalThreshold (2) and unhealthyThreshold (2) given: they name the same knob, give one
	// probe: invalid policy: warningThreshold = 4: allowed [1, criticalThreshold (3)]
}
