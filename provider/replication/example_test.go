package replication_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/libdns/libdns"
)

// observer is a ReplicaObserver made of a function.
type observer func(replication.ReplicaEvent)

func (o observer) Observe(e replication.ReplicaEvent) { o(e) }

// Example replicates a zone over HTTP: a source Provider behind a Handler,
// and a Replica that keeps a local Provider a copy of it.
func Example() {
	ctx := context.Background()
	source := new(memory.Provider)
	_ = source.AddZone("example.test.")
	_, _ = source.SetRecords(ctx, "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
	})
	const secret = "a-shared-secret-of-16+-bytes"
	h, err := replication.NewHandler(source, replication.HandlerConfig{Secret: secret}, nil, nil)
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(h) // serves <base>/snapshot, /changes, /notify
	defer ts.Close()

	local := new(memory.Provider)
	cfg := replication.DefaultReplicaConfig()
	cfg.URL, cfg.Zones, cfg.Auth.Secret = ts.URL+"/replication", []string{"example.test."}, secret
	synced := make(chan replication.ReplicaEvent, 1)
	obs := observer(func(e replication.ReplicaEvent) {
		if e.Kind == replication.ReplicaSynced {
			select {
			case synced <- e:
			default:
			}
		}
	})
	r, err := replication.NewReplica(local, cfg, ts.Client(), obs, nil)
	if err != nil {
		panic(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	e := <-synced
	cancel()
	<-done

	recs, _ := local.GetRecords(ctx, "example.test.")
	for _, rec := range recs {
		rr := rec.RR()
		fmt.Println(rr.Name, rr.Type, rr.Data)
	}
	fmt.Println("full snapshot:", e.Full, "degraded:", r.Degraded())
	// Output:
	// @ NS ns1.example.test.
	// www A 192.0.2.1
	// full snapshot: true degraded: false
}
