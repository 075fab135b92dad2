package zonedata

import (
	"slices"
	"strings"
)

// SortedOwners returns z's owner names in canonical order (SortedNames'
// order) with no more memory than the list itself: SortedNames keeps a
// sort key per name, some 200 bytes each, which for a zone of a million
// names is a sixth of the zone again.
func SortedOwners(z *Zone) []string {
	names := make([]string, 0, len(z.Nodes))
	for n := range z.Nodes {
		names = append(names, n)
	}
	slices.SortFunc(names, CanonicalCompare)
	return names
}

// CanonicalCompare is zonerecord.CanonicalCompare without splitting the
// names: labels compared from the right, as strings in presentation form
// (an escaped dot is not a label boundary); a name that runs out of labels
// first sorts first.
func CanonicalCompare(a, b string) int {
	ea, eb := len(a), len(b)
	if ea > 0 && a[ea-1] == '.' && !escapedAt(a, ea-1) {
		ea--
	}
	if eb > 0 && b[eb-1] == '.' && !escapedAt(b, eb-1) {
		eb--
	}
	for ea > 0 && eb > 0 {
		sa, sb := labelStart(a, ea), labelStart(b, eb)
		if c := strings.Compare(a[sa:ea], b[sb:eb]); c != 0 {
			return c
		}
		ea, eb = max(sa-1, 0), max(sb-1, 0)
	}
	switch {
	case ea > 0:
		return 1
	case eb > 0:
		return -1
	}
	return 0
}

// labelStart returns where the label that ends at end (exclusive) begins.
func labelStart(s string, end int) int {
	for i := end - 1; i >= 0; i-- {
		if s[i] == '.' && !escapedAt(s, i) {
			return i + 1
		}
	}
	return 0
}

// escapedAt reports whether s[i] follows an odd run of backslashes.
func escapedAt(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// SortedTypes returns n's record types in Sorted's order (Node.Sorted
// without the copy), appended to types.
func SortedTypes(n *Node, types []uint16) []uint16 {
	for i := 0; i < len(n.recs); i = n.run(i) {
		types = append(types, recType(n.recs[i]))
	}
	return types
}
