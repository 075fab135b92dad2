package provider_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
)

// A provider put in a chain: metered, retried on throttling, rate
// limited. The Faulty wrapper throttles the first call, which Retry
// waits out (1 s by default; here shortened).
func Example() {
	faulty, _ := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{})
	faulty.Inject(providertest.Throttle)

	rc := provider.DefaultRetryConfig()
	rc.ThrottledDelay = 10 * time.Millisecond
	retry, _ := provider.NewRetry(rc)
	limit, _ := provider.NewRateLimit(provider.DefaultRateLimitConfig())
	meter := provider.NewMeter(nil)

	p := provider.Wrap(faulty, meter, retry, limit)
	_, err := p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.1"), TTL: time.Minute},
		libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.2"), TTL: time.Minute},
	})
	fmt.Println("error:", err)

	s := meter.Stats().Method(provider.MethodSetRecords)
	fmt.Println("calls:", s.Calls, "records in:", s.RecordsIn, "errors:", s.Errors)
	fmt.Println("attempts reaching the provider:", faulty.Calls())
	// Output:
	// error: <nil>
	// calls: 1 records in: 2 errors: 0
	// attempts reaching the provider: 2
}

// tiny is a minimal in-test provider: a list of records behind a lock,
// SetRecords replacing by (name, type), DeleteRecords by exact RR.
type tiny struct {
	mu   sync.Mutex
	recs []libdns.Record
}

func (p *tiny) GetRecords(ctx context.Context, _ string) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]libdns.Record(nil), p.recs...), nil
}

func (p *tiny) AppendRecords(ctx context.Context, _ string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recs = append(p.recs, recs...)
	return recs, nil
}

func (p *tiny) SetRecords(ctx context.Context, _ string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	type nt struct{ n, t string }
	given := map[nt]bool{}
	for _, r := range recs {
		given[nt{r.RR().Name, r.RR().Type}] = true
	}
	var keep []libdns.Record
	for _, r := range p.recs {
		if !given[nt{r.RR().Name, r.RR().Type}] {
			keep = append(keep, r)
		}
	}
	p.recs = append(keep, recs...)
	return recs, nil
}

func (p *tiny) DeleteRecords(ctx context.Context, _ string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var keep, gone []libdns.Record
	for _, r := range p.recs {
		hit := false
		for _, d := range recs {
			hit = hit || d.RR() == r.RR()
		}
		if hit {
			gone = append(gone, r)
		} else {
			keep = append(keep, r)
		}
	}
	p.recs = keep
	return gone, nil
}
