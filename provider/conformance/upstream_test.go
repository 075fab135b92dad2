package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	cloudflare "github.com/libdns/cloudflare"

	"github.com/gslbkit/gslb/record"
)

// upstreamCF is a local server for the part of Cloudflare's API v4 that
// github.com/libdns/cloudflare v0.2.2 uses: GET /zones?name=, GET, POST,
// PATCH and DELETE on /zones/{id}/dns_records (filtered by type and name,
// paged with result_info).
type upstreamCF struct {
	*httptest.Server
	mu   sync.Mutex
	recs map[string]map[string]any // id -> record
	next int
}

func newUpstreamCF(t *testing.T) *upstreamCF {
	f := &upstreamCF{recs: map[string]map[string]any{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *upstreamCF) reply(w http.ResponseWriter, result any, n int) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"success": true, "errors": []any{}, "messages": []any{}, "result": result,
		"result_info": map[string]int{"page": 1, "per_page": 100, "count": n, "total_count": n},
	})
}

func (f *upstreamCF) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/client/v4/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "zones":
		f.reply(w, []map[string]string{{"id": "z1", "name": "example.test"}}, 1)
	case len(parts) == 3 && parts[2] == "dns_records" && r.Method == http.MethodGet:
		q := r.URL.Query()
		out := []map[string]any{}
		for _, rec := range f.recs {
			if (q.Get("type") == "" || rec["type"] == q.Get("type")) && (q.Get("name") == "" || rec["name"] == absName(q.Get("name"))) {
				out = append(out, rec)
			}
		}
		f.reply(w, out, len(out))
	case len(parts) == 3 && parts[2] == "dns_records" && r.Method == http.MethodPost:
		var rec map[string]any
		_ = json.NewDecoder(r.Body).Decode(&rec)
		f.next++
		rec["id"] = fmt.Sprint(f.next)
		rec["name"] = absName(rec["name"])
		f.recs[rec["id"].(string)] = rec
		f.reply(w, rec, 1)
	case len(parts) == 4 && r.Method == http.MethodPatch:
		var rec map[string]any
		_ = json.NewDecoder(r.Body).Decode(&rec)
		rec["id"] = parts[3]
		rec["name"] = absName(rec["name"])
		f.recs[parts[3]] = rec
		f.reply(w, rec, 1)
	case len(parts) == 4 && r.Method == http.MethodDelete:
		delete(f.recs, parts[3])
		f.reply(w, map[string]string{"id": parts[3]}, 1)
	default:
		http.Error(w, `{"success":false,"errors":[{"code":7000,"message":"no route"}]}`, http.StatusNotFound)
	}
}

// absName makes a record name fully qualified without the trailing dot,
// as Cloudflare stores it ("www" and "www.example.test." are
// "www.example.test"; "@" is the zone).
func absName(v any) string {
	n, _ := v.(string)
	n = strings.TrimSuffix(n, ".")
	switch {
	case n == "@" || n == "":
		return "example.test"
	case n == "example.test" || strings.HasSuffix(n, ".example.test"):
		return n
	}
	return n + ".example.test"
}

// Do sends the client's requests for api.cloudflare.com to the local
// server.
func (f *upstreamCF) Do(req *http.Request) (*http.Response, error) {
	u, _ := url.Parse(f.URL)
	req.URL.Scheme, req.URL.Host = u.Scheme, u.Host
	return http.DefaultClient.Do(req)
}

// The upstream libdns/cloudflare v0.2.2 updates one record per call, so a
// set of two addresses collapses to one while SetRecords answers nil. The
// reconciler's read-back catches it: three applies in a row read back one
// address, then a conflict names the provider, the set and both values,
// and the set is no longer rewritten on every apply.
func TestUpstreamCloudflareCollapseIsAConflict(t *testing.T) {
	f := newUpstreamCF(t)
	p := &cloudflare.Provider{APIToken: "token", HTTPClient: f}
	r, err := record.New(p, record.LocalConfig("upstream"), record.Options{ProviderName: "libdns/cloudflare v0.2.2"})
	if err != nil {
		t.Fatal(err)
	}
	d := record.Desired{Sets: []record.RRSet{{Zone: zone, Name: "www", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1", "192.0.2.2"}}}}
	ctx := context.Background()
	for i := 1; i < record.DefaultConflictAfter; i++ {
		if _, err := r.Apply(ctx, d); err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
	}
	_, err = r.Apply(ctx, d)
	var rb *record.ReadBackError
	if !errors.As(err, &rb) {
		t.Fatalf("apply %d: %v; want a *record.ReadBackError", record.DefaultConflictAfter, err)
	}
	if len(rb.Got.Values) != 1 || len(rb.Want.Values) != 2 || rb.Provider != "libdns/cloudflare v0.2.2" {
		t.Errorf("conflict = %v", rb)
	}
	t.Logf("%v", rb)
	if len(r.Conflicts()) != 1 {
		t.Errorf("Conflicts() = %v", r.Conflicts())
	}
	rep, err := r.Apply(ctx, d)
	if err != nil || rep.Writes != 0 {
		t.Errorf("apply after the conflict: %d writes, %v; want none (held until the back-off passes)", rep.Writes, err)
	}
}
