package providertest_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
)

// Faulty with a fixed seed injects the same faults on every run: here a
// third of the calls are throttled and a fifth are applied in part.
func ExampleFaulty() {
	f, err := providertest.NewFaulty(&mapProvider{}, providertest.FaultConfig{
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

// mapProvider is a strict in-test libdns provider: a map behind a lock
// that refuses a CNAME beside other data and at the apex. It lets this
// package test the suite and Faulty without depending on provider/memory.
type mapProvider struct {
	mu   sync.Mutex
	recs []libdns.RR
}

var errMapCNAME = errors.New("ref: CNAME conflict")

func (p *mapProvider) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]libdns.Record, 0, len(p.recs))
	for _, r := range p.recs {
		pr, err := r.Parse()
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

func (p *mapProvider) conflicts(next []libdns.RR) bool {
	names := map[string][2]int{} // cname count, other count
	for _, r := range next {
		c := names[r.Name]
		if r.Type == "CNAME" {
			if r.Name == "@" {
				return true
			}
			c[0]++
		} else {
			c[1]++
		}
		names[r.Name] = c
	}
	for _, c := range names {
		if c[0] > 1 || (c[0] > 0 && c[1] > 0) {
			return true
		}
	}
	return false
}

func (p *mapProvider) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	next := append([]libdns.RR(nil), p.recs...)
	for _, r := range recs {
		next = append(next, r.RR())
	}
	if p.conflicts(next) {
		return nil, errMapCNAME
	}
	p.recs = next
	return recs, nil
}

func (p *mapProvider) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	type nt struct{ n, t string }
	given := map[nt]bool{}
	for _, r := range recs {
		rr := r.RR()
		given[nt{rr.Name, rr.Type}] = true
	}
	var next []libdns.RR
	for _, r := range p.recs {
		if !given[nt{r.Name, r.Type}] {
			next = append(next, r)
		}
	}
	for _, r := range recs {
		next = append(next, r.RR())
	}
	if p.conflicts(next) {
		return nil, errMapCNAME
	}
	p.recs = next
	return recs, nil
}

func (p *mapProvider) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var next []libdns.RR
	var deleted []libdns.Record
	for _, r := range p.recs {
		hit := false
		for _, d := range recs {
			dr := d.RR()
			if dr.Name == r.Name && (dr.Type == "" || dr.Type == r.Type) &&
				(dr.TTL == 0 || dr.TTL == r.TTL) && (dr.Data == "" || strings.EqualFold(dr.Data, r.Data)) {
				hit = true
				break
			}
		}
		if hit {
			pr, _ := r.Parse()
			deleted = append(deleted, pr)
		} else {
			next = append(next, r)
		}
	}
	p.recs = next
	return deleted, nil
}
