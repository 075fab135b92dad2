package memory

import (
	"context"

	"github.com/gslbkit/gslb/internal/journal"
)

// ChangeKind says what one journal entry records.
type ChangeKind string

const (
	// ChangeRRSet: the RRset (Zone, Name, Type) now holds exactly Records
	// (no records means the RRset was removed); it held Old before.
	ChangeRRSet ChangeKind = "rrset"
	// ChangeAddZone: the zone Zone was created with the SOA in SOA (its apex
	// records follow as ChangeRRSet entries of the same version).
	ChangeAddZone ChangeKind = "addZone"
	// ChangeRemoveZone: the zone Zone was removed with all its records.
	ChangeRemoveZone ChangeKind = "removeZone"
)

// ZoneRecord is the JSON form of one record in snapshots and changes.
type ZoneRecord struct {
	// Name is relative to the zone, lower case, "@" at the apex.
	Name string `json:"name"`
	// Type is the record type in upper case ("A", "CNAME", ...).
	Type string `json:"type"`
	// TTL is in seconds.
	TTL uint32 `json:"ttl"`
	// Data is the record data in libdns form (unescaped, as libdns.RR.Data);
	// for a TXT record, its text (the strings joined).
	Data string `json:"data"`
	// Strings are a TXT record's character-strings, unescaped, when they
	// are not its text cut into 255-byte strings (format 2; a reader of
	// format 1 sees the joined text in Data).
	Strings []string `json:"strings,omitempty"`
}

// ReplicationFormat is the version of the snapshot and changes format this
// package writes (Snapshot.Format, replication.ChangesResponse.Format) and
// the newest it reads. 2 added ZoneRecord.Strings; 0 (absent) and 1 are the first format.
const ReplicationFormat = 2

// Change is one entry of the Provider's journal. Every call that changes the
// Provider gets the next Version; its entries all carry that version, and a
// replica that applies them all applies the call atomically.
type Change struct {
	Version uint64     `json:"version"`
	Kind    ChangeKind `json:"kind"`
	Zone    string     `json:"zone"`
	// Serial is the zone's SOA serial after the change.
	Serial uint32 `json:"serial"`
	// Name and Type identify the RRset of a ChangeRRSet entry.
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"`
	// Records is the whole RRset after the change.
	Records []ZoneRecord `json:"records,omitempty"`
	// Old is the whole RRset before the change (empty when the RRset is
	// new). Old and Records together say what the change deleted and what
	// it added, which is what an incremental zone transfer (IXFR, RFC 1995)
	// sends. The replication Handler does not send it (replicas replace
	// whole RRsets), so the replication format is unchanged.
	Old []ZoneRecord `json:"old,omitempty"`
	// PrevSerial is the zone's serial before the change of a ChangeRRSet
	// entry (0 for the apex records of a new zone): it chains a zone's
	// entries from serial to serial for IXFR. Like Old, the replication
	// Handler does not send it.
	PrevSerial uint32 `json:"prevSerial,omitempty"`
	// SOA is the new zone's SOA in a ChangeAddZone entry.
	SOA *SOA `json:"soa,omitempty"`
}

// Version returns the Provider's current version: 0 for a new Provider,
// increased by one by every call that changes any zone. It never blocks.
func (p *Provider) Version() uint64 { return p.load().version }

// Wait blocks until the Provider's version is greater than after, and returns
// that version; or until ctx ends, returning ctx's error. It is the way to
// watch for changes: loop on v, err = p.Wait(ctx, v).
func (p *Provider) Wait(ctx context.Context, after uint64) (uint64, error) {
	for {
		s := p.load()
		if s.version > after {
			return s.version, nil
		}
		select {
		case <-s.next:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// Changes returns the journal entries with versions greater than since, in
// order, and true; or nil and false when the journal no longer reaches back
// that far (the caller then needs a full Snapshot). since at or beyond the
// current version yields no entries and true. The journal holds at most
// Config.JournalSize entries, dropping whole versions from the oldest.
// The returned slice must not be modified.
func (p *Provider) Changes(since uint64) ([]Change, bool) {
	return p.load().changes(since)
}

// History is the Provider's history after a version, read from one
// snapshot of the Provider (see Since): either the journal entries after
// that version or, when they cannot bring a copy up to date, the whole
// store.
type History struct {
	// Version and Epoch are the Provider's at the snapshot.
	Version uint64
	Epoch   string
	// Changes are the journal entries after the version asked for, in
	// order (not to be modified); nil when Full is set.
	Changes []Change
	// Full is every zone, set when the journal does not reach back to the
	// version asked for, when that version is beyond the current one, or
	// when the epoch asked for is not the Provider's.
	Full *Snapshot
}

// Since returns the history a copy of the Provider at version since, of
// history epoch ("" for any), needs to catch up: the changes after since,
// or a full snapshot (see History). It is what a replication source
// serves, read from one consistent state.
func (p *Provider) Since(since uint64, epoch string) History {
	s := p.load()
	h := History{Version: s.version, Epoch: s.epoch}
	if since > s.version || since < s.floor || (epoch != "" && epoch != s.epoch) {
		snap := s.snapshot()
		h.Full = &snap
		return h
	}
	h.Changes, _ = s.changes(since)
	return h
}

func (s *state) changes(since uint64) ([]Change, bool) {
	return journal.After(s.journal, s.floor, s.version, since, changeVersion)
}

// appendJournal returns the journal with entries appended, trimmed to at
// most limit entries by whole versions, and the new floor (internal/journal).
func appendJournal(j []Change, floor uint64, entries []Change, limit int) ([]Change, uint64) {
	return journal.Append(j, floor, entries, limit, changeVersion)
}

func changeVersion(c *Change) uint64 { return c.Version }
