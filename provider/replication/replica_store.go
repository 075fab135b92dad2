package replication

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
)

// ErrSavedCopy is wrapped by the error that says why a Replica did not use
// the file in its Dir (ReplicaStatus.LoadErr): not a replica copy, another format
// version, a checksum that does not match, data that does not parse, or a
// copy of other zones or another region.
var ErrSavedCopy = errors.New("replication: replica's saved copy not used")

// The file a Replica keeps in its Dir:
//
//	gslbkit-replica-copy 1\n          magic and format version
//	{"zones":[...],"region":"...","saved":"...","snapshot":{...}}\n
//	sha256 <64 hex digits>\n          of the line above, newline included
//
// The snapshot carries the source's version and epoch.
const (
	copyFile    = "replica-copy"
	copyMagic   = "gslbkit-replica-copy"
	copyFormat  = 1
	copyTmpGlob = ".replica-copy-*.tmp"
	// copySlack is what the file may hold beyond MaxBody: the header, the
	// trailer and the JSON around the snapshot.
	copySlack = 1 << 20
)

// savedCopy is the content of a replica's file, collected (tests, fuzzing).
type savedCopy struct {
	Zones    []string
	Region   string
	Saved    time.Time
	Snapshot memory.Snapshot
}

// copyHead is the file's fields other than the snapshot's zones.
type copyHead struct {
	Zones  []string
	Region string
	Saved  time.Time
	Snap   snapshotHead
}

// parseSavedCopy checks and decodes a replica's file held in memory.
func parseSavedCopy(data []byte) (savedCopy, error) {
	s := memory.Snapshot{Zones: []memory.ZoneSnapshot{}}
	h, err := readSavedCopy(bytes.NewReader(data), int64(len(data)), collectSink{&s})
	if err != nil {
		return savedCopy{}, err
	}
	s.Format, s.Version, s.Epoch = h.Snap.Format, h.Snap.Version, h.Snap.Epoch
	return savedCopy{Zones: h.Zones, Region: h.Region, Saved: h.Saved, Snapshot: s}, nil
}

// readSavedCopy checks and decodes a replica's file of size bytes, handing
// the snapshot's zones to sink as they are read: the file is never held
// whole. The checksum is checked once the payload is read; on a mismatch
// (or any error) what sink received must be dropped.
func readSavedCopy(f io.ReaderAt, size int64, sink snapshotSink) (copyHead, error) {
	var first [64]byte
	n, err := f.ReadAt(first[:min(size, int64(len(first)))], 0)
	if err != nil && err != io.EOF {
		return copyHead{}, fmt.Errorf("%w: %w", ErrSavedCopy, err)
	}
	nl := bytes.IndexByte(first[:n], '\n')
	if nl < 0 {
		return copyHead{}, fmt.Errorf("%w: not a replica copy (no header line)", ErrSavedCopy)
	}
	head := string(first[:nl])
	ver, ok := strings.CutPrefix(head, copyMagic+" ")
	if !ok {
		return copyHead{}, fmt.Errorf("%w: not a replica copy (header %q)", ErrSavedCopy, clip(head, 40))
	}
	if v, err := strconv.Atoi(ver); err != nil || v != copyFormat {
		return copyHead{}, fmt.Errorf("%w: format version %q (this build reads %d)", ErrSavedCopy, clip(ver, 20), copyFormat)
	}
	const trailer = len("sha256 ") + 64 + 1
	rest := size - int64(nl+1)
	var sum [trailer]byte
	if rest < int64(trailer) {
		return copyHead{}, fmt.Errorf("%w: truncated (no checksum line)", ErrSavedCopy)
	}
	if _, err := f.ReadAt(sum[:], size-int64(trailer)); err != nil {
		return copyHead{}, fmt.Errorf("%w: %w", ErrSavedCopy, err)
	}
	want, ok := bytes.CutPrefix(sum[:trailer-1], []byte("sha256 "))
	if !ok || sum[trailer-1] != '\n' {
		return copyHead{}, fmt.Errorf("%w: truncated (no checksum line)", ErrSavedCopy)
	}
	h := sha256.New()
	payload := bufio.NewReaderSize(io.TeeReader(io.NewSectionReader(f, int64(nl+1), rest-int64(trailer)), h), 64<<10)
	var c copyHead
	var sawSnap bool
	err = decodeWhole(payload, func(dec *json.Decoder) error {
		return objectKeys(dec, func(key string) error {
			switch key {
			case "zones":
				return dec.Decode(&c.Zones)
			case "region":
				return dec.Decode(&c.Region)
			case "saved":
				return dec.Decode(&c.Saved)
			case "snapshot":
				sawSnap = true
				return decodeSnapshot(dec, &c.Snap, sink)
			}
			return skipValue(dec)
		})
	})
	// The checksum first: a corrupt file says so rather than how its
	// corruption failed to decode.
	if _, cerr := io.Copy(io.Discard, payload); cerr != nil && err == nil {
		err = cerr
	}
	if hex.EncodeToString(h.Sum(nil)) != string(want) {
		return copyHead{}, fmt.Errorf("%w: checksum does not match (corrupt or truncated)", ErrSavedCopy)
	}
	if err != nil {
		return copyHead{}, fmt.Errorf("%w: %w", ErrSavedCopy, err)
	}
	if !sawSnap || !c.Snap.sawZones {
		return copyHead{}, fmt.Errorf("%w: no snapshot", ErrSavedCopy)
	}
	if c.Snap.Format > memory.ReplicationFormat {
		return copyHead{}, fmt.Errorf("%w: snapshot format %d is newer than this reader's %d", ErrSavedCopy, c.Snap.Format, memory.ReplicationFormat)
	}
	return c, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// writeSavedCopy writes c in the file format to w (tests; a Replica
// writes its copy with writeCopy).
func writeSavedCopy(w io.Writer, c savedCopy) error {
	s := c.Snapshot
	if s.Zones == nil {
		s.Zones = []memory.ZoneSnapshot{}
	}
	for i := range s.Zones {
		if s.Zones[i].Records == nil {
			s.Zones[i].Records = []memory.ZoneRecord{}
		}
	}
	return writeCopy(w, c.Zones, c.Region, c.Saved, func(w io.Writer) error {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}

// writeCopy writes the file format to w, the snapshot by snap (as the
// JSON of a memory.Snapshot). Nothing is held whole: the snapshot goes
// through the checksum to w as it is written.
func writeCopy(w io.Writer, zones []string, region string, saved time.Time, snap func(io.Writer) error) error {
	enc, err := beginCopy(w, zones, region, saved)
	if err != nil {
		return err
	}
	if err := snap(enc.out); err != nil {
		return err
	}
	return enc.end()
}

// copyEncoder writes the file format: beginCopy writes up to the
// snapshot, the snapshot's JSON goes to out, end writes the rest.
type copyEncoder struct {
	bw  *bufio.Writer
	h   hash.Hash
	out *errWriter
}

func beginCopy(w io.Writer, zones []string, region string, saved time.Time) (*copyEncoder, error) {
	e := &copyEncoder{bw: bufio.NewWriterSize(w, 64<<10), h: sha256.New()}
	fmt.Fprintf(e.bw, "%s %d\n", copyMagic, copyFormat)
	e.out = &errWriter{w: io.MultiWriter(e.bw, e.h)}
	head, err := json.Marshal(struct {
		Zones  []string  `json:"zones"`
		Region string    `json:"region"`
		Saved  time.Time `json:"saved"`
	}{zones, region, saved})
	if err != nil {
		return nil, err
	}
	e.out.Write(head[:len(head)-1])
	io.WriteString(e.out, `,"snapshot":`)
	return e, nil
}

func (e *copyEncoder) end() error {
	io.WriteString(e.out, "}\n")
	if e.out.err != nil {
		return e.out.err
	}
	fmt.Fprintf(e.bw, "sha256 %x\n", e.h.Sum(nil))
	return e.bw.Flush()
}

// errWriter keeps the first error of w and writes nothing after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// save writes the local copy, at the source's version and epoch, to Dir
// atomically (see newCopyFile) and empties the journal, which the copy
// holds. It runs on the Run goroutine (or before Run), after the copy's
// state is on disk already (this only rewrites it) or with nothing served
// from it yet.
func (r *Replica) save(version uint64, epoch string) error {
	view := r.local.SnapshotView() // written as it is walked: no second copy
	view.Version, view.Epoch = version, epoch
	now := time.Now()
	cf, err := r.newCopyFile(now)
	if err == nil {
		err = view.WriteJSON(cf.enc.out, nil)
		if err == nil {
			if err = cf.commit(); err == nil {
				r.copySize = cf.size
			}
		} else {
			cf.abort()
		}
	}
	if err == nil {
		err = r.cutJournal(0)
	}
	r.saved(now, err)
	return err
}

// saved records the outcome of a write to Dir.
func (r *Replica) saved(now time.Time, err error) {
	r.mu.Lock()
	r.st.SaveErr = err
	if err == nil {
		r.st.Saved = now
	}
	r.mu.Unlock()
	if err != nil {
		r.log.Warn("replica: writing to the replica's directory failed", "dir", r.cfg.Dir, "err", err)
	}
}

// copyFileW is a new copy being written to a temporary file in Dir. commit
// makes it the copy: synced, renamed over the old one, the directory
// synced, so that after a crash the file is the old copy or the new one.
type copyFileW struct {
	dir  string
	f    *os.File
	enc  *copyEncoder
	size int64
}

func (r *Replica) newCopyFile(saved time.Time) (*copyFileW, error) {
	f, err := os.CreateTemp(r.cfg.Dir, copyTmpGlob)
	if err != nil {
		return nil, fmt.Errorf("replication: replica: saving the copy: %w", err)
	}
	cw := &copyFileW{dir: r.cfg.Dir, f: f}
	cw.enc, err = beginCopy(countWriter{f, &cw.size}, r.cfg.Zones, r.cfg.Region, saved.UTC())
	if err != nil {
		cw.abort()
		return nil, fmt.Errorf("replication: replica: saving the copy: %w", err)
	}
	return cw, nil
}

func (c *copyFileW) abort() {
	c.f.Close()
	os.Remove(c.f.Name())
}

func (c *copyFileW) commit() (err error) {
	defer func() {
		if err != nil {
			c.abort()
			err = fmt.Errorf("replication: replica: saving the copy: %w", err)
		}
	}()
	if err = c.enc.end(); err != nil {
		return err
	}
	if err = c.f.Sync(); err != nil {
		return err
	}
	if err = c.f.Close(); err != nil {
		return err
	}
	if err = os.Rename(c.f.Name(), filepath.Join(c.dir, copyFile)); err != nil {
		return err
	}
	return syncDir(c.dir)
}

type countWriter struct {
	w io.Writer
	n *int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// sink returns t as the sink of a snapshot: itself with Dir, else the
// builder's.
func (t *teeSink) sink() snapshotSink {
	if t.r == nil {
		return builderSink{t.b}
	}
	return t
}

// teeSink builds a snapshot's zones into a builder and, once the first
// zone comes, writes them to a new copy file as they are read, so that
// the copy is on disk before the snapshot is published.
type teeSink struct {
	r     *Replica
	b     *memory.SnapshotBuilder
	cf    *copyFileW
	err   error
	zones int
	recs  int
	buf   []byte
}

func (t *teeSink) zone(name string, soa memory.SOA) error {
	if err := t.b.Zone(name, soa); err != nil {
		return err
	}
	if t.cf == nil && t.err == nil {
		t.cf, t.err = t.r.newCopyFile(time.Now())
		t.write(`{"zones":[`)
	} else {
		t.write(`]},`)
	}
	t.zones++
	t.recs = 0
	nb, _ := json.Marshal(name)
	sb, _ := json.Marshal(soa)
	t.write(`{"name":` + string(nb) + `,"soa":` + string(sb) + `,"records":[`)
	return nil
}

func (t *teeSink) record(zr memory.ZoneRecord) error {
	if err := t.b.Add(zr); err != nil {
		return err
	}
	if t.err != nil || t.cf == nil {
		return nil
	}
	t.buf = t.buf[:0]
	if t.recs > 0 {
		t.buf = append(t.buf, ',')
	}
	t.recs++
	b, err := json.Marshal(zr)
	if err != nil {
		t.err = err
		return nil
	}
	t.buf = append(t.buf, b...)
	_, t.err = t.cf.enc.out.Write(t.buf)
	return nil
}

func (t *teeSink) write(s string) {
	if t.err == nil && t.cf != nil {
		_, t.err = io.WriteString(t.cf.enc.out, s)
	}
}

// commit ends the copy file at the snapshot's version and epoch and makes
// it the copy.
func (t *teeSink) commit(format int, version uint64, epoch string) error {
	if t.r == nil {
		return nil
	}
	if t.cf == nil {
		if t.err == nil {
			t.err = errors.New("no zone")
		}
		return fmt.Errorf("replication: replica: saving the copy: %w", t.err)
	}
	if t.zones > 0 {
		t.write(`]}`)
	}
	eb, _ := json.Marshal(epoch)
	t.write(fmt.Sprintf(`],"format":%d,"version":%d,"epoch":%s}`, format, version, eb))
	if t.err != nil {
		t.abort()
		return fmt.Errorf("replication: replica: saving the copy: %w", t.err)
	}
	cf := t.cf
	t.cf = nil
	if err := cf.commit(); err != nil {
		return err
	}
	t.r.copySize = cf.size
	return nil
}

// abort drops the copy file, if not committed.
func (t *teeSink) abort() {
	if t.cf != nil {
		t.cf.abort()
		t.cf = nil
	}
}

// syncDir makes a rename in dir durable. Windows cannot sync a directory
// (and its renames need no such step).
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// loadFromDisk loads the copy saved in Dir into the local Provider, or
// records and logs why not.
func (r *Replica) loadFromDisk() {
	if old, _ := filepath.Glob(filepath.Join(r.cfg.Dir, copyTmpGlob)); len(old) > 0 {
		for _, f := range old { // left by a save that crashed
			os.Remove(f)
		}
	}
	path := filepath.Join(r.cfg.Dir, copyFile)
	b := memory.NewSnapshotBuilder(context.Background())
	c, err := r.readCopy(path, b)
	if errors.Is(err, os.ErrNotExist) {
		r.log.Info("replica: no saved copy yet; starting empty", "file", path)
		r.dropJournal()
		return
	}
	if err == nil {
		err = r.checkCopy(c, b.ZoneNames())
	}
	if err == nil {
		if err = r.local.RestoreBuilt(b); err != nil {
			err = fmt.Errorf("%w: %w", ErrSavedCopy, err)
		}
	}
	if err != nil {
		r.st.LoadErr = err
		r.log.Error("replica: ignoring the saved copy; starting empty", "file", path, "err", err)
		r.dropJournal()
		return
	}
	if fi, err := os.Stat(path); err == nil {
		r.copySize = fi.Size()
	}
	version := r.replayJournal(c.Snap.Epoch, c.Snap.Version)
	r.st = ReplicaStatus{Synced: true, Version: version, Epoch: c.Snap.Epoch, FromDisk: true, Degraded: true, Saved: c.Saved}
	r.log.Info("replica: serving the saved copy until a sync succeeds", "file", path, "saved", c.Saved, "version", version, "copyVersion", c.Snap.Version, "epoch", c.Snap.Epoch)
}

// readCopy reads the file at path, building its zones into b as it reads.
func (r *Replica) readCopy(path string, b *memory.SnapshotBuilder) (copyHead, error) {
	f, err := os.Open(path)
	if err != nil {
		return copyHead{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return copyHead{}, fmt.Errorf("%w: %w", ErrSavedCopy, err)
	}
	if limit := r.cfg.MaxBody + copySlack; fi.Size() > limit {
		return copyHead{}, fmt.Errorf("%w: %w: %d bytes, limit %d", ErrSavedCopy, ErrTooLarge, fi.Size(), limit)
	}
	return readSavedCopy(f, fi.Size(), builderSink{b})
}

// checkCopy refuses a saved copy of other zones, another region, or one
// that the pinning rules refuse.
func (r *Replica) checkCopy(c copyHead, names []string) error {
	zones := make([]string, len(c.Zones))
	for i, z := range c.Zones {
		zones[i] = zoneKey(z)
	}
	slices.Sort(zones)
	if !slices.Equal(zones, r.cfg.Zones) {
		return fmt.Errorf("%w: saved for zones %v, configured %v", ErrSavedCopy, zones, r.cfg.Zones)
	}
	if c.Region != r.cfg.Region {
		return fmt.Errorf("%w: saved for region %q, configured %q", ErrSavedCopy, c.Region, r.cfg.Region)
	}
	if err := r.checkSnapshot(names); err != nil {
		return fmt.Errorf("%w: %w", ErrSavedCopy, err)
	}
	return nil
}

// dropJournal empties a journal that continues no copy.
func (r *Replica) dropJournal() {
	if err := r.cutJournal(0); err != nil {
		r.log.Error("replica: cannot empty the journal", "dir", r.cfg.Dir, "err", err)
	}
}
