package provider_test

import (
	"context"
	"testing"

	"github.com/gslbkit/gslb/provider"
	"github.com/libdns/libdns"
)

// BenchmarkChain measures the overhead of a meter and a retry around a
// trivial provider (a rate limit would measure its own pacing).
func BenchmarkChain(b *testing.B) {
	retry, _ := provider.NewRetry(provider.DefaultRetryConfig())
	p := provider.Wrap(&tiny{}, provider.NewMeter(nil), retry)
	recs := []libdns.Record{libdns.TXT{Name: "a", Text: "x"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.SetRecords(ctx, "z.", recs)
	}
}

// BenchmarkDirect is the same calls without wrappers, for comparison.
func BenchmarkDirect(b *testing.B) {
	p := &tiny{}
	recs := []libdns.Record{libdns.TXT{Name: "a", Text: "x"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.SetRecords(ctx, "z.", recs)
	}
}
