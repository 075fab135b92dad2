package journal_test

import (
	"fmt"
	"testing"

	"github.com/gslbkit/gslb/internal/journal"
)

type entry struct {
	v uint64
	s string
}

func version(e *entry) uint64 { return e.v }

func Example() {
	var j []entry
	var floor uint64
	j, floor = journal.Append(j, floor, []entry{{1, "a"}, {1, "b"}}, 3, version)
	j, floor = journal.Append(j, floor, []entry{{2, "c"}, {2, "d"}}, 3, version)
	fmt.Println(j, floor)
	after, ok := journal.After(j, floor, 2, 1, version)
	fmt.Println(after, ok)
	_, ok = journal.After(j, floor, 2, 0, version)
	fmt.Println(ok)
	// Output:
	// [{2 c} {2 d}] 1
	// [{2 c} {2 d}] true
	// false
}

func TestAfter(t *testing.T) {
	j := []entry{{3, "a"}, {4, "b"}, {4, "c"}, {6, "d"}}
	for _, tc := range []struct {
		since uint64
		n     int
		ok    bool
	}{{2, 4, true}, {3, 3, true}, {4, 1, true}, {5, 1, true}, {6, 0, true}, {9, 0, true}, {1, 0, false}} {
		got, ok := journal.After(j, 2, 6, tc.since, version)
		if len(got) != tc.n || ok != tc.ok || cap(got) != len(got) {
			t.Errorf("After(%d) = %v, %v; want %d entries, %v", tc.since, got, ok, tc.n, tc.ok)
		}
	}
}

// TestAppendLargeWriteDropped: a write larger than the limit, dropped
// whole, leaves no large array behind the journal.
func TestAppendLargeWriteDropped(t *testing.T) {
	big := make([]entry, 10000)
	for i := range big {
		big[i] = entry{1, "x"}
	}
	j, floor := journal.Append(nil, 0, big, 100, version)
	j, floor = journal.Append(j, floor, []entry{{2, "a"}}, 100, version)
	if len(j) != 1 || cap(j) > 200 || floor != 1 {
		t.Fatalf("journal len %d cap %d floor %d; want 1 entry, a small array, floor 1", len(j), cap(j), floor)
	}
}
