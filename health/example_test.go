package health_test

import (
	"fmt"
	"time"

	"github.com/gslbkit/gslb/health"
)

// A gate over two signals: the gateway is unhealthy at once when one fails,
// and the proxy-sync check needs three passes in a row to count again.
func ExampleGate() {
	var endpoints health.EndpointReadiness
	ready := true
	endpoints.Set(health.EndpointSlice{Name: "gw-1", Endpoints: []health.Endpoint{
		{Addresses: []string{"10.0.0.7"}, Conditions: health.EndpointConditions{Ready: &ready}},
	}})
	synced := true
	proxy := health.CheckFunc(func(time.Time) health.Signal {
		if synced {
			return health.Pass()
		}
		return health.Fail("RDS STALE")
	})
	gate, _ := health.NewGate(
		health.GateCheck{Name: "endpoints", Check: &endpoints},
		health.GateCheck{Name: "proxySync", Check: proxy, RecoveryThreshold: 3},
	)
	now := time.Unix(0, 0)
	for i, s := range []bool{true, false, true, true, true} {
		synced = s
		fmt.Printf("reconcile %d: %v\n", i+1, gate.Evaluate(now))
		now = now.Add(10 * time.Second)
	}
	// Output:
	// reconcile 1: healthy
	// reconcile 2: unhealthy: proxySync (RDS STALE)
	// reconcile 3: unhealthy: proxySync (passing, recovering: needs 3 consecutive passes)
	// reconcile 4: unhealthy: proxySync (passing, recovering: needs 3 consecutive passes)
	// reconcile 5: healthy
}

// Envoy's panic threshold: with fewer than half the endpoints healthy, all
// of them are used.
func ExampleSelect() {
	healthy := map[string]bool{"a": true, "b": false, "c": false}
	isHealthy := func(e string) bool { return healthy[e] }
	s, _ := health.Select(health.EnvoyPanic(), []string{"a", "b", "c"}, isHealthy)
	fmt.Println(s.Use, "panic:", s.Panic)
	s, _ = health.Select(health.FailClosed(), []string{"a", "b", "c"}, isHealthy)
	fmt.Println(s.Use, "panic:", s.Panic)
	_, err := health.Select(health.Panic{Mode: health.PanicEnvoy, Threshold: 0}, []string{"b", "c"}, isHealthy)
	fmt.Println(err)
	// Output:
	// [a b c] panic: true
	// [a] panic: false
	// health: no healthy upstream (0 of 2 endpoints healthy, panic mode envoy)
}

// Outlier detection: five 5xx in a row eject an endpoint for the base
// ejection time; the analysis returns it when that time has passed.
func ExampleOutlier() {
	cfg := health.DefaultOutlierConfig()
	cfg.AlwaysEjectOne = true // with 3 endpoints the 10 % cap would eject none
	d, _ := health.NewOutlier(cfg)
	for _, ep := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		d.Add(ep)
	}
	now := time.Unix(0, 0)
	for i := 0; i < 5; i++ {
		if ev, ok := d.Report(now, "10.0.0.2", health.Response(503)); ok {
			fmt.Println(ev)
		}
	}
	for t := 10 * time.Second; t <= 30*time.Second; t += 10 * time.Second {
		for _, ev := range d.Tick(now.Add(t), nil) {
			fmt.Println("after", t, ev)
		}
	}
	// Output:
	// 10.0.0.2 ejected (consecutive5xx) for 30s
	// after 30s 10.0.0.2 returned (ejectionTimeElapsed)
}
