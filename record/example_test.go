package record_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record"
)

// A failover policy publishes the healthy addresses of a service; when all
// of them fail the last set is held; an explicit withdraw removes the name.
func Example() {
	ctx := context.Background()
	zone := &memory.Provider{}
	_ = zone.AddZone("example.com.")
	r, err := record.New(zone, record.LocalConfig("deploy-eu"), record.Options{})
	if err != nil {
		panic(err)
	}
	app := record.RRSet{Zone: "example.com.", Name: "app", Type: "A", TTL: 30 * time.Second,
		Values: []string{"192.0.2.1", "192.0.2.2"}}

	rep, _ := r.Apply(ctx, record.Desired{Sets: []record.RRSet{app}})
	fmt.Print(rep.Changes)
	fmt.Println("writes:", rep.Writes)

	rep, _ = r.ReconcileOnce(ctx)
	fmt.Println("steady state writes:", rep.Writes)

	app.Values = nil // every target failed
	rep, _ = r.Apply(ctx, record.Desired{Sets: []record.RRSet{app}})
	fmt.Println("held:", rep.Held[0].Key, rep.Held[0].Published.Values, errors.Is(rep.Held[0].Err(), record.ErrEmptySet))

	rep, _ = r.Apply(ctx, record.Desired{Withdraw: []record.Key{{Zone: "example.com.", Name: "app"}}})
	fmt.Print(rep.Changes)
	// Output:
	// zone example.com.
	//   claim   _gslb-owner.app TXT 300 deploy-eu
	//   create  app A 30 192.0.2.1 192.0.2.2
	// writes: 2
	// steady state writes: 0
	// held: app.example.com. A [192.0.2.1 192.0.2.2] true
	// zone example.com.
	//   delete  app A 30 192.0.2.1 192.0.2.2
	//   release _gslb-owner.app TXT 300 deploy-eu
}

// Plan is pure: it compares a desired state with a zone's records and
// refuses to touch what it does not own.
func ExamplePlan() {
	current := []record.Zone{{Name: "example.com.", Records: []libdns.Record{
		libdns.TXT{Name: "_gslb-owner.www", TTL: 5 * time.Minute, Text: "deploy-eu"},
		libdns.CNAME{Name: "www", TTL: time.Minute, Target: "pool-a.example.com."},
		libdns.CNAME{Name: "shop", TTL: time.Minute, Target: "someone.else.net."},
	}}}
	desired := record.Desired{Sets: []record.RRSet{
		{Zone: "example.com.", Name: "www", Type: "CNAME", TTL: time.Minute, Values: []string{"pool-b.example.com."}},
		{Zone: "example.com.", Name: "shop", Type: "CNAME", TTL: time.Minute, Values: []string{"pool-b.example.com."}},
	}}
	changes, err := record.Plan(desired, current, record.DefaultConfig("deploy-eu"))
	if err != nil {
		panic(err)
	}
	fmt.Print(changes)
	fmt.Println(errors.Is(changes.Refused[0].Err, record.ErrNotOwned))
	// Output:
	// zone example.com.
	//   update  www CNAME 60 pool-a.example.com. -> 60 pool-b.example.com.
	// refused: record: shop.example.com. holds records without an owner marker; adopt it to manage it
	// true
}

// In dry-run mode the reconciler prints what it would do and writes nothing.
func ExampleConfig_dryRun() {
	zone := &memory.Provider{}
	_ = zone.AddZone("example.com.")
	cfg := record.LocalConfig("deploy-eu")
	cfg.DryRun = true
	r, _ := record.New(zone, cfg, record.Options{DryRunOutput: os.Stdout})
	_, _ = r.Apply(context.Background(), record.Desired{Sets: []record.RRSet{
		{Zone: "example.com.", Name: "@", Type: "AAAA", TTL: time.Minute, Values: []string{"2001:db8::1"}},
	}})
	// Output:
	// dry run, not applied:
	// zone example.com.
	//   claim   _gslb-owner TXT 300 deploy-eu
	//   create  @ AAAA 60 2001:db8::1
}

// Run applies the latest desired state from its own goroutine; Set may be
// called from anywhere. Here an observer signals once the zone matches.
func ExampleReconciler_Run() {
	zone := &memory.Provider{}
	_ = zone.AddZone("example.com.")
	applied := make(chan int, 16)
	obs := record.ObserverFunc(func(e record.Event) {
		if a, ok := e.(record.AppliedEvent); ok {
			applied <- a.Writes
		}
	})
	r, _ := record.New(zone, record.LocalConfig("deploy-eu"), record.Options{Observer: obs})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	_ = r.Set(record.Desired{Sets: []record.RRSet{
		{Zone: "example.com.", Name: "www", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.7"}},
	}})
	for w := range applied {
		if w > 0 {
			fmt.Println("applied with", w, "writes; pending:", r.Pending())
			break
		}
	}
	cancel()
	fmt.Println("run returned:", <-done)
	// Output:
	// applied with 2 writes; pending: false
	// run returned: <nil>
}

// Two leaders write one zone in turn, each with the fencing token of its
// term. Once the newer one has written, the store itself refuses the
// older one, which stops writing until it is given a higher token.
func Example_fencing() {
	ctx := context.Background()
	zone := &memory.Provider{}
	_ = zone.AddZone("example.com.")
	cfg := record.LocalConfig("deploy-eu")
	old, _ := record.New(zone, cfg, record.Options{FenceToken: 4})
	cur, _ := record.New(zone, cfg, record.Options{FenceToken: 5})
	app := func(ip string) record.Desired {
		return record.Desired{Sets: []record.RRSet{{Zone: "example.com.", Name: "app", Type: "A",
			TTL: 30 * time.Second, Values: []string{ip}}}}
	}

	_, err := old.Apply(ctx, app("192.0.2.1"))
	fmt.Println("term 4:", err)
	_, err = cur.Apply(ctx, app("192.0.2.2"))
	fmt.Println("term 5:", err)
	_, err = old.Apply(ctx, app("192.0.2.1")) // the deposed leader, late
	fmt.Println("term 4 again, fenced:", errors.Is(err, record.ErrFenced))

	recs, _ := zone.GetRecords(ctx, "example.com.")
	for _, r := range recs {
		if rr := r.RR(); rr.Type == "A" || rr.Name == "_gslb-fence" {
			fmt.Println(rr.Name, rr.Type, rr.Data)
		}
	}
	// Output:
	// term 4: <nil>
	// term 5: <nil>
	// term 4 again, fenced: true
	// _gslb-fence TXT deploy-eu 5 0
	// app A 192.0.2.2
}
