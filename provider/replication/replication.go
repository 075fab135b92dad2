package replication

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/provider/memory"
)

// DefaultSecretHeader is the HTTP header that carries the replication
// shared secret unless HandlerConfig.Header says otherwise.
const DefaultSecretHeader = "X-Gslb-Replication-Secret"

// HandlerConfig configures both ends of zone replication.
type HandlerConfig struct {
	// Secret is the shared secret that keys the HMAC-SHA256 of every
	// request and reply (see SignRequest), 16 to 1024 bytes. Required;
	// there is no default.
	Secret string `json:"secret"`
	// Header is the HTTP header that carries it. Default
	// DefaultSecretHeader.
	Header string `json:"header"`
}

// DefaultHandlerConfig returns the default header and no secret (which
// Validate refuses: the caller supplies one). A zero Header takes the
// default.
func DefaultHandlerConfig() HandlerConfig { return HandlerConfig{Header: DefaultSecretHeader} }

// Validate reports the first field out of range as a *FieldError wrapping
// ErrInvalidConfig (the secret's value is never included). A secret with
// white space at either end is refused: HTTP strips it from the header, so
// it could never match.
func (c HandlerConfig) Validate() error {
	if n := len(c.Secret); n < 16 || n > 1024 {
		return &FieldError{Path: "secret", Value: strconv.Itoa(n) + " bytes", Allowed: fielderr.Range(16, 1024) + " bytes", Err: ErrInvalidConfig}
	}
	if strings.TrimSpace(c.Secret) != c.Secret {
		return &FieldError{Path: "secret", Value: "(white space at the start or end)", Allowed: "no leading or trailing white space (HTTP strips it)", Err: ErrInvalidConfig}
	}
	if c.Header != "" && strings.ContainsAny(c.Header, " \t\r\n:") {
		return fielderr.New(ErrInvalidConfig, "header", c.Header, "an HTTP header name (default "+DefaultSecretHeader+")")
	}
	return nil
}

// RegionFilter decides whether a region's replicas get one record. It is
// called for every record of a snapshot and of a change when a replica asks
// with ?region=; it must be safe for concurrent use. How records map to
// regions is the caller's business (tags kept beside the zone, a naming
// convention, a lookup table).
type RegionFilter func(region, zone string, r memory.ZoneRecord) bool

// ChangesResponse is the body of GET changes: either the journal entries
// since the asked version (Full false) or, when the journal no longer reaches
// back that far, a whole snapshot (Full true). Version is the source's
// version the response brings the replica to.
type ChangesResponse struct {
	// Format is the format version (ReplicationFormat when written here).
	Format  int    `json:"format,omitempty"`
	Version uint64 `json:"version"`
	// Epoch is the source's epoch (see memory.Provider.Epoch). A replica applies
	// Changes only onto a copy of the same epoch.
	Epoch    string           `json:"epoch,omitempty"`
	Full     bool             `json:"full"`
	Changes  []memory.Change  `json:"changes,omitempty"`
	Snapshot *memory.Snapshot `json:"snapshot,omitempty"`
}

// Handler is the HTTP end of zone replication. Mounted at some base URL, it
// serves
//
//	GET  <base>/snapshot[?region=R]            a Snapshot (JSON)
//	GET  <base>/changes?since=V[&epoch=E][&region=R]  a ChangesResponse (JSON)
//	POST <base>/notify                         204; calls the notify function
//
// Every request must be signed with the shared secret (see SignRequest;
// older replicas may send the secret itself in the configured header,
// compared in constant time), else 401; replies to signed requests are
// signed (SignatureHeader). A Handler built without a source
// Provider answers 404 to snapshot and changes (a replica's notify
// endpoint); one without a notify function answers 404 to notify. With
// ?region= and a RegionFilter, records the filter rejects are left out (an
// RRset left empty reads as removed); ?region= without a filter is 400.
// With ?epoch= other than the source's epoch, changes answers a full
// snapshot: the replica's version belongs to another history.
// It is safe for concurrent use and never blocks the source's writers.
// The zero Handler refuses every request (401): make one with NewHandler.
type Handler struct {
	source *memory.Provider
	filter RegionFilter
	notify func()
	auth   HandlerConfig
}

// NewHandler returns a replication Handler, or cfg's validation error.
// source, filter and notify may each be nil (see Handler).
func NewHandler(source *memory.Provider, cfg HandlerConfig, filter RegionFilter, notify func()) (*Handler, error) {
	if cfg.Header == "" {
		cfg.Header = DefaultSecretHeader
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handler{source: source, filter: filter, notify: notify, auth: cfg}, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h == nil || h.auth.Header == "" || !h.auth.VerifyRequest(r) { // a signed request, or the secret from older replicas
		http.Error(w, "missing or wrong replication secret", http.StatusUnauthorized)
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case strings.HasSuffix(path, "/notify") || path == "notify":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "notify takes POST", http.StatusMethodNotAllowed)
			return
		}
		if h.notify == nil {
			http.NotFound(w, r)
			return
		}
		h.notify()
		w.WriteHeader(http.StatusNoContent)
	case strings.HasSuffix(path, "/snapshot") || path == "snapshot":
		if !h.get(w, r) {
			return
		}
		region, ok := h.region(w, r)
		if !ok {
			return
		}
		view := h.source.SnapshotView()
		keep := h.keep(region)
		h.auth.writeSignedStream(w, r, func(w io.Writer) error {
			if err := view.WriteJSON(w, keep); err != nil {
				return err
			}
			_, err := io.WriteString(w, "\n")
			return err
		})
	case strings.HasSuffix(path, "/changes") || path == "changes":
		if !h.get(w, r) {
			return
		}
		region, ok := h.region(w, r)
		if !ok {
			return
		}
		since, err := strconv.ParseUint(r.URL.Query().Get("since"), 10, 64)
		if err != nil {
			http.Error(w, fmt.Sprintf("since %q is not a version (a decimal integer 0 to 2^64-1)", r.URL.Query().Get("since")), http.StatusBadRequest)
			return
		}
		h.changes(w, r, region, since, r.URL.Query().Get("epoch"))
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) bool {
	if h.source == nil {
		http.NotFound(w, r)
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return false
	}
	return true
}

func (h *Handler) region(w http.ResponseWriter, r *http.Request) (string, bool) {
	region := r.URL.Query().Get("region")
	if region != "" && h.filter == nil {
		http.Error(w, "this source has no region filter", http.StatusBadRequest)
		return "", false
	}
	return region, true
}

// changes answers GET changes from one consistent state of the source: the
// journal's entries, or a full snapshot written as the state is walked.
func (h *Handler) changes(w http.ResponseWriter, r *http.Request, region string, since uint64, epoch string) {
	view := h.source.SnapshotView()
	ch, ok := view.Changes(since, epoch)
	if !ok {
		keep := h.keep(region)
		h.auth.writeSignedStream(w, r, func(w io.Writer) error {
			// ChangesResponse{Format, Version, Epoch, Full: true, Snapshot} as
			// encoding/json writes it.
			head := []byte(`{"format":` + strconv.Itoa(memory.ReplicationFormat) + `,"version":` + strconv.FormatUint(view.Version, 10))
			if view.Epoch != "" {
				e, _ := json.Marshal(view.Epoch)
				head = append(append(head, `,"epoch":`...), e...)
			}
			head = append(head, `,"full":true,"snapshot":`...)
			if _, err := w.Write(head); err != nil {
				return err
			}
			if err := view.WriteJSON(w, keep); err != nil {
				return err
			}
			_, err := io.WriteString(w, "}\n")
			return err
		})
		return
	}
	out := ChangesResponse{Format: memory.ReplicationFormat, Version: view.Version, Epoch: view.Epoch, Changes: make([]memory.Change, 0, len(ch))}
	for _, c := range ch {
		c.Old, c.PrevSerial = nil, 0 // replicas replace whole RRsets; these are for zone transfers
		if region != "" && c.Kind == memory.ChangeRRSet {
			recs := make([]memory.ZoneRecord, 0, len(c.Records))
			for _, r := range c.Records {
				if h.filter(region, c.Zone, r) {
					recs = append(recs, r)
				}
			}
			c.Records = recs
		}
		out.Changes = append(out.Changes, c)
	}
	h.auth.WriteSignedJSON(w, r, out)
}

// keep returns the record filter of region's view, nil for all records.
func (h *Handler) keep(region string) func(zone string, r memory.ZoneRecord) bool {
	if region == "" {
		return nil
	}
	return func(zone string, r memory.ZoneRecord) bool { return h.filter(region, zone, r) }
}
