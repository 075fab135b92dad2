package kit_test

import (
	"context"
	"fmt"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record/internal/kit"
)

// A kit of one scenario: the first failure names the kit and the scenario.
func ExampleCheck() {
	open := func(context.Context) (*memory.Provider, error) {
		p := &memory.Provider{}
		return p, p.AddZone("example.test.")
	}
	scenarios := []kit.Scenario[*memory.Provider]{{Name: "SetAndRead", Run: func(ctx context.Context, p *memory.Provider, zone string) error {
		if _, err := p.SetRecords(ctx, zone, []libdns.Record{testrecords.Address("app", "192.0.2.1")}); err != nil {
			return err
		}
		return kit.Holds(ctx, p, zone, "after SetRecords", "app", "A", "192.0.2.2")
	}}}
	fmt.Println(kit.Check(context.Background(), "mykit", "example.test.", open, scenarios))
	// Output: mykit: SetAndRead: after SetRecords: app A holds [192.0.2.1], want [192.0.2.2]
}
