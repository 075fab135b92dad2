package heartbeat_test

import (
	"context"
	"fmt"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/provider/memory"
)

// Example signs a beat, stores it in an in-memory zone, and judges the
// zone as a peer would, before and after the beat goes stale.
func Example() {
	ctx := context.Background()
	zone := new(memory.Provider)
	if err := zone.AddZone("global.example.test."); err != nil {
		panic(err)
	}
	kr, err := heartbeat.NewKeyring(heartbeat.Key{ID: "k1", Secret: []byte("a shared secret of 32 bytes.....")})
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	text, err := kr.Seal(heartbeat.Global, heartbeat.Beat{Cluster: "eu-1", Region: "europe", Time: now, Gateways: 2})
	if err != nil {
		panic(err)
	}
	name, _ := heartbeat.Naming{}.Label("eu-1")
	if _, err := zone.SetRecords(ctx, "global.example.test.", []libdns.Record{libdns.TXT{Name: name, TTL: 5 * time.Second, Text: text}}); err != nil {
		panic(err)
	}
	fmt.Println(name, "TXT", text)

	r, err := heartbeat.NewReader(heartbeat.DefaultReaderConfig(heartbeat.Global, "global.example.test."), zone,
		heartbeat.ReaderOptions{Keyring: kr})
	if err != nil {
		panic(err)
	}
	for _, later := range []time.Duration{10 * time.Second, 36 * time.Second} {
		snap, err := r.Read(ctx, now.Add(later))
		if err != nil {
			panic(err)
		}
		c, _ := snap.Cluster("eu-1")
		fmt.Printf("after %v: %s fresh=%v (%s), region europe healthy=%v\n", later, c.Cluster, c.Fresh, c.Reason, snap.Healthy("europe"))
	}
	// Output:
	// health-001-eu-1 TXT v=gslb1;c=eu-1;r=europe;t=1795953600000;g=2;k=k1;m=JbJxS3MYHMrPjdJhqlPlc2Fe4lpagwsi8ZZCoIJzB0s
	// after 10s: eu-1 fresh=true (fresh), region europe healthy=true
	// after 36s: eu-1 fresh=false (too-old), region europe healthy=false
}
