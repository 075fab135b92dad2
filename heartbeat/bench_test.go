package heartbeat

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/libdns/libdns"
)

func BenchmarkSeal(b *testing.B) {
	kr := mustKeyring(b, testKey)
	beat := Beat{Cluster: "eu-west-1a", Region: "europe", Time: t0, Gateways: 4}
	buf := make([]byte, 0, MaxBeatLen)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		buf, err = kr.AppendSeal(buf[:0], Global, beat)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeUnsigned(b *testing.B) {
	beat := Beat{Cluster: "eu-west-1a", Region: "europe", Time: t0, Gateways: 4}
	buf := make([]byte, 0, MaxBeatLen)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = beat.AppendText(buf[:0])
	}
}

func BenchmarkOpen(b *testing.B) {
	kr := mustKeyring(b, testKey)
	text, err := kr.Seal(Global, Beat{Cluster: "eu-west-1a", Region: "europe", Time: t0, Gateways: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kr.Open(Global, text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBeat(b *testing.B) {
	text := "v=gslb1;c=eu-west-1a;r=europe;t=1795964400000;g=4"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseBeat(text); err != nil {
			b.Fatal(err)
		}
	}
}

func beats500(b *testing.B, kr *Keyring) []libdns.Record {
	var recs []libdns.Record
	for i := range 500 {
		c := fmt.Sprintf("c%03d", i)
		text, err := kr.Seal(Global, Beat{Cluster: c, Region: fmt.Sprintf("r%02d", i%20), Time: t0.Add(-time.Duration(i) * 100 * time.Millisecond)})
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, libdns.TXT{Name: "health-001-" + c, TTL: 5 * time.Second, Text: text})
	}
	return recs
}

type sliceGetter []libdns.Record

func (s sliceGetter) GetRecords(context.Context, string) ([]libdns.Record, error) { return s, nil }

// BenchmarkReader500 reads and judges a zone of 500 clusters' signed beats
// in 20 regions from the in-memory zone (whose GetRecords is included).
func BenchmarkReader500(b *testing.B) {
	zone := newZone(b, testGlobal)
	kr := mustKeyring(b, testKey)
	if _, err := zone.SetRecords(context.Background(), testGlobal, beats500(b, kr)); err != nil {
		b.Fatal(err)
	}
	benchReader(b, zone, kr)
}

// BenchmarkReader500Judge is BenchmarkReader500 without the provider: the
// records come from a slice, so only listing, verifying, judging and
// diffing are measured.
func BenchmarkReader500Judge(b *testing.B) {
	kr := mustKeyring(b, testKey)
	benchReader(b, sliceGetter(beats500(b, kr)), kr)
}

func benchReader(b *testing.B, g libdns.RecordGetter, kr *Keyring) {
	r, err := NewReader(DefaultReaderConfig(Global, testGlobal), g, ReaderOptions{Keyring: kr, Observer: ObserverFunc(func(Event) {})})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Alternate so every other read changes the fresh/stale picture.
		now := t0.Add(time.Duration(i%2) * 40 * time.Second)
		i++
		snap, err := r.Read(ctx, now)
		if err != nil || len(snap.Clusters) != 500 {
			b.Fatalf("read: %v, %d clusters", err, len(snap.Clusters))
		}
	}
}
