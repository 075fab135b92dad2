package replication

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gslbkit/gslb/provider/memory"
)

// A Replica with a Dir never serves a version that is not on disk. A
// snapshot is written to a new copy file as it is read, and the file
// renamed into place (and the directory synced) before the snapshot is
// published. A change set is appended to the journal file next to the copy
// and synced before it is applied: a 200 ms sync of a few changes writes
// those changes, not the whole copy. Loading reads the copy, then replays
// the journal's entries that continue it. Once the journal outgrows the
// copy (and at least journalCompactMin), the copy is rewritten at the
// served version and the journal emptied, so replaying it never costs
// more than reading the copy again.
//
// The journal holds one line per change set applied:
//
//	sha256 <64 hex digits of the JSON> <JSON of journalEntry>\n
//
// A line that is torn (a crash during its write) or does not verify ends
// the journal: loading stops there and cuts the file back to the lines
// before it.
const (
	journalFile   = "replica-journal"
	journalFormat = 1
)

// journalCompactMin is the journal size below which the copy is never
// rewritten (a variable for tests).
var journalCompactMin int64 = 1 << 20

// journalEntry is one change set, as applied onto the copy of Epoch at
// version Base, bringing it to Version.
type journalEntry struct {
	Format  int             `json:"format"`
	Epoch   string          `json:"epoch"`
	Base    uint64          `json:"base"`
	Version uint64          `json:"version"`
	Changes []memory.Change `json:"changes"`
}

// journalLine encodes e as one journal line.
func journalLine(e journalEntry) ([]byte, error) {
	e.Format = journalFormat
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	line := make([]byte, 0, len("sha256 ")+64+1+len(b)+1)
	line = append(line, "sha256 "...)
	line = hex.AppendEncode(line, sum[:])
	line = append(line, ' ')
	line = append(line, b...)
	return append(line, '\n'), nil
}

// parseJournalLine decodes one line (its newline included).
func parseJournalLine(line []byte) (journalEntry, error) {
	const pre = len("sha256 ") + 64 + 1
	if len(line) < pre+2 || line[len(line)-1] != '\n' || !bytes.HasPrefix(line, []byte("sha256 ")) || line[pre-1] != ' ' {
		return journalEntry{}, errors.New("torn or not a journal line")
	}
	b := line[pre : len(line)-1]
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != string(line[len("sha256 "):pre-1]) {
		return journalEntry{}, errors.New("checksum does not match")
	}
	var e journalEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return journalEntry{}, err
	}
	if e.Format != journalFormat {
		return journalEntry{}, fmt.Errorf("format %d (this build reads %d)", e.Format, journalFormat)
	}
	return e, nil
}

// readJournal reads the journal lines that continue a copy of epoch at
// version: entries of another epoch or at or below version are skipped (a
// crash between writing a new copy and emptying the journal leaves them),
// the first entry that does not follow on, or a torn or corrupt line, ends
// it. It returns the entries to apply in order, where each starts (to cut
// back to), and the offset where the good lines end. limit bounds one line.
func readJournal(r io.Reader, epoch string, version uint64, limit int64) (entries []journalEntry, starts []int64, good int64) {
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	for {
		line, err := readLine(br, limit)
		if err != nil {
			return entries, starts, good
		}
		start := off
		off += int64(len(line))
		e, perr := parseJournalLine(line)
		if perr != nil {
			return entries, starts, good
		}
		switch {
		case e.Epoch != epoch || e.Version <= version:
			// Before the copy: kept, never applied.
		case e.Base == version:
			entries = append(entries, e)
			starts = append(starts, start)
			version = e.Version
		default:
			return entries, starts, good // a gap: nothing after it follows
		}
		good = off
	}
}

// readLine reads one line of at most limit bytes, its newline included;
// a last line without one is returned with io.ErrUnexpectedEOF.
func readLine(br *bufio.Reader, limit int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if int64(len(line)) > limit {
			return nil, ErrTooLarge
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// appendJournal writes a change set to the journal and syncs it, before
// it is applied. It returns the journal's size before, to cut back to.
func (r *Replica) appendJournal(e journalEntry) (before int64, err error) {
	line, err := journalLine(e)
	if err != nil {
		return 0, err
	}
	path := filepath.Join(r.cfg.Dir, journalFile)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	created := false
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
		created = true
	}
	if err != nil {
		return 0, fmt.Errorf("replication: replica: writing the journal: %w", err)
	}
	defer f.Close()
	before = r.jsize
	if _, err = f.WriteAt(line, before); err == nil {
		err = f.Sync()
	}
	if err == nil && created {
		err = syncDir(r.cfg.Dir)
	}
	if err != nil {
		// Nothing half-written stays for a later line to follow.
		_ = f.Truncate(before)
		return 0, fmt.Errorf("replication: replica: writing the journal: %w", err)
	}
	r.jsize = before + int64(len(line))
	return before, nil
}

// cutJournal cuts the journal back to size bytes and syncs it.
func (r *Replica) cutJournal(size int64) error {
	f, err := os.OpenFile(filepath.Join(r.cfg.Dir, journalFile), os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) && size == 0 {
		r.jsize = 0
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	r.jsize = size
	return nil
}

// replayJournal applies the journal's entries that continue the copy just
// loaded at version of epoch, cuts off what does not, and returns the
// version reached.
func (r *Replica) replayJournal(epoch string, version uint64) uint64 {
	path := filepath.Join(r.cfg.Dir, journalFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		r.jsize = 0
		return version
	}
	if err != nil {
		r.log.Error("replica: cannot read the journal; serving the copy without it", "file", path, "err", err)
		return version
	}
	entries, starts, good := readJournal(f, epoch, version, r.cfg.MaxBody+copySlack)
	fi, _ := f.Stat()
	f.Close()
	// One Apply for them all (one copy of each zone touched); entry by
	// entry if that fails, to keep what applies.
	var all []memory.Change
	for _, e := range entries {
		all = append(all, e.Changes...)
	}
	applied := len(entries)
	if err := r.local.Apply(all); err != nil {
		applied = 0
		for _, e := range entries {
			if err := r.local.Apply(e.Changes); err != nil {
				r.log.Error("replica: a journal entry does not apply; the journal ends before it", "version", e.Version, "err", err)
				break
			}
			applied++
		}
		if applied < len(entries) {
			good = starts[applied]
		}
	}
	if applied > 0 {
		version = entries[applied-1].Version
	}
	r.jsize = good
	if fi != nil && fi.Size() != good {
		r.log.Warn("replica: cutting the journal after its last good entry", "file", path, "size", fi.Size(), "good", good)
		if err := r.cutJournal(good); err != nil {
			r.log.Error("replica: cannot cut the journal", "file", path, "err", err)
		}
	}
	return version
}
