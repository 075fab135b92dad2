package providertest_test

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/zoneops"
)

// refProvider is a strict in-test libdns provider: a map behind a lock
// that refuses a CNAME beside other data and at the apex. It lets this
// package test the suite and Faulty without depending on provider/memory.
type refProvider struct {
	mu   sync.Mutex
	recs []libdns.RR
}

// stored returns r as the provider keeps it: a TXT in presentation form
// (several strings) with its strings written canonically, or as the one
// text they make when they are that text cut at 255 bytes.
func stored(r libdns.Record) libdns.RR {
	rr := r.RR()
	if _, isRR := r.(libdns.RR); isRR && rr.Type == "TXT" && zoneops.IsTXTStrings(rr.Data) {
		if ss, ok := zoneops.ParseTXTStrings(rr.Data); ok {
			rr.Data, _ = zoneops.TXTData(ss)
		}
	}
	return rr
}

// typed returns a stored record as GetRecords returns it.
func typed(r libdns.RR) (libdns.Record, error) {
	if r.Type == "TXT" && zoneops.IsTXTStrings(r.Data) {
		return r, nil
	}
	return r.Parse()
}

var errCNAME = errors.New("ref: CNAME conflict")

func (p *refProvider) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]libdns.Record, 0, len(p.recs))
	for _, r := range p.recs {
		pr, err := typed(r)
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

func (p *refProvider) conflicts(next []libdns.RR) bool {
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

func (p *refProvider) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	next := append([]libdns.RR(nil), p.recs...)
	var created []libdns.Record
	for _, r := range recs {
		rr := stored(r)
		dup := false
		for _, o := range next {
			dup = dup || (o.Name == rr.Name && o.Type == rr.Type && o.Data == rr.Data)
		}
		if !dup {
			next = append(next, rr)
			tr, _ := typed(rr)
			created = append(created, tr)
		}
	}
	if p.conflicts(next) {
		return nil, errCNAME
	}
	p.recs = next
	return created, nil
}

func (p *refProvider) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
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
		next = append(next, stored(r))
	}
	if p.conflicts(next) {
		return nil, errCNAME
	}
	p.recs = next
	return recs, nil
}

func (p *refProvider) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
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
			pr, _ := typed(r)
			deleted = append(deleted, pr)
		} else {
			next = append(next, r)
		}
	}
	p.recs = next
	return deleted, nil
}
