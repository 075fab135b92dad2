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
	"runtime"
	"slices"
	"strconv"
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

// savedCopy is the content of a replica's file.
type savedCopy struct {
	Zones    []string
	Region   string
	Saved    time.Time
	Snapshot memory.Snapshot
}

// parseSavedCopy checks and decodes a replica's file.
func parseSavedCopy(data []byte) (savedCopy, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return savedCopy{}, fmt.Errorf("%w: not a replica copy (no header line)", ErrSavedCopy)
	}
	head := string(data[:nl])
	ver, ok := bytes.CutPrefix([]byte(head), []byte(copyMagic+" "))
	if !ok {
		return savedCopy{}, fmt.Errorf("%w: not a replica copy (header %q)", ErrSavedCopy, clip(head, 40))
	}
	if v, err := strconv.Atoi(string(ver)); err != nil || v != copyFormat {
		return savedCopy{}, fmt.Errorf("%w: format version %q (this build reads %d)", ErrSavedCopy, clip(string(ver), 20), copyFormat)
	}
	rest := data[nl+1:]
	const trailer = len("sha256 ") + 64 + 1
	if len(rest) < trailer || rest[len(rest)-1] != '\n' {
		return savedCopy{}, fmt.Errorf("%w: truncated (no checksum line)", ErrSavedCopy)
	}
	payload, sum := rest[:len(rest)-trailer], rest[len(rest)-trailer:len(rest)-1]
	want, ok := bytes.CutPrefix(sum, []byte("sha256 "))
	got := sha256.Sum256(payload)
	if !ok || hex.EncodeToString(got[:]) != string(want) {
		return savedCopy{}, fmt.Errorf("%w: checksum does not match (corrupt or truncated)", ErrSavedCopy)
	}
	var c savedCopy
	var sawSnap bool
	err := decodeWhole(bytes.NewReader(payload), func(dec *json.Decoder) error {
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
				return decodeSnapshot(dec, &c.Snapshot)
			}
			return skipValue(dec)
		})
	})
	if err != nil {
		return savedCopy{}, fmt.Errorf("%w: %w", ErrSavedCopy, err)
	}
	if !sawSnap || c.Snapshot.Zones == nil {
		return savedCopy{}, fmt.Errorf("%w: no snapshot", ErrSavedCopy)
	}
	if c.Snapshot.Format > memory.ReplicationFormat {
		return savedCopy{}, fmt.Errorf("%w: snapshot format %d is newer than this reader's %d", ErrSavedCopy, c.Snapshot.Format, memory.ReplicationFormat)
	}
	return c, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// writeSavedCopy writes c in the file format to w.
func writeSavedCopy(w io.Writer, c savedCopy) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "%s %d\n", copyMagic, copyFormat)
	h := sha256.New()
	out := io.MultiWriter(bw, h)
	head, err := json.Marshal(struct {
		Zones  []string  `json:"zones"`
		Region string    `json:"region"`
		Saved  time.Time `json:"saved"`
	}{c.Zones, c.Region, c.Saved})
	if err != nil {
		return err
	}
	// The snapshot is written zone by zone and record by record, so saving
	// a large copy needs no buffer of its size.
	out.Write(head[:len(head)-1])
	fmt.Fprintf(out, `,"snapshot":{"format":%d,"version":%d,"epoch":%s,"zones":[`, c.Snapshot.Format, c.Snapshot.Version, jsonString(c.Snapshot.Epoch))
	for i, z := range c.Snapshot.Zones {
		if i > 0 {
			io.WriteString(out, ",")
		}
		soa, err := json.Marshal(z.SOA)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, `{"name":%s,"soa":%s,"records":[`, jsonString(z.Name), soa)
		for j, r := range z.Records {
			if j > 0 {
				io.WriteString(out, ",")
			}
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			out.Write(b)
		}
		io.WriteString(out, "]}")
	}
	io.WriteString(out, "]}}\n")
	fmt.Fprintf(bw, "sha256 %x\n", h.Sum(nil))
	return bw.Flush()
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// save writes the local copy to Dir atomically: a temporary file in the
// same directory, synced, renamed over the old file, then the directory
// synced, so that after a crash the file is the old copy or the new one.
func (r *Replica) save(version uint64, epoch string) {
	snap := r.local.Snapshot()
	snap.Version, snap.Epoch = version, epoch
	now := time.Now()
	err := writeFileAtomic(r.cfg.Dir, copyFile, func(w io.Writer) error {
		return writeSavedCopy(w, savedCopy{Zones: r.cfg.Zones, Region: r.cfg.Region, Saved: now.UTC(), Snapshot: snap})
	})
	r.mu.Lock()
	r.st.SaveErr = err
	if err == nil {
		r.st.Saved = now
	}
	r.mu.Unlock()
	if err != nil {
		r.log.Warn("replica: saving the copy failed; the file keeps the previous copy", "dir", r.cfg.Dir, "err", err)
	}
}

func writeFileAtomic(dir, name string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(dir, copyTmpGlob)
	if err != nil {
		return fmt.Errorf("replication: replica: saving the copy: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("replication: replica: saving the copy: %w", err)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
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
	c, err := r.readCopy(path)
	if errors.Is(err, os.ErrNotExist) {
		r.log.Info("replica: no saved copy yet; starting empty", "file", path)
		return
	}
	if err == nil {
		err = r.checkCopy(c)
	}
	if err == nil {
		if err = r.local.Restore(c.Snapshot); err != nil {
			err = fmt.Errorf("%w: %w", ErrSavedCopy, err)
		}
	}
	if err != nil {
		r.st.LoadErr = err
		r.log.Error("replica: ignoring the saved copy; starting empty", "file", path, "err", err)
		return
	}
	r.st = ReplicaStatus{Synced: true, Version: c.Snapshot.Version, Epoch: c.Snapshot.Epoch, FromDisk: true, Degraded: true, Saved: c.Saved}
	r.log.Info("replica: serving the saved copy until a sync succeeds", "file", path, "saved", c.Saved, "version", c.Snapshot.Version, "epoch", c.Snapshot.Epoch)
}

func (r *Replica) readCopy(path string) (savedCopy, error) {
	f, err := os.Open(path)
	if err != nil {
		return savedCopy{}, err
	}
	defer f.Close()
	limit := r.cfg.MaxBody + copySlack
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return savedCopy{}, fmt.Errorf("%w: %w: %d bytes, limit %d", ErrSavedCopy, ErrTooLarge, fi.Size(), limit)
	}
	data, err := io.ReadAll(&limitReader{r: f, n: limit, limit: limit})
	if err != nil {
		return savedCopy{}, fmt.Errorf("%w: %w", ErrSavedCopy, err)
	}
	return parseSavedCopy(data)
}

// checkCopy refuses a saved copy of other zones, another region, or one
// that the pinning rules refuse.
func (r *Replica) checkCopy(c savedCopy) error {
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
	if err := r.checkSnapshot(c.Snapshot); err != nil {
		return fmt.Errorf("%w: %w", ErrSavedCopy, err)
	}
	return nil
}
