package providertest_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
)

// Faulty with a fixed seed injects the same faults on every run: here a
// third of the calls are throttled and a fifth are applied in part.
func ExampleFaulty() {
	f, err := providertest.NewFaulty(&setCounter{}, providertest.FaultConfig{
		Seed:         7,
		ThrottleRate: 0.3,
		PartialRate:  0.2,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	batch := []libdns.Record{
		libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.1"), TTL: time.Minute},
		libdns.Address{Name: "api", IP: netip.MustParseAddr("192.0.2.2"), TTL: time.Minute},
	}
	for i := range 6 {
		_, err := f.SetRecords(context.Background(), "example.test.", batch)
		var fe *providertest.FaultError
		switch {
		case errors.As(err, &fe):
			fmt.Printf("call %d: %s, throttled=%t, applied %d of %d\n", i+1, fe.Kind, fe.Throttled(), fe.Applied, len(batch))
		case err != nil:
			fmt.Printf("call %d: %v\n", i+1, err)
		default:
			fmt.Printf("call %d: ok\n", i+1)
		}
	}
	// Output:
	// call 1: throttle, throttled=true, applied 0 of 2
	// call 2: ok
	// call 3: partial, throttled=false, applied 1 of 2
	// call 4: ok
	// call 5: throttle, throttled=true, applied 0 of 2
	// call 6: ok
}

// setCounter is the smallest provider the example needs: it reads an
// empty zone and counts the records SetRecords is given.
type setCounter struct {
	mu  sync.Mutex
	set int
}

func (p *setCounter) GetRecords(context.Context, string) ([]libdns.Record, error) { return nil, nil }

func (p *setCounter) SetRecords(_ context.Context, _ string, recs []libdns.Record) ([]libdns.Record, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.set += len(recs)
	return recs, nil
}
