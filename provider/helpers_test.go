package provider_test

import (
	"context"
	"sync"
	"testing"

	"github.com/libdns/libdns"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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

// readOnly implements only libdns.RecordGetter.
type readOnly struct{}

func (readOnly) GetRecords(context.Context, string) ([]libdns.Record, error) { return nil, nil }
