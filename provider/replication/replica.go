package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/jsontime"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
)

// ReplicaConfig configures a Replica. Start from DefaultReplicaConfig and
// set URL, Zones and Auth.Secret; the other fields left at zero take their
// defaults. Dir is optional: without it nothing is kept on disk. In JSON the
// durations read and write strings such as "10s" (a number is read as
// seconds).
type ReplicaConfig struct {
	// URL is the base URL of the source's replication Handler (http or
	// https), e.g. "http://primary:8053/replication". Required.
	URL string `json:"url"`
	// Zones are the zones the replica follows, 1 to 1024 fully qualified
	// names, none the root. Required. A snapshot or change set from the
	// source that lacks one of them, brings another, or leaves none is
	// refused (the last good copy stays; see RejectError).
	Zones []string `json:"zones"`
	// Region, when set, asks the source for its region-filtered view.
	Region string `json:"region"`
	// Dir, when set, is a directory where the replica keeps its last good
	// copy (a file replaced atomically by every snapshot, and a journal of
	// the change sets applied since), and from which NewReplica loads it,
	// so a replica restarted while its source is away still answers.
	// Nothing is served before it is there (a sync that cannot write
	// fails). It is created (mode 0700) if missing. One Replica per
	// directory.
	Dir string `json:"dir,omitempty"`
	// Interval is the time between syncs, 100ms to 1h. Default 10s. A
	// notify starts a sync at once and restarts the interval.
	Interval time.Duration `json:"interval"`
	// Timeout bounds one sync, 10ms to 10m: the HTTP request, reading the
	// body and building the copy. Default 5s, enough for about 100,000
	// records; a large zone needs more (a 60 MiB snapshot of 1.2 million
	// records took about 20 s of CPU to read and build on a small machine).
	Timeout time.Duration `json:"timeout"`
	// DegradedAfter is how many consecutive failed syncs make the replica
	// degraded, 1 to 100. Default 2.
	DegradedAfter int `json:"degradedAfter"`
	// MaxBody is the largest response body (and file in Dir) the replica
	// reads, in bytes, 1 KiB to 1 GiB. Default 64 MiB. Reading stops at the
	// limit; a body announced larger is not read at all. It bounds the
	// memory a sync takes: the copy costs about 12 times its JSON size
	// (some 600 bytes per record), and the old copy stays until the new one
	// is built.
	MaxBody int64 `json:"maxBody"`
	// Auth carries the shared secret and its header.
	Auth HandlerConfig `json:"auth"`
}

// DefaultMaxBody is ReplicaConfig.MaxBody's default, 64 MiB.
const DefaultMaxBody = 64 << 20

// DefaultReplicaConfig returns interval 10s, timeout 5s, degraded after 2
// missed syncs, bodies up to 64 MiB, the default secret header; URL, Zones
// and secret are left empty for the caller, and no Dir.
func DefaultReplicaConfig() ReplicaConfig {
	return ReplicaConfig{
		Interval:      10 * time.Second,
		Timeout:       5 * time.Second,
		DegradedAfter: 2,
		MaxBody:       DefaultMaxBody,
		Auth:          DefaultHandlerConfig(),
	}
}

func (c ReplicaConfig) withDefaults() ReplicaConfig {
	d := DefaultReplicaConfig()
	if c.Interval == 0 {
		c.Interval = d.Interval
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.DegradedAfter == 0 {
		c.DegradedAfter = d.DegradedAfter
	}
	if c.MaxBody == 0 {
		c.MaxBody = d.MaxBody
	}
	if c.Auth.Header == "" {
		c.Auth.Header = DefaultSecretHeader
	}
	return c
}

// Validate reports the first field out of range as a *FieldError wrapping
// ErrInvalidConfig. Zero fields that take a default are valid.
func (c ReplicaConfig) Validate() error {
	c = c.withDefaults()
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fielderr.New(ErrInvalidConfig, "url", c.URL, "an http or https URL such as http://primary:8053/replication")
	}
	if n := len(c.Zones); n < 1 || n > 1024 {
		return &FieldError{Path: "zones", Value: strconv.Itoa(n) + " zones", Allowed: fielderr.Range(1, 1024) + " zone names", Err: ErrInvalidConfig}
	}
	seen := map[string]bool{}
	for i, z := range c.Zones {
		key := zoneKey(z)
		if _, ok := dns.IsDomainName(key); !ok || strings.TrimSpace(z) == "" || len(key) > 254 || key == "." {
			return fielderr.New(ErrInvalidConfig, fielderr.Index("zones", i), z, "a domain name other than the root")
		}
		if seen[key] {
			return fielderr.New(ErrInvalidConfig, fielderr.Index("zones", i), z, "each zone once")
		}
		seen[key] = true
	}
	if d := c.Interval; d < 100*time.Millisecond || d > time.Hour {
		return fielderr.New(ErrInvalidConfig, "interval", d, fielderr.DurationRange(100*time.Millisecond, time.Hour))
	}
	if d := c.Timeout; d < 10*time.Millisecond || d > 10*time.Minute {
		return fielderr.New(ErrInvalidConfig, "timeout", d, fielderr.DurationRange(10*time.Millisecond, 10*time.Minute))
	}
	if c.DegradedAfter < 1 || c.DegradedAfter > 100 {
		return fielderr.New(ErrInvalidConfig, "degradedAfter", c.DegradedAfter, fielderr.Range(1, 100))
	}
	if c.MaxBody < 1<<10 || c.MaxBody > 1<<30 {
		return fielderr.New(ErrInvalidConfig, "maxBody", c.MaxBody, fielderr.Range(1<<10, 1<<30)+" bytes")
	}
	if err := c.Auth.Validate(); err != nil {
		return fielderr.In("auth", ErrInvalidConfig, err)
	}
	return nil
}

// MarshalJSON writes the durations as strings such as "10s".
func (c ReplicaConfig) MarshalJSON() ([]byte, error) {
	type plain ReplicaConfig
	return json.Marshal(struct {
		plain
		Interval jsontime.Duration `json:"interval"`
		Timeout  jsontime.Duration `json:"timeout"`
	}{plain(c), jsontime.Duration(c.Interval), jsontime.Duration(c.Timeout)})
}

// UnmarshalJSON reads the durations as strings such as "10s" or as numbers
// of seconds; fields absent from the JSON keep their values, and unknown
// fields are errors.
func (c *ReplicaConfig) UnmarshalJSON(b []byte) error {
	type plain ReplicaConfig
	aux := struct {
		*plain
		Interval jsontime.Duration `json:"interval"`
		Timeout  jsontime.Duration `json:"timeout"`
	}{(*plain)(c), jsontime.Duration(c.Interval), jsontime.Duration(c.Timeout)}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a mistyped key in a config is an error
	if err := dec.Decode(&aux); err != nil {
		return err
	}
	c.Interval, c.Timeout = time.Duration(aux.Interval), time.Duration(aux.Timeout)
	return nil
}

// ReplicaEventKind says what happened to a Replica.
type ReplicaEventKind uint8

const (
	// ReplicaSynced: a sync succeeded (Version, Full and Changes say what it
	// brought).
	ReplicaSynced ReplicaEventKind = iota + 1
	// ReplicaSyncFailed: a sync failed (Err); the local copy is unchanged.
	ReplicaSyncFailed
	// ReplicaDegraded: DegradedAfter syncs in a row failed, or (with
	// Missed 0, first thing in Run) the copy was loaded from Dir; the
	// replica keeps serving its last good copy.
	ReplicaDegraded
	// ReplicaRecovered: a sync succeeded after the replica was degraded.
	ReplicaRecovered
)

// String returns "synced", "sync-failed", "degraded" or "recovered".
func (k ReplicaEventKind) String() string {
	switch k {
	case ReplicaSynced:
		return "synced"
	case ReplicaSyncFailed:
		return "sync-failed"
	case ReplicaDegraded:
		return "degraded"
	case ReplicaRecovered:
		return "recovered"
	}
	return "unknown"
}

// ReplicaEvent is one thing that happened to a Replica.
type ReplicaEvent struct {
	Kind ReplicaEventKind
	Time time.Time
	// Version and Epoch are the source's version and epoch the local copy
	// holds after the event.
	Version uint64
	Epoch   string
	// Full says a sync took a whole snapshot; Changes counts the journal
	// entries a sync applied.
	Full    bool
	Changes int
	// Missed counts consecutive failed syncs.
	Missed int
	Err    error
}

// ReplicaObserver receives a Replica's events, in order, from its Run
// goroutine, outside any lock. It must not block for long.
type ReplicaObserver interface {
	Observe(ReplicaEvent)
}

// ReplicaStatus is a Replica's state at one moment.
type ReplicaStatus struct {
	// Synced says the local copy holds at least one good copy of the source
	// (fetched, or loaded from Dir).
	Synced bool
	// Version and Epoch are the source's version and epoch of the local copy.
	Version uint64
	Epoch   string
	// LastSync is when the last sync succeeded (zero before the first).
	LastSync time.Time
	// Missed counts consecutive failed syncs.
	Missed int
	// Degraded is Missed >= DegradedAfter, or FromDisk.
	Degraded bool
	// FromDisk says the local copy was loaded from Dir at start and no sync
	// has succeeded since: the replica answers, but from a copy of unknown
	// age (Saved says when it was written).
	FromDisk bool
	// LastErr is the last sync's error, nil after a success.
	LastErr error
	// Rejected counts the snapshots and change sets refused since the start
	// (see RejectError); LastRejected is the last refusal, kept after later
	// successes (nil if none). The local copy was kept each time.
	Rejected     uint64
	LastRejected error
	// Saved is when the copy or the journal in Dir was last written (or,
	// at start, when the loaded copy had been written); SaveErr is the last
	// write's error, nil after a success. LoadErr says why the file found
	// in Dir at start was not used (corrupt, another format, other zones),
	// nil if it was used or there was none.
	Saved   time.Time
	SaveErr error
	LoadErr error
}

// ErrRejected is wrapped by every RejectError.
var ErrRejected = errors.New("replication: replica refused the source's data")

// Reasons a Replica refuses a snapshot or change set (RejectError.Reason).
const (
	// RejectEmpty: the snapshot holds no zone, or the changes would leave none.
	RejectEmpty = "empty"
	// RejectMissingZone: a configured zone is missing or would be removed.
	RejectMissingZone = "missing-zone"
	// RejectOtherZone: a zone that is not configured appears.
	RejectOtherZone = "other-zone"
	// RejectRoot: the root zone appears.
	RejectRoot = "root-zone"
	// RejectTooLarge: the body is larger than MaxBody.
	RejectTooLarge = "too-large"
	// RejectInvalid: the data does not parse or its records do not validate.
	RejectInvalid = "invalid"
	// RejectUnsigned: the reply carries no signature (SignatureHeader).
	RejectUnsigned = "unsigned"
	// RejectForged: the reply's signature does not verify.
	RejectForged = "forged"
	// RejectRollback: a snapshot of the copy's epoch with a lower version.
	RejectRollback = "rollback"
)

// RejectError is a snapshot or change set the Replica refused; its local
// copy stayed as it was. Reason is one of the Reject constants (usable as a
// metric label), Zone the zone concerned if any.
type RejectError struct {
	Reason string
	Zone   string
	Err    error // the detail, may be nil
}

// Error implements error.
func (e *RejectError) Error() string {
	msg := "replication: replica refused the source's data: " + e.Reason
	if e.Zone != "" {
		msg += " " + e.Zone
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrRejected and the detail.
func (e *RejectError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrRejected}
	}
	return []error{ErrRejected, e.Err}
}

// Replica follows a source's replication Handler into a local Provider:
// a full snapshot first, then the journal's changes since its version on
// every interval and at once on Notify (a full snapshot again when the
// source's journal no longer reaches back, or when the source's epoch is not
// the copy's: changes of another history are never applied). While the
// source is unreachable the local Provider keeps its last good copy and goes
// on answering; after DegradedAfter failed syncs in a row the replica
// reports itself degraded (Status, ReplicaDegraded) until a sync succeeds.
// The local Provider's zones are replaced by the source's: write to it only
// through the Replica.
//
// It trusts only the zones it was configured with (ReplicaConfig.Zones): a
// snapshot or change set that is empty, lacks one of them, brings another or
// the root is refused with a *RejectError and the copy kept. Bodies are
// read up to MaxBody and decoded record by record; building the copy is
// bounded by Timeout.
//
// With Dir set, the replica never serves a version that is not on disk
// there, so a replica killed at any instant restarts on the version it
// served last or a later one. A snapshot is written to a temporary file as
// it is read, synced, renamed over the copy and the directory synced
// before it is published (the file carries a format version and a SHA-256
// checksum); a change set is appended to a journal, one checksummed line
// each, and synced before it is applied, so a sync of a few changes writes
// those, not the whole copy. The copy is rewritten at the served version,
// and the journal emptied, once the journal outgrows it (and 1 MiB). A
// sync whose write fails fails (Status.SaveErr), the copy kept.
// NewReplica loads the copy and replays the journal's lines that continue
// it, up to the first torn or corrupt one (a crash during its write),
// cutting the journal there: the replica answers from it at once,
// degraded (Status.FromDisk) until a sync succeeds. A corrupt copy, one of
// another format, or one for other zones or another region is ignored and
// logged (Status.LoadErr); the replica then starts empty.
//
// A Replica is made by NewReplica; the zero Replica is not usable (Run
// returns ErrNotConfigured, Status is zero, Notify does nothing).
type Replica struct {
	local  *memory.Provider
	cfg    ReplicaConfig
	zones  map[string]bool // cfg.Zones, normalised
	client *http.Client
	obs    ReplicaObserver
	log    *slog.Logger
	kick   chan struct{}
	ran    atomic.Bool

	// The files in Dir, used by the Run goroutine only (and NewReplica):
	// the sizes of the journal (its good lines) and of the copy.
	jsize, copySize int64
	compactAt       int64 // journal size at which the copy is rewritten next

	mu sync.Mutex
	st ReplicaStatus
}

// NewReplica returns a Replica that fills local, or cfg's validation error.
// client nil means http.DefaultClient; obs and log may be nil. With
// cfg.Dir set it creates the directory if needed (an error if it cannot)
// and loads the copy saved there into local; a file it cannot use is
// logged, not an error. It starts nothing.
func NewReplica(local *memory.Provider, cfg ReplicaConfig, client *http.Client, obs ReplicaObserver, log *slog.Logger) (*Replica, error) {
	if local == nil {
		return nil, fmt.Errorf("%w: NewReplica needs a local memory.Provider", ErrNotConfigured)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.Zones = slices.Clone(cfg.Zones)
	zones := map[string]bool{}
	for i, z := range cfg.Zones {
		cfg.Zones[i] = zoneKey(z)
		zones[cfg.Zones[i]] = true
	}
	slices.Sort(cfg.Zones)
	if client == nil {
		client = http.DefaultClient
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Replica{local: local, cfg: cfg, zones: zones, client: client, obs: obs, log: log, kick: make(chan struct{}, 1)}
	if cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("replication: replica dir: %w", err)
		}
		r.loadFromDisk()
	}
	return r, nil
}

// Notify asks a running Replica to sync at once. It never blocks; notifies
// that arrive during a sync cause one more sync.
func (r *Replica) Notify() {
	if r == nil {
		return
	}
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Status returns the replica's current status.
func (r *Replica) Status() ReplicaStatus {
	if r == nil {
		return ReplicaStatus{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// Degraded reports whether the last DegradedAfter syncs (or more) failed,
// or the replica serves a copy loaded from disk that no sync has confirmed.
func (r *Replica) Degraded() bool { return r.Status().Degraded }

// Run syncs at once, then every Interval and on every Notify, until ctx
// ends; it then returns nil. It starts no other goroutine. A replica that
// loaded its copy from Dir reports ReplicaDegraded (Missed 0) first: it
// answers from a copy no sync has confirmed yet. A Replica runs once: a
// second call returns ErrRunning.
func (r *Replica) Run(ctx context.Context) error {
	if r == nil || r.local == nil {
		return ErrNotConfigured
	}
	if !r.ran.CompareAndSwap(false, true) {
		return ErrRunning
	}
	if st := r.Status(); st.FromDisk && r.obs != nil {
		r.obs.Observe(ReplicaEvent{Kind: ReplicaDegraded, Time: time.Now(), Version: st.Version, Epoch: st.Epoch})
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-r.kick:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		r.syncOnce(ctx)
		timer.Reset(r.cfg.Interval)
	}
}

// syncOnce runs one sync and reports its events.
func (r *Replica) syncOnce(ctx context.Context) {
	r.mu.Lock()
	synced, version, epoch := r.st.Synced, r.st.Version, r.st.Epoch
	r.mu.Unlock()

	ev, err := r.pull(ctx, synced, version, epoch)
	if err != nil && ctx.Err() != nil {
		return // shutting down: not a missed sync
	}
	now := time.Now()
	var events []ReplicaEvent
	r.mu.Lock()
	if err != nil {
		r.st.Missed++
		r.st.LastErr = err
		if errors.Is(err, ErrRejected) {
			r.st.Rejected++
			r.st.LastRejected = err
		}
		events = append(events, ReplicaEvent{Kind: ReplicaSyncFailed, Time: now, Version: r.st.Version, Missed: r.st.Missed, Err: err})
		if r.st.Missed == r.cfg.DegradedAfter && !r.st.Degraded {
			events = append(events, ReplicaEvent{Kind: ReplicaDegraded, Time: now, Version: r.st.Version, Missed: r.st.Missed, Err: err})
		}
		if r.st.Missed >= r.cfg.DegradedAfter {
			r.st.Degraded = true
		}
		if errors.Is(err, errResync) {
			r.st.Synced = false
		}
	} else {
		wasDegraded := r.st.Degraded
		r.st.Synced, r.st.Version, r.st.Epoch, r.st.LastSync = true, ev.Version, ev.Epoch, now
		r.st.Missed, r.st.Degraded, r.st.FromDisk, r.st.LastErr = 0, false, false, nil
		ev.Kind, ev.Time = ReplicaSynced, now
		events = append(events, ev)
		if wasDegraded {
			events = append(events, ReplicaEvent{Kind: ReplicaRecovered, Time: now, Version: ev.Version})
		}
	}
	r.mu.Unlock()
	for _, e := range events {
		if e.Kind == ReplicaSyncFailed || e.Kind == ReplicaDegraded {
			r.log.Warn("replica sync failed", "kind", e.Kind.String(), "missed", e.Missed, "err", e.Err)
		}
		if r.obs != nil {
			r.obs.Observe(e)
		}
	}
}

// errResync marks a failure after which the next sync takes a snapshot.
var errResync = errors.New("replication: replica needs a full snapshot")

// pull fetches and applies one sync.
func (r *Replica) pull(ctx context.Context, synced bool, version uint64, epoch string) (ReplicaEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	q := url.Values{}
	if r.cfg.Region != "" {
		q.Set("region", r.cfg.Region)
	}
	if !synced {
		return r.full(ctx, q)
	}
	q.Set("since", strconv.FormatUint(version, 10))
	q.Set("epoch", epoch)
	var resp ChangesResponse
	b := memory.NewSnapshotBuilder(ctx)
	tee := r.newTee(b)
	defer tee.abort()
	err := r.get(ctx, "changes", q, func(body io.Reader) error {
		var err error
		resp, err = readChangesTo(body, b, tee.sink())
		return err
	})
	if err != nil {
		return ReplicaEvent{}, err
	}
	if resp.Full {
		if err := r.restore(ctx, b, tee); err != nil {
			return ReplicaEvent{}, err
		}
		return ReplicaEvent{Version: resp.Version, Full: true, Epoch: resp.Epoch}, nil
	}
	switch {
	case resp.Epoch != epoch:
		// Another history (a restarted source that did not read the
		// epoch parameter): its versions say nothing about this copy.
		r.log.Info("replica: the source's epoch changed; taking a full snapshot", "had", epoch, "source", resp.Epoch)
		return r.full(ctx, q)
	case resp.Version < version, resp.Version > version && len(resp.Changes) == 0, resp.Version == version && len(resp.Changes) > 0:
		r.log.Info("replica: the source's version does not follow the copy's; taking a full snapshot", "had", version, "source", resp.Version)
		return r.full(ctx, q)
	}
	if err := r.checkChanges(resp.Changes); err != nil {
		return ReplicaEvent{}, err
	}
	journaled := r.cfg.Dir != "" && len(resp.Changes) > 0
	var before int64
	if journaled {
		// On disk before it is served: a crash after Apply restarts on it.
		if before, err = r.appendJournal(journalEntry{Epoch: epoch, Base: version, Version: resp.Version, Changes: resp.Changes}); err != nil {
			r.saved(time.Now(), err)
			return ReplicaEvent{}, err
		}
	}
	if err := r.local.Apply(resp.Changes); err != nil {
		if journaled {
			if cerr := r.cutJournal(before); cerr != nil {
				r.log.Error("replica: cannot take back a journal entry that did not apply", "dir", r.cfg.Dir, "err", cerr)
			}
		}
		return ReplicaEvent{}, fmt.Errorf("%w: %w", errResync, &RejectError{Reason: RejectInvalid, Err: fmt.Errorf("applying changes: %w", err)})
	}
	if journaled {
		r.saved(time.Now(), nil)
		r.maybeCompact(resp.Version, epoch)
	}
	return ReplicaEvent{Version: resp.Version, Changes: len(resp.Changes), Epoch: epoch}, nil
}

// full fetches and applies a whole snapshot.
func (r *Replica) full(ctx context.Context, q url.Values) (ReplicaEvent, error) {
	q.Del("since")
	q.Del("epoch")
	b := memory.NewSnapshotBuilder(ctx)
	tee := r.newTee(b)
	defer tee.abort()
	err := r.get(ctx, "snapshot", q, func(body io.Reader) error {
		h, err := readSnapshot(body, tee.sink())
		b.Version, b.Epoch = h.Version, h.Epoch
		return err
	})
	if err != nil {
		return ReplicaEvent{}, err
	}
	if err := r.restore(ctx, b, tee); err != nil {
		return ReplicaEvent{}, err
	}
	return ReplicaEvent{Version: b.Version, Full: true, Epoch: b.Epoch}, nil
}

// restore checks the zones built in b, read from a verified body, against
// the configured zones and replaces the local copy with them. The old copy
// answered until now; b is dropped on error. With Dir, the copy tee wrote
// becomes the file first.
func (r *Replica) restore(ctx context.Context, b *memory.SnapshotBuilder, tee *teeSink) error {
	if err := r.checkSnapshot(b.ZoneNames()); err != nil {
		return err
	}
	r.mu.Lock()
	epoch, version := r.st.Epoch, r.st.Version
	r.mu.Unlock()
	if epoch != "" && b.Epoch == epoch && b.Version < version {
		// The same history, older: a replayed or stale source.
		return &RejectError{Reason: RejectRollback, Err: fmt.Errorf("snapshot version %d of epoch %s is older than the copy's %d", b.Version, epoch, version)}
	}
	durable := tee != nil && tee.r != nil
	if durable {
		// On disk before it is served: a crash after RestoreBuilt restarts
		// on it.
		if err := tee.commit(memory.ReplicationFormat, b.Version, b.Epoch); err != nil {
			r.saved(time.Now(), err)
			return err
		}
	}
	if err := r.local.RestoreBuilt(b); err != nil {
		if durable {
			// The file holds what is not served (zones that failed their
			// last checks): put the served copy back.
			r.mu.Lock()
			v, e := r.st.Version, r.st.Epoch
			r.mu.Unlock()
			_ = r.save(v, e)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("replication: replica: building the copy: %w", err)
		}
		return &RejectError{Reason: RejectInvalid, Err: err}
	}
	if durable {
		// The copy holds every journal entry before it.
		r.compactAt = 0
		r.saved(time.Now(), r.cutJournal(0))
	}
	return nil
}

// newTee returns the sink that builds a snapshot into b and, with Dir,
// writes it to a new copy file as it is read (nil without Dir).
func (r *Replica) newTee(b *memory.SnapshotBuilder) *teeSink {
	if r.cfg.Dir == "" {
		return &teeSink{b: b}
	}
	return &teeSink{r: r, b: b}
}

// maybeCompact rewrites the copy at version once the journal has
// outgrown it, emptying the journal.
func (r *Replica) maybeCompact(version uint64, epoch string) {
	limit := max(r.copySize, journalCompactMin)
	if r.jsize < limit || r.jsize < r.compactAt {
		return
	}
	if err := r.save(version, epoch); err != nil {
		r.compactAt = r.jsize + limit // the journal still holds it all; retry later
		return
	}
	r.compactAt = 0
}

// checkSnapshot refuses a snapshot whose zones (names) are not exactly
// the configured ones.
func (r *Replica) checkSnapshot(names []string) error {
	if len(names) == 0 {
		return &RejectError{Reason: RejectEmpty, Err: errors.New("the snapshot holds no zone")}
	}
	have := make(map[string]bool, len(names))
	for _, name := range names {
		key := zoneKey(name)
		if err := r.checkZoneName(key); err != nil {
			return err
		}
		have[key] = true
	}
	for _, z := range r.cfg.Zones {
		if !have[z] {
			return &RejectError{Reason: RejectMissingZone, Zone: z, Err: errors.New("the snapshot lacks a configured zone")}
		}
	}
	return nil
}

func (r *Replica) checkZoneName(key string) error {
	if key == "." {
		return &RejectError{Reason: RejectRoot, Zone: key, Err: errors.New("the root zone is never followed")}
	}
	if !r.zones[key] {
		return &RejectError{Reason: RejectOtherZone, Zone: key, Err: errors.New("not a configured zone")}
	}
	return nil
}

// checkChanges refuses a change set that touches a zone not configured or
// would leave a configured zone out. The local copy holds exactly the
// configured zones (every snapshot applied was checked).
func (r *Replica) checkChanges(changes []memory.Change) error {
	present := make(map[string]bool, len(r.zones))
	for z := range r.zones {
		present[z] = true
	}
	for _, c := range changes {
		key := zoneKey(c.Zone)
		if err := r.checkZoneName(key); err != nil {
			return err
		}
		switch c.Kind {
		case memory.ChangeAddZone:
			present[key] = true
		case memory.ChangeRemoveZone:
			present[key] = false
		}
	}
	var left int
	for _, z := range r.cfg.Zones {
		if present[z] {
			left++
		}
	}
	for _, z := range r.cfg.Zones {
		if !present[z] {
			if left == 0 {
				return &RejectError{Reason: RejectEmpty, Zone: z, Err: errors.New("the changes remove every zone")}
			}
			return &RejectError{Reason: RejectMissingZone, Zone: z, Err: errors.New("the changes remove a configured zone")}
		}
	}
	return nil
}

// get fetches endpoint and hands its body, limited to MaxBody, to decode.
func (r *Replica) get(ctx context.Context, endpoint string, q url.Values, decode func(io.Reader) error) error {
	u := strings.TrimSuffix(r.cfg.URL, "/") + "/" + endpoint
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("replication: replica: %w", err)
	}
	nonce := r.cfg.Auth.SignRequest(req) // the secret itself is never sent
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("replication: replica: GET %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return &StatusError{Endpoint: endpoint, Code: resp.StatusCode, Body: string(bytes.TrimSpace(b))}
	}
	if resp.ContentLength > r.cfg.MaxBody {
		return &RejectError{Reason: RejectTooLarge, Err: fmt.Errorf("GET %s: %w: announced %d bytes, limit %d", endpoint, ErrTooLarge, resp.ContentLength, r.cfg.MaxBody)}
	}
	sig := resp.Header.Get(SignatureHeader)
	body := &limitReader{r: resp.Body, n: r.cfg.MaxBody, limit: r.cfg.MaxBody}
	vb := &verifyingBody{r: body, mac: replyMAC(r.cfg.Auth.Secret, nonce)}
	err = decode(vb)
	if err == nil {
		_, err = io.Copy(io.Discard, vb) // the rest (a newline) is signed too
	}
	switch {
	case err == nil:
		// The copy was built from the body as it came but is published
		// only now, once the whole body verifies.
		return checkSignature(endpoint, sig, vb)
	case errors.Is(err, ErrTooLarge):
		return &RejectError{Reason: RejectTooLarge, Err: fmt.Errorf("GET %s: %w", endpoint, err)}
	case ctx.Err() != nil:
		// The timeout (or shutdown) ended reading the body and building
		// the copy from it.
		return fmt.Errorf("replication: replica: GET %s: reading and building the copy: %w", endpoint, err)
	case body.err != nil:
		// The connection failed (or ctx ended) while reading.
		return fmt.Errorf("replication: replica: GET %s: reading body: %w", endpoint, body.err)
	default:
		// The copy is built as the body is read, so its content can fail
		// before its signature is known. A reply that is unsigned or does
		// not verify is refused as such, whatever it holds: the rest is
		// read (not built) to check it.
		if strings.TrimSpace(sig) == "" {
			return checkSignature(endpoint, sig, vb)
		}
		if _, derr := io.Copy(io.Discard, vb); derr == nil {
			if serr := checkSignature(endpoint, sig, vb); serr != nil {
				return serr
			}
		}
		return &RejectError{Reason: RejectInvalid, Err: fmt.Errorf("GET %s: %w", endpoint, err)}
	}
}

// StatusError is a replication request answered with a status other than
// 200. It answers StatusCode, so internal error classes see 429 and 5xx as
// retryable.
type StatusError struct {
	Endpoint string
	Code     int
	Body     string
}

// Error implements error.
func (e *StatusError) Error() string {
	return fmt.Sprintf("replication: replica: GET %s: status %d: %s", e.Endpoint, e.Code, e.Body)
}

// StatusCode returns the HTTP status.
func (e *StatusError) StatusCode() int { return e.Code }

// SendNotify posts a notify to the replication Handler at baseURL (a
// replica's notify endpoint), so that replica syncs at once. client nil
// means http.DefaultClient.
func SendNotify(ctx context.Context, client *http.Client, baseURL string, auth HandlerConfig) error {
	if client == nil {
		client = http.DefaultClient
	}
	if auth.Header == "" {
		auth.Header = DefaultSecretHeader
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/notify", nil)
	if err != nil {
		return fmt.Errorf("replication: notify: %w", err)
	}
	auth.SignRequest(req) // the secret itself is never sent
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("replication: notify: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return &StatusError{Endpoint: "notify", Code: resp.StatusCode}
	}
	return nil
}
