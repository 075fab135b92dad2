package journal

import "slices"

// Append returns j (whose entries have the versions version reads) with entries appended, trimmed to at most limit entries
// by dropping whole versions from the front, and the new floor (the
// version below which the journal no longer reaches; floor if nothing was
// dropped).
func Append[E any](j []E, floor uint64, entries []E, limit int, version func(*E) uint64) ([]E, uint64) {
	j = append(j, entries...)
	dropped := 0
	for len(j) > limit {
		v := version(&j[0])
		i := 0
		for i < len(j) && version(&j[i]) == v {
			i++
		}
		j = j[i:]
		dropped += i
		floor = v
	}
	if dropped > limit && dropped > len(j) {
		// A large write dropped: its entries would stay reachable through
		// the array behind j (a million-record load kept its whole journal
		// so); keep only what j holds.
		j = slices.Clone(j)
	}
	return j, floor
}

// After returns the entries of j (at version current, reaching back to
// floor) with versions greater than since, and true; or nil and false when
// j no longer reaches back to since. since at or beyond current yields no
// entries and true. The result's capacity is its length, so appending to
// it never writes into j.
func After[E any](j []E, floor, current, since uint64, version func(*E) uint64) ([]E, bool) {
	if since >= current {
		return nil, true
	}
	if since < floor {
		return nil, false
	}
	lo, hi := 0, len(j)
	for lo < hi {
		m := (lo + hi) / 2
		if version(&j[m]) > since {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return j[lo:len(j):len(j)], true
}
