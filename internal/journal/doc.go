// Package journal is the bounded, versioned change log behind a store's
// history: entries in version order, several entries per version, trimmed
// from the oldest by whole versions, read back after a version with a
// binary search. provider/memory keeps its Changes in one. The functions
// are pure: a journal is a slice that older readers keep sharing, since
// Append only ever writes beyond every published length.
package journal
