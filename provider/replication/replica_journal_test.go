package replication

import (
	"bytes"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
)

func journalFixture(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, e := range []journalEntry{
		{Epoch: "e1", Base: 1, Version: 3, Changes: []memory.Change{{Version: 3, Kind: memory.ChangeRRSet, Zone: "example.test.", Serial: 7, Name: "www", Type: "A", Records: []memory.ZoneRecord{{Name: "www", Type: "A", TTL: 30, Data: "192.0.2.1"}}}}},
		{Epoch: "e1", Base: 3, Version: 4, Changes: []memory.Change{{Version: 4, Kind: memory.ChangeRRSet, Zone: "example.test.", Serial: 8, Name: "www", Type: "A"}}},
	} {
		line, err := journalLine(e)
		if err != nil {
			t.Fatal(i, err)
		}
		b.Write(line)
	}
	return b.Bytes()
}

// TestReadJournal: entries before the copy or of another epoch are
// skipped, a gap, a torn or a changed line ends the journal.
func TestReadJournal(t *testing.T) {
	data := journalFixture(t)
	first := int64(bytes.IndexByte(data, '\n') + 1)
	for _, tc := range []struct {
		name     string
		data     []byte
		epoch    string
		version  uint64
		versions []uint64
		good     int64
	}{
		{"both", data, "e1", 1, []uint64{3, 4}, int64(len(data))},
		{"the first is in the copy", data, "e1", 3, []uint64{4}, int64(len(data))},
		{"both in the copy", data, "e1", 4, nil, int64(len(data))},
		{"another epoch", data, "e2", 1, nil, int64(len(data))},
		{"a gap", data, "e1", 0, nil, 0},
		{"torn", data[:len(data)-5], "e1", 1, []uint64{3}, first},
		{"no newline", data[:len(data)-1], "e1", 1, []uint64{3}, first},
		{"changed", bytes.Replace(data, []byte(`"serial":8`), []byte(`"serial":9`), 1), "e1", 1, []uint64{3}, first},
		{"empty", nil, "e1", 1, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, starts, good := readJournal(bytes.NewReader(tc.data), tc.epoch, tc.version, 1<<20)
			var versions []uint64
			for _, e := range entries {
				versions = append(versions, e.Version)
			}
			if !equalU64(versions, tc.versions) || good != tc.good || len(starts) != len(entries) {
				t.Fatalf("versions %v good %d; want %v %d", versions, good, tc.versions, tc.good)
			}
		})
	}
	if _, _, good := readJournal(bytes.NewReader(data), "e1", 1, 100); good != 0 {
		t.Fatalf("a line over the limit is read (good %d)", good)
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzReadJournal feeds arbitrary bytes to the reader of a replica's
// journal: errors end it, panics are not allowed, the good prefix is
// within the data and made of whole lines that read back the same.
func FuzzReadJournal(f *testing.F) {
	good := journalFixture(f)
	f.Add(good, uint64(1))
	f.Add(good[:len(good)/2], uint64(1))
	f.Add([]byte("sha256 "+string(bytes.Repeat([]byte("0"), 64))+" {}\n"), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, version uint64) {
		entries, starts, good := readJournal(bytes.NewReader(data), "e1", version, 1<<16)
		if good < 0 || good > int64(len(data)) || (good > 0 && data[good-1] != '\n') {
			t.Fatalf("good prefix %d of %d bytes", good, len(data))
		}
		if len(starts) != len(entries) {
			t.Fatalf("%d starts for %d entries", len(starts), len(entries))
		}
		again, _, good2 := readJournal(bytes.NewReader(data[:good]), "e1", version, 1<<16)
		if len(again) != len(entries) || good2 != good {
			t.Fatalf("the good prefix reads %d entries to %d, the whole %d to %d", len(again), good2, len(entries), good)
		}
	})
}
