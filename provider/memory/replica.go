package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxBody caps a replication response body.
const maxBody = 64 << 20

// ReplicaConfig configures a Replica.
type ReplicaConfig struct {
	// URL is the base URL of the source's replication Handler (http or
	// https), e.g. "http://primary:8053/replication". Required.
	URL string `json:"url"`
	// Region, when set, asks the source for its region-filtered view.
	Region string `json:"region"`
	// Interval is the time between syncs, 100ms to 1h. Default 10s. A
	// notify starts a sync at once and restarts the interval.
	Interval Duration `json:"interval"`
	// Timeout bounds one sync's HTTP request, 10ms to 1m. Default 5s.
	Timeout Duration `json:"timeout"`
	// DegradedAfter is how many consecutive failed syncs make the replica
	// degraded, 1 to 100. Default 2.
	DegradedAfter int `json:"degradedAfter"`
	// Auth carries the shared secret and its header.
	Auth HandlerConfig `json:"auth"`
}

// DefaultReplicaConfig returns interval 10s, timeout 5s, degraded after 2
// missed syncs, the default secret header; URL and secret are left empty
// for the caller.
func DefaultReplicaConfig() ReplicaConfig {
	return ReplicaConfig{
		Interval:      Duration(10 * time.Second),
		Timeout:       Duration(5 * time.Second),
		DegradedAfter: 2,
		Auth:          DefaultHandlerConfig(),
	}
}

// Validate reports the first field out of range.
func (c ReplicaConfig) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("memory: replica url %q is not an http(s) URL", c.URL)
	}
	if d := c.Interval.D(); d < 100*time.Millisecond || d > time.Hour {
		return fmt.Errorf("memory: replica interval %v is out of range (allowed 100ms to 1h)", d)
	}
	if d := c.Timeout.D(); d < 10*time.Millisecond || d > time.Minute {
		return fmt.Errorf("memory: replica timeout %v is out of range (allowed 10ms to 1m)", d)
	}
	if c.DegradedAfter < 1 || c.DegradedAfter > 100 {
		return fmt.Errorf("memory: replica degradedAfter %d is out of range (allowed 1 to 100)", c.DegradedAfter)
	}
	return c.Auth.Validate()
}

// ReplicaEventKind says what happened to a Replica.
type ReplicaEventKind uint8

const (
	// ReplicaSynced: a sync succeeded (Version, Full and Changes say what it
	// brought).
	ReplicaSynced ReplicaEventKind = iota + 1
	// ReplicaSyncFailed: a sync failed (Err); the local copy is unchanged.
	ReplicaSyncFailed
	// ReplicaDegraded: DegradedAfter syncs in a row failed; the replica
	// keeps serving its last good copy.
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
	// Version is the source version the local copy holds after the event.
	Version uint64
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
	// Synced says the local copy holds at least one good copy of the source.
	Synced bool
	// Version is the source version of the local copy.
	Version uint64
	// LastSync is when the last sync succeeded (zero before the first).
	LastSync time.Time
	// Missed counts consecutive failed syncs.
	Missed int
	// Degraded is Missed >= DegradedAfter.
	Degraded bool
	// LastErr is the last sync's error, nil after a success.
	LastErr error
}

// Replica follows a source's replication Handler into a local Provider:
// a full snapshot first, then the journal's changes since its version on
// every interval and at once on Notify (a full snapshot again when the
// source's journal no longer reaches back). While the source is unreachable
// the local Provider keeps its last good copy and goes on answering; after
// DegradedAfter failed syncs in a row the replica reports itself degraded
// (Status, ReplicaDegraded) until a sync succeeds. The local Provider's
// zones are replaced by the source's: write to it only through the Replica.
type Replica struct {
	local  *Provider
	cfg    ReplicaConfig
	client *http.Client
	obs    ReplicaObserver
	log    *slog.Logger
	kick   chan struct{}

	mu sync.Mutex
	st ReplicaStatus
}

// NewReplica returns a Replica that fills local, or cfg's validation error.
// client nil means http.DefaultClient; obs and log may be nil. It starts
// nothing.
func NewReplica(local *Provider, cfg ReplicaConfig, client *http.Client, obs ReplicaObserver, log *slog.Logger) (*Replica, error) {
	if local == nil {
		return nil, errors.New("memory: NewReplica needs a local Provider")
	}
	if cfg.Auth.Header == "" {
		cfg.Auth.Header = DefaultSecretHeader
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Replica{local: local, cfg: cfg, client: client, obs: obs, log: log, kick: make(chan struct{}, 1)}, nil
}

// Notify asks a running Replica to sync at once. It never blocks; notifies
// that arrive during a sync cause one more sync.
func (r *Replica) Notify() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Status returns the replica's current status.
func (r *Replica) Status() ReplicaStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// Degraded reports whether the last DegradedAfter syncs (or more) failed.
func (r *Replica) Degraded() bool { return r.Status().Degraded }

// Run syncs at once, then every Interval and on every Notify, until ctx
// ends; it then returns nil. It starts no other goroutine.
func (r *Replica) Run(ctx context.Context) error {
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
		timer.Reset(r.cfg.Interval.D())
	}
}

// syncOnce runs one sync and reports its events.
func (r *Replica) syncOnce(ctx context.Context) {
	r.mu.Lock()
	synced, version := r.st.Synced, r.st.Version
	r.mu.Unlock()

	ev, err := r.pull(ctx, synced, version)
	if err != nil && ctx.Err() != nil {
		return // shutting down: not a missed sync
	}
	now := time.Now()
	var events []ReplicaEvent
	r.mu.Lock()
	if err != nil {
		r.st.Missed++
		r.st.LastErr = err
		events = append(events, ReplicaEvent{Kind: ReplicaSyncFailed, Time: now, Version: r.st.Version, Missed: r.st.Missed, Err: err})
		if r.st.Missed == r.cfg.DegradedAfter {
			r.st.Degraded = true
			events = append(events, ReplicaEvent{Kind: ReplicaDegraded, Time: now, Version: r.st.Version, Missed: r.st.Missed, Err: err})
		}
		if errors.Is(err, errResync) {
			r.st.Synced = false
		}
	} else {
		wasDegraded := r.st.Degraded
		r.st = ReplicaStatus{Synced: true, Version: ev.Version, LastSync: now}
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
var errResync = errors.New("memory: replica needs a full snapshot")

// pull fetches and applies one sync.
func (r *Replica) pull(ctx context.Context, synced bool, version uint64) (ReplicaEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout.D())
	defer cancel()
	q := url.Values{}
	if r.cfg.Region != "" {
		q.Set("region", r.cfg.Region)
	}
	if !synced {
		body, err := r.get(ctx, "snapshot", q)
		if err != nil {
			return ReplicaEvent{}, err
		}
		snap, err := ParseSnapshot(body)
		if err != nil {
			return ReplicaEvent{}, err
		}
		if err := r.local.Restore(snap); err != nil {
			return ReplicaEvent{}, fmt.Errorf("memory: replica: applying snapshot: %w", err)
		}
		return ReplicaEvent{Version: snap.Version, Full: true}, nil
	}
	q.Set("since", strconv.FormatUint(version, 10))
	body, err := r.get(ctx, "changes", q)
	if err != nil {
		return ReplicaEvent{}, err
	}
	resp, err := ParseChanges(body)
	if err != nil {
		return ReplicaEvent{}, err
	}
	if resp.Full {
		if err := r.local.Restore(*resp.Snapshot); err != nil {
			return ReplicaEvent{}, fmt.Errorf("memory: replica: applying snapshot: %w", err)
		}
		return ReplicaEvent{Version: resp.Version, Full: true}, nil
	}
	if err := r.local.Apply(resp.Changes); err != nil {
		return ReplicaEvent{}, fmt.Errorf("%w: applying changes: %w", errResync, err)
	}
	return ReplicaEvent{Version: resp.Version, Changes: len(resp.Changes)}, nil
}

func (r *Replica) get(ctx context.Context, endpoint string, q url.Values) ([]byte, error) {
	u := strings.TrimSuffix(r.cfg.URL, "/") + "/" + endpoint
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("memory: replica: %w", err)
	}
	req.Header.Set(r.cfg.Auth.Header, r.cfg.Auth.Secret)
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("memory: replica: GET %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("memory: replica: GET %s: reading body: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Endpoint: endpoint, Code: resp.StatusCode, Body: string(bytes.TrimSpace(body[:min(len(body), 200)]))}
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("memory: replica: GET %s: body larger than %d bytes", endpoint, maxBody)
	}
	return body, nil
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
	return fmt.Sprintf("memory: replica: GET %s: status %d: %s", e.Endpoint, e.Code, e.Body)
}

// StatusCode returns the HTTP status.
func (e *StatusError) StatusCode() int { return e.Code }

// ParseSnapshot decodes a Snapshot from JSON (a GET snapshot body). It
// checks the shape only; Provider.Restore validates the records.
func ParseSnapshot(data []byte) (Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return Snapshot{}, fmt.Errorf("memory: parsing snapshot: %w", err)
	}
	if s.Zones == nil {
		return Snapshot{}, errors.New("memory: parsing snapshot: no zones field")
	}
	if s.Format > ReplicationFormat {
		return Snapshot{}, fmt.Errorf("memory: parsing snapshot: format %d is newer than this reader's %d", s.Format, ReplicationFormat)
	}
	return s, nil
}

// ParseChanges decodes a ChangesResponse from JSON (a GET changes body). A
// full response must carry a snapshot; entries must be in version order and
// not beyond the response's version.
func ParseChanges(data []byte) (ChangesResponse, error) {
	var c ChangesResponse
	if err := json.Unmarshal(data, &c); err != nil {
		return ChangesResponse{}, fmt.Errorf("memory: parsing changes: %w", err)
	}
	if c.Format > ReplicationFormat {
		return ChangesResponse{}, fmt.Errorf("memory: parsing changes: format %d is newer than this reader's %d", c.Format, ReplicationFormat)
	}
	if c.Full {
		if c.Snapshot == nil || c.Snapshot.Zones == nil {
			return ChangesResponse{}, errors.New("memory: parsing changes: full response without a snapshot")
		}
		return c, nil
	}
	var last uint64
	for i, ch := range c.Changes {
		if ch.Version < last || ch.Version > c.Version {
			return ChangesResponse{}, fmt.Errorf("memory: parsing changes: entry %d has version %d out of order (response version %d)", i, ch.Version, c.Version)
		}
		last = ch.Version
	}
	return c, nil
}

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
		return fmt.Errorf("memory: notify: %w", err)
	}
	req.Header.Set(auth.Header, auth.Secret)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("memory: notify: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return &StatusError{Endpoint: "notify", Code: resp.StatusCode}
	}
	return nil
}
