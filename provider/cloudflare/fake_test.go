package cloudflare_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gslbkit/gslb/internal/zoneops"
)

// fakeCloudflare is a local HTTP server speaking the part of Cloudflare's
// API v4 JSON the adapter uses: GET /zones (by name, paged), GET
// /zones/{id}/dns_records (paged, with result_info) and POST
// /zones/{id}/dns_records/batch (deletes then posts, atomic). It checks
// the bearer token and applies Cloudflare's documented rules: TTL 1
// (automatic) or 60–86400; no record identical to an existing one (code
// 81058); no CNAME beside other records at a name (81053), while a CNAME
// at the apex is accepted (flattened); TXT strings of at most 255 bytes.
// It can answer the next requests with an error such as HTTP 429 with
// code 971 and a Retry-After header.
type fakeCloudflare struct {
	*httptest.Server
	token, zoneID, zone string // zone without trailing dot
	pageSize            int

	mu       sync.Mutex
	records  []fakeRecord
	nextID   int
	failNext []fakeFailure
}

type fakeRecord struct {
	ID       string  `json:"id"`
	Type     string  `json:"type"`
	Name     string  `json:"name"`
	Content  string  `json:"content"`
	TTL      int     `json:"ttl"`
	Priority *uint16 `json:"priority,omitempty"`
	Proxied  bool    `json:"proxied"`
}

type fakeFailure struct {
	status     int
	code       int
	retryAfter string
}

func newFakeCloudflare(t *testing.T, token, zoneID, zone string) *fakeCloudflare {
	f := &fakeCloudflare{token: token, zoneID: zoneID, zone: zone, pageSize: 5}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// client returns an HTTP client that sends requests for the API host to
// the fake, the way the adapter's HTTPClient hook is meant to be used.
func (f *fakeCloudflare) client() *http.Client {
	target, _ := url.Parse(f.URL)
	return &http.Client{Transport: rewrite{target: target, base: f.Client().Transport}}
}

type rewrite struct {
	target *url.URL
	base   http.RoundTripper
}

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == "api.cloudflare.com" {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host = r.target.Scheme, r.target.Host
	}
	return r.base.RoundTrip(req)
}

func (f *fakeCloudflare) fail(fs ...fakeFailure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = append(f.failNext, fs...)
}

type apiMsg struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func reply(w http.ResponseWriter, status int, result any, info map[string]int, errs ...apiMsg) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if errs == nil {
		errs = []apiMsg{}
	}
	body := map[string]any{"success": len(errs) == 0, "errors": errs, "messages": []any{}, "result": result}
	if info != nil {
		body["result_info"] = info
	}
	_ = json.NewEncoder(w).Encode(body)
}

func (f *fakeCloudflare) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		reply(w, http.StatusForbidden, nil, nil, apiMsg{10000, "Authentication error"})
		return
	}
	if len(f.failNext) > 0 {
		fl := f.failNext[0]
		f.failNext = f.failNext[1:]
		if fl.retryAfter != "" {
			w.Header().Set("Retry-After", fl.retryAfter)
		}
		reply(w, fl.status, nil, nil, apiMsg{fl.code, "injected by the test"})
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/client/v4")
	recs := "/zones/" + f.zoneID + "/dns_records"
	switch {
	case r.Method == http.MethodGet && path == "/zones":
		f.listZones(w, r)
	case r.Method == http.MethodGet && path == recs:
		f.list(w, r)
	case r.Method == http.MethodPost && path == recs+"/batch":
		f.batch(w, r)
	case strings.HasPrefix(path, "/zones/"):
		reply(w, http.StatusNotFound, nil, nil, apiMsg{7003, "Could not route to " + path})
	default:
		reply(w, http.StatusNotFound, nil, nil, apiMsg{7000, "No route for that URI"})
	}
}

func page(q url.Values, n, max int) (start, end int, info map[string]int) {
	p, _ := strconv.Atoi(q.Get("page"))
	per, _ := strconv.Atoi(q.Get("per_page"))
	p, per = max1(p), min(max1(per), max)
	pages := (n + per - 1) / per
	start, end = min((p-1)*per, n), min(p*per, n)
	return start, end, map[string]int{"page": p, "per_page": per, "count": end - start, "total_count": n, "total_pages": pages}
}

func max1(v int) int { return max(v, 1) }

func (f *fakeCloudflare) listZones(w http.ResponseWriter, r *http.Request) {
	zones := []map[string]string{{"id": f.zoneID, "name": f.zone}}
	if n := r.URL.Query().Get("name"); n != "" && !strings.EqualFold(n, f.zone) {
		zones = zones[:0]
	}
	start, end, info := page(r.URL.Query(), len(zones), 50)
	reply(w, http.StatusOK, zones[start:end], info)
}

func (f *fakeCloudflare) list(w http.ResponseWriter, r *http.Request) {
	start, end, info := page(r.URL.Query(), len(f.records), f.pageSize)
	reply(w, http.StatusOK, f.records[start:end], info)
}

func (f *fakeCloudflare) batch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Deletes []struct {
			ID string `json:"id"`
		} `json:"deletes"`
		Posts []fakeRecord `json:"posts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		reply(w, http.StatusBadRequest, nil, nil, apiMsg{9207, "Request body is invalid: " + err.Error()})
		return
	}
	next := slices.Clone(f.records)
	var deleted, posted []fakeRecord
	for _, d := range req.Deletes {
		i := slices.IndexFunc(next, func(x fakeRecord) bool { return x.ID == d.ID })
		if i < 0 {
			reply(w, http.StatusNotFound, nil, nil, apiMsg{81044, "Record does not exist: " + d.ID})
			return
		}
		deleted = append(deleted, next[i])
		next = slices.Delete(next, i, i+1)
	}
	for _, p := range req.Posts {
		p.Name = strings.ToLower(strings.TrimSuffix(p.Name, "."))
		if p.Name == "@" {
			p.Name = f.zone
		} else if p.Name != f.zone && !strings.HasSuffix(p.Name, "."+f.zone) {
			p.Name += "." + f.zone // relative names are accepted too
		}
		if msg := validate(p); msg.Code != 0 {
			reply(w, http.StatusBadRequest, nil, nil, msg)
			return
		}
		for _, x := range next {
			if x.Name != p.Name {
				continue
			}
			if x.Type == p.Type && x.Content == p.Content {
				reply(w, http.StatusBadRequest, nil, nil, apiMsg{81058, "An identical record already exists."})
				return
			}
			if x.Type == "CNAME" || p.Type == "CNAME" {
				reply(w, http.StatusBadRequest, nil, nil, apiMsg{81053, "An A, AAAA, or CNAME record with that host already exists."})
				return
			}
		}
		f.nextID++
		p.ID = fmt.Sprintf("%032x", f.nextID)
		next = append(next, p)
		posted = append(posted, p)
	}
	f.records = next
	reply(w, http.StatusOK, map[string]any{"deletes": deleted, "posts": posted, "patches": []any{}, "puts": []any{}}, nil)
}

func validate(p fakeRecord) apiMsg {
	if p.TTL != 1 && (p.TTL < 60 || p.TTL > 86400) {
		return apiMsg{9021, fmt.Sprintf("Invalid TTL %d. Must be between 60 and 86400 seconds, or 1 for Automatic.", p.TTL)}
	}
	if p.Content == "" {
		return apiMsg{9005, "Content for " + p.Type + " record is invalid."}
	}
	switch p.Type {
	case "A", "AAAA", "CNAME", "NS", "MX":
	case "TXT":
		if len(p.Content) > 2048 {
			return apiMsg{9100, "DNS record content is invalid: TXT content exceeds 2048 characters"}
		}
		// Each quoted string holds at most 255 bytes.
		for _, s := range strings.Split(p.Content, `" "`) {
			if len(zoneops.UnquoteTXT(`"`+strings.Trim(s, `"`)+`"`)) > 255 {
				return apiMsg{9100, "DNS record content is invalid: a TXT string exceeds 255 characters"}
			}
		}
	default:
		return apiMsg{9000, "DNS record type is invalid."}
	}
	return apiMsg{}
}
