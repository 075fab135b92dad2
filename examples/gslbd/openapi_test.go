package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// openAPIDoc is openapi.yaml, decoded.
type openAPIDoc struct {
	root map[string]any
}

func loadOpenAPI(t *testing.T) *openAPIDoc {
	t.Helper()
	var root map[string]any
	if err := yaml.Unmarshal(openAPIYAML, &root); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if v, _ := root["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Fatalf("openapi.yaml: openapi %q, want 3.x", v)
	}
	return &openAPIDoc{root: root}
}

// operation finds the operation of method on path (templates match any
// segment; the template with the most literal segments wins).
func (d *openAPIDoc) operation(method, path string) (string, map[string]any) {
	paths, _ := d.root["paths"].(map[string]any)
	best, bestLit := "", -1
	segs := strings.Split(path, "/")
	for tmpl := range paths {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		lit, ok := 0, true
		for i := range ts {
			if strings.HasPrefix(ts[i], "{") {
				continue
			}
			if ts[i] != segs[i] {
				ok = false
				break
			}
			lit++
		}
		if ok && lit > bestLit {
			best, bestLit = tmpl, lit
		}
	}
	if best == "" {
		return "", nil
	}
	op, _ := paths[best].(map[string]any)[strings.ToLower(method)].(map[string]any)
	return best, op
}

// resolve follows a $ref inside the document.
func (d *openAPIDoc) resolve(s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		var cur any = d.root
		for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[p]
		}
		s = cur.(map[string]any)
	}
}

// check validates v (decoded with UseNumber) against schema s and returns
// every mismatch, each with its JSON path. It knows the keywords
// openapi.yaml uses: type, properties, required, additionalProperties,
// items, enum, pattern, format date-time.
func (d *openAPIDoc) check(s map[string]any, v any, path string) []string {
	s = d.resolve(s)
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, path+": "+fmt.Sprintf(f, a...)) }
	switch typ, _ := s["type"].(string); typ {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("want an object, got %T", v)
			return errs
		}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := m[r.(string)]; !ok {
				bad("required field %q missing", r)
			}
		}
		for k, fv := range m {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, d.check(ps, fv, path+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					bad("field %q is not in the API description", k)
				}
			case map[string]any:
				errs = append(errs, d.check(ap, fv, path+"."+k)...)
			case nil:
				if props != nil {
					bad("field %q is not in the API description", k)
				}
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad("want an array, got %T", v)
			return errs
		}
		for i, e := range a {
			errs = append(errs, d.check(s["items"].(map[string]any), e, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			bad("want a string, got %T %v", v, v)
			return errs
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			bad("%q does not match %s", str, p)
		}
		if s["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				bad("%q is not an RFC 3339 time", str)
			}
		}
	case "integer":
		n, ok := v.(json.Number)
		if _, err := strconv.ParseUint(strings.TrimPrefix(string(n), "-"), 10, 64); !ok || err != nil {
			bad("want an integer, got %v", v)
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			bad("want a number, got %T", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("want a boolean, got %T", v)
		}
	case "":
	default:
		bad("schema type %q unknown to the checker", typ)
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		bad("%v is not one of %v", v, enum)
	}
	return errs
}

// checkResponse checks a response against the operation it answers: the
// status code must be documented and a JSON body must fit its schema.
func (d *openAPIDoc) checkResponse(t *testing.T, method, path string, code int, ctype string, body []byte) {
	t.Helper()
	tmpl, op := d.operation(method, path)
	if op == nil {
		t.Errorf("%s %s: not in openapi.yaml", method, path)
		return
	}
	resp, ok := op["responses"].(map[string]any)[strconv.Itoa(code)].(map[string]any)
	if !ok {
		t.Errorf("%s %s (%s): status %d is not documented\n%s", method, path, tmpl, code, body)
		return
	}
	resp = d.resolve(resp)
	content, _ := resp["content"].(map[string]any)
	mt, _ := strings.CutSuffix(strings.Split(ctype, ";")[0], " ")
	c, ok := content[mt].(map[string]any)
	if !ok {
		t.Errorf("%s %s: %d answered %s, documented %v", method, path, code, ctype, content)
		return
	}
	if mt != "application/json" {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%s %s: body is not JSON: %v", method, path, err)
		return
	}
	for _, e := range d.check(c["schema"].(map[string]any), v, "body") {
		t.Errorf("%s %s → %d: %s", method, path, code, e)
	}
}

// TestOpenAPIDescribesRealResponses sends real requests to a controller
// (in-memory probers, a real node over HTTP, a node that is down) and
// checks every answer against openapi.yaml: the status code is documented
// and the body fits the schema, with no undocumented field.
func TestOpenAPIDescribesRealResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	const secret = "0123456789abcdef0123"

	var nodeH atomic.Pointer[http.Handler]
	nodeSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*nodeH.Load()).ServeHTTP(w, r) }))
	defer nodeSrv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // a node that is down

	cfgYAML := strings.Replace(apiYAML, "replication: {secret: 0123456789abcdef0123}",
		fmt.Sprintf("replication: {secret: %s, notify: [%q, %q]}", secret, nodeSrv.URL+"/replication", dead.URL+"/replication"), 1)
	c := newTestController(t, cfgYAML)
	ctlSrv := httptest.NewServer(c.handler())
	defer ctlSrv.Close()

	ncfg, err := ParseConfig([]byte(fmt.Sprintf("zone: example.test.\nreplication: {secret: %s}\nnode: {url: %q, interval: 100ms}\n"+
		"records: [{name: app.example.test., answer: roundRobin, addresses: [{ip: 192.0.2.1}]}]\n", secret, ctlSrv.URL+"/replication")))
	if err != nil {
		t.Fatal(err)
	}
	if err := ncfg.ValidateNode(); err != nil {
		t.Fatal(err)
	}
	n, err := newNode(ncfg, nil, newMetrics(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	h := n.handler()
	nodeH.Store(&h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, 30*time.Second, "node synced", func() bool { return n.replica.Status().Synced })

	auth := "Bearer let-me-in-0123456789"
	reqs := []struct{ method, base, path string }{
		{"GET", ctlSrv.URL, "/api/status"},
		{"GET", ctlSrv.URL, "/api/records"},
		{"GET", ctlSrv.URL, "/api/records/app.example.test"},
		{"GET", ctlSrv.URL, "/api/records/nope.example.test"},
		{"GET", ctlSrv.URL, "/api/explain?name=app.example.test&client=192.0.2.7"},
		{"GET", ctlSrv.URL, "/api/explain?name=app.example.test"},
		{"GET", ctlSrv.URL, "/api/explain?name=nope.example.test"},
		{"GET", ctlSrv.URL, "/api/explain?name=app.example.test&client=nope"},
		{"POST", ctlSrv.URL, "/api/records/app.example.test/addresses/192.0.2.1/drain"},
		{"POST", ctlSrv.URL, "/api/records/app.example.test/addresses/192.0.2.1/undrain"},
		{"POST", ctlSrv.URL, "/api/records/app.example.test/addresses/192.0.2.9/drain"},
		{"POST", ctlSrv.URL, "/api/records/app.example.test/addresses/nope/drain"},
		{"POST", ctlSrv.URL, "/api/records/app.example.test/disable"},
		{"POST", ctlSrv.URL, "/api/records/app.example.test/enable"},
		{"POST", ctlSrv.URL, "/api/notify"},
		{"GET", ctlSrv.URL, "/api/load"},
		{"PUT", ctlSrv.URL, "/api/load/eu"}, // no loadShed step: 404
		{"GET", ctlSrv.URL, "/api/status"},  // again, with transitions and notify results
		{"GET", ctlSrv.URL, "/"},
		{"GET", ctlSrv.URL, "/api/openapi.yaml"},
		{"GET", nodeSrv.URL, "/api/status"},
		{"GET", nodeSrv.URL, "/"},
		{"GET", ctlSrv.URL, "/readyz"},
		{"GET", nodeSrv.URL, "/readyz"},
	}
	var notifyCode int
	for _, r := range reqs {
		req, _ := http.NewRequest(r.method, r.base+r.path, nil)
		if r.method != "GET" {
			req.Header.Set("Authorization", auth)
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		path, _, _ := strings.Cut(r.path, "?")
		doc.checkResponse(t, r.method, path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		if r.path == "/api/notify" {
			notifyCode = resp.StatusCode
			if !strings.Contains(string(body), `"ok": true`) || !strings.Contains(string(body), dead.URL) {
				t.Errorf("notify results lack a per-node result:\n%s", body)
			}
		}
		if r.base == ctlSrv.URL && r.path == "/api/status" && !strings.Contains(string(body), nodeSrv.URL) {
			t.Errorf("controller status lacks the node:\n%s", body)
		}
	}
	if notifyCode != http.StatusBadGateway {
		t.Errorf("notify with a node down: status %d, want 502", notifyCode)
	}
}

// TestOpenAPICheckerCatchesMismatches keeps the checker honest: an
// undocumented field, a wrong type and a missing required field are all
// reported.
func TestOpenAPICheckerCatchesMismatches(t *testing.T) {
	doc := loadOpenAPI(t)
	schema := map[string]any{"$ref": "#/components/schemas/Latency"}
	for body, want := range map[string]string{
		`{"lastMs":1,"smoothedMs":1,"p50Ms":1,"p95Ms":1,"p99Ms":1,"samples":1,"extra":1}`: `field "extra" is not in the API description`,
		`{"lastMs":"1","smoothedMs":1,"p50Ms":1,"p95Ms":1,"p99Ms":1,"samples":1}`:         `want a number`,
		`{"smoothedMs":1,"p50Ms":1,"p95Ms":1,"p99Ms":1,"samples":1}`:                      `required field "lastMs" missing`,
		`{"lastMs":1,"smoothedMs":1,"p50Ms":1,"p95Ms":1,"p99Ms":1,"samples":1.5}`:         `want an integer`,
	} {
		dec := json.NewDecoder(strings.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		errs := strings.Join(doc.check(schema, v, "body"), "\n")
		if !strings.Contains(errs, want) {
			t.Errorf("%s: checker said %q, want %q", body, errs, want)
		}
	}
	if errs := doc.check(map[string]any{"$ref": "#/components/schemas/Duration"}, "thirty", "ttl"); len(errs) == 0 {
		t.Error("checker accepted a duration without a unit")
	}
}
