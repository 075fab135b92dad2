// Package zonejson writes zones of the internal/zonedata model as the JSON
// of provider/memory's Snapshot while it walks them (Write), byte for byte
// what encoding/json writes for the Snapshot, without building it: a
// snapshot of a large zone is a second copy of every record, and writing
// one to a file or a response would hold both at once.
// memory.SnapshotView.WriteJSON is Write over one state of the store; the
// reading side, memory.SnapshotBuilder, stays in memory, where records are
// validated.
package zonejson
