package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider/memory"
)

// The controller's state file keeps what a restart (a crash or kill -9
// included) must not forget: operator intent (drained addresses, disabled
// records, who and when), each address's last probe state, and the
// embedded zone as last published, with its SOA serial and replication
// version. It lives in Config.StateDir as stateFileName, written
// atomically (a temporary file, fsync, rename, fsync of the directory)
// inside an envelope with a format number and a SHA-256 of the payload, so
// a torn, corrupt or foreign file is recognised and ignored (with a log
// line), never trusted and never fatal.

const (
	stateFileName = "controller-state.json"
	// stateFormat is the payload's format number; a file of another format
	// is ignored.
	stateFormat = 1
	// maxStateFile bounds what is read back (the zone snapshot dominates).
	maxStateFile = 64 << 20
)

// controllerState is the persisted payload.
type controllerState struct {
	// SavedAt is when the file was written: every address state in it was
	// true then.
	SavedAt time.Time `json:"savedAt"`
	// Zone and OwnerID are the controller's; a file of another zone or
	// owner is foreign and ignored.
	Zone    string `json:"zone"`
	OwnerID string `json:"ownerId"`
	// Records holds operator intent set through the API, by record name.
	Records map[string]recordIntent `json:"records,omitempty"`
	// Addresses holds each address's state and intent, by target ID
	// ("name/ip").
	Addresses map[string]addressMemory `json:"addresses,omitempty"`
	// Published is the embedded zone as last published (records, SOA serial,
	// replication version); nil before the first publication.
	Published *memory.Snapshot `json:"published,omitempty"`
}

// recordIntent is a disable or enable made through the API.
type recordIntent struct {
	Disabled bool      `json:"disabled"`
	By       string    `json:"by,omitempty"`
	At       time.Time `json:"at"`
	Reason   string    `json:"reason,omitempty"`
	// Forced: the disable was asked with force, so it holds even when the
	// record has no failover name (it then answers nothing). One made
	// without force, of a record whose failover name a config edit removed
	// since, is dropped at the start (see restoredIntent).
	Forced bool `json:"forced,omitempty"`
}

// addressMemory is one address's last known state and drain intent.
type addressMemory struct {
	// State is the probe state at SavedAt ("passing", "warning",
	// "critical", "recovery").
	State string `json:"state"`
	// Since is when the address entered State, when known.
	Since time.Time `json:"since,omitzero"`
	// FailingSince is when the address's probes began failing without a
	// pass since (the first counted failure; local failures do not count),
	// carried over restarts until a probe passes; zero when the last
	// counted result passed. An address saved failing restarts critical,
	// its first probe deciding (restoredInitial): its failures are not
	// forgiven by a restart.
	FailingSince time.Time    `json:"failingSince,omitzero"`
	Drain        *drainIntent `json:"drain,omitempty"`
}

// drainIntent is a drain (maintenance): the address stays out of answers
// until undrained or, when Until is set, until then.
type drainIntent struct {
	By     string    `json:"by,omitempty"`
	At     time.Time `json:"at"`
	Until  time.Time `json:"until,omitzero"`
	Reason string    `json:"reason,omitempty"`
	Forced bool      `json:"forced,omitempty"`
}

// stateEnvelope is the file's outer form.
type stateEnvelope struct {
	Format int             `json:"format"`
	SHA256 string          `json:"sha256"`
	State  json.RawMessage `json:"state"`
}

// errForeignState marks a state file written for another zone or owner.
var errForeignState = errors.New("state file belongs to another controller")

// encodeState returns the file's bytes for st.
func encodeState(st controllerState) ([]byte, error) {
	payload, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(payload)
	return json.Marshal(stateEnvelope{Format: stateFormat, SHA256: hex.EncodeToString(sum[:]), State: payload})
}

// decodeState parses a state file and checks its format and checksum, and
// that it belongs to zone and owner.
func decodeState(data []byte, zone, owner string) (controllerState, error) {
	var env stateEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return controllerState{}, fmt.Errorf("not a state file: %w", err)
	}
	if env.Format != stateFormat {
		return controllerState{}, fmt.Errorf("format %d, this gslbd reads format %d", env.Format, stateFormat)
	}
	sum := sha256.Sum256(env.State)
	if hex.EncodeToString(sum[:]) != env.SHA256 {
		return controllerState{}, errors.New("checksum mismatch (a torn or edited file)")
	}
	var st controllerState
	if err := json.Unmarshal(env.State, &st); err != nil {
		return controllerState{}, fmt.Errorf("payload: %w", err)
	}
	if !dnsname.Equal(st.Zone, zone) || st.OwnerID != owner {
		return controllerState{}, fmt.Errorf("%w: zone %q owner %q, this one serves zone %q owner %q", errForeignState, st.Zone, st.OwnerID, zone, owner)
	}
	if p := st.Published; p != nil {
		for _, z := range p.Zones {
			if !dnsname.Equal(z.Name, zone) {
				return controllerState{}, fmt.Errorf("%w: its zone snapshot holds %q", errForeignState, z.Name)
			}
		}
	}
	return st, nil
}

// loadState reads dir's state file. A missing file is (zero, false, nil);
// an unreadable, corrupt or foreign one is (zero, false, err): the caller
// logs it and starts without.
func loadState(dir, zone, owner string) (controllerState, bool, error) {
	f, err := os.Open(filepath.Join(dir, stateFileName))
	if errors.Is(err, os.ErrNotExist) {
		return controllerState{}, false, nil
	}
	if err != nil {
		return controllerState{}, false, err
	}
	defer f.Close()
	data := make([]byte, 0, 64<<10)
	buf := make([]byte, 64<<10)
	for {
		n, rerr := f.Read(buf)
		data = append(data, buf[:n]...)
		if len(data) > maxStateFile {
			return controllerState{}, false, fmt.Errorf("state file over %d MiB", maxStateFile>>20)
		}
		if rerr != nil {
			break
		}
	}
	st, err := decodeState(data, zone, owner)
	if err != nil {
		return controllerState{}, false, err
	}
	return st, true, nil
}

// saveState writes st to dir atomically: a reader (this process after a
// crash, at any instant) finds either the old file or the new one, whole.
func saveState(dir string, st controllerState) error {
	data, err := encodeState(st)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, stateFileName+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, filepath.Join(dir, stateFileName)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
