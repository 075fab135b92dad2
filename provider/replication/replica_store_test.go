package replication

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
)

func savedFixture(t testing.TB) savedCopy {
	t.Helper()
	p := new(memory.Provider)
	if err := p.AddZone("example.test."); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.RR{Name: "www", Type: "A", TTL: 30 * time.Second, Data: "192.0.2.1"},
		libdns.RR{Name: "t", Type: "TXT", TTL: 30 * time.Second, Data: "a \"quoted\" \\ text\n"},
	}); err != nil {
		t.Fatal(err)
	}
	s := p.Snapshot()
	s.Version, s.Epoch = 42, "0123abcd"
	return savedCopy{Zones: []string{"example.test."}, Region: "eu", Saved: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC), Snapshot: s}
}

func encodeSaved(t testing.TB, c savedCopy) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writeSavedCopy(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSavedCopyRoundTrip(t *testing.T) {
	c := savedFixture(t)
	data := encodeSaved(t, c)
	if !strings.HasPrefix(string(data), "gslbkit-replica-copy 1\n") {
		t.Fatalf("header: %q", data[:30])
	}
	got, err := parseSavedCopy(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, c)
	}
	// Every single-byte change is caught (by the checksum or the header).
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x20
		if _, err := parseSavedCopy(bad); err == nil {
			t.Fatalf("byte %d changed (%q), still parsed", i, data[i])
		}
	}
	for n := range len(data) {
		if _, err := parseSavedCopy(data[:n]); err == nil {
			t.Fatalf("truncated to %d bytes, still parsed", n)
		}
	}
}

// FuzzParseSavedCopy feeds arbitrary bytes to the parser of a replica's
// saved copy: errors are fine, panics are not, and what parses writes back
// to bytes that parse to the same copy.
func FuzzParseSavedCopy(f *testing.F) {
	good := encodeSaved(f, savedFixture(f))
	f.Add(good)
	f.Add([]byte("gslbkit-replica-copy 2\n{}\nsha256 " + strings.Repeat("0", 64) + "\n"))
	f.Add([]byte("gslbkit-replica-copy 1\n"))
	f.Add([]byte("PK\x03\x04"))
	f.Add(good[:len(good)/2])
	payload := good[bytes.IndexByte(good, '\n')+1 : len(good)-len("sha256 ")-65]
	f.Add(payload)
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data)
		// The same bytes as the payload of a file with a good header and
		// checksum, so that mutations reach the JSON decoder too.
		sum := sha256.Sum256(data)
		check(t, fmt.Appendf([]byte("gslbkit-replica-copy 1\n"), "%ssha256 %x\n", data, sum))
	})
}

func check(t *testing.T, data []byte) {
	{
		c, err := parseSavedCopy(data)
		if err != nil {
			return
		}
		again, err := parseSavedCopy(encodeSaved(t, c))
		if err != nil {
			t.Fatalf("a parsed copy does not parse once written: %v", err)
		}
		if !reflect.DeepEqual(normalise(again), normalise(c)) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, c)
		}
	}
}

// normalise makes nil and empty slices, and time zones, alike for comparison.
func normalise(c savedCopy) savedCopy {
	c.Saved = c.Saved.UTC()
	if c.Zones == nil {
		c.Zones = []string{}
	}
	for i := range c.Snapshot.Zones {
		if c.Snapshot.Zones[i].Records == nil {
			c.Snapshot.Zones[i].Records = []memory.ZoneRecord{}
		}
	}
	return c
}

// TestSavedCopyFormatKept: a file written by the writer before copies were
// streamed (testdata/replica-copy-format1) is read, and the streamed
// writer writes the same bytes for the same copy.
func TestSavedCopyFormatKept(t *testing.T) {
	old, err := os.ReadFile("testdata/replica-copy-format1")
	if err != nil {
		t.Fatal(err)
	}
	want := savedFixture(t)
	got, err := parseSavedCopy(old)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read:\n got %+v\nwant %+v", got, want)
	}
	p := new(memory.Provider)
	if err := p.Restore(want.Snapshot); err != nil {
		t.Fatal(err)
	}
	view := p.SnapshotView()
	view.Version, view.Epoch = want.Snapshot.Version, want.Snapshot.Epoch
	var b bytes.Buffer
	if err := writeCopy(&b, want.Zones, want.Region, want.Saved, func(w io.Writer) error { return view.WriteJSON(w, nil) }); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(old) {
		t.Fatalf("written:\n%s\nwant\n%s", b.Bytes(), old)
	}
}
