package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// getExplain fetches GET /api/explain with query q and decodes it.
func getExplain(t *testing.T, base string, q url.Values) (int, explainView, string) {
	t.Helper()
	code, body := get(t, base, "/api/explain?"+q.Encode())
	var v explainView
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
	return code, v, body
}

// TestExplainGeo runs gslbd with a geo record (eu: .1 .2, us: .3, ap: .4;
// eu and us mapped, ap the default) and explains a client in each region
// and an unplaced one: the trace's answer, its ECS scope and the zone's
// actual reply agree, each step says what it kept and dropped, and the
// requester's own address is explained when the client is left out.
func TestExplainGeo(t *testing.T) {
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t), newBackend(t)}
	d := startDaemon(t, geoYAML("", bs))
	waitFor(t, 60*time.Second, "every address published", func() bool {
		_, v, _ := getExplain(t, d.http, url.Values{"name": {"geo.example.test."}, "client": {"198.51.100.7"}})
		return len(v.Published) == 4
	})
	for _, c := range []struct {
		client, region, by string
		want               []string
		scope              int
	}{
		{"198.51.100.7", "eu", "198.51.100.0/24", []string{"192.0.2.1", "192.0.2.2"}, 24},
		{"203.0.113.0/24", "us", "203.0.113.0/24", []string{"192.0.2.3"}, 24},
		{"2001:db8:5:1::/64", "us", "2001:db8:5::/48", []string{"192.0.2.3"}, 48},
		{"192.0.2.0/24", "ap", "default", []string{"192.0.2.4"}, 0}, // unplaced: the default region
	} {
		t.Run(c.client, func(t *testing.T) {
			code, v, body := getExplain(t, d.http, url.Values{"name": {"geo.example.test"}, "type": {"a"}, "client": {c.client}})
			if code != http.StatusOK {
				t.Fatalf("%d %s", code, body)
			}
			if v.Kind != AnswerGeo || len(v.Configured) != 4 || len(v.Steps) != 1 || v.Steps[0].Name != "geo" || v.ClientFrom != "query" {
				t.Fatalf("explain: %s", body)
			}
			s := v.Steps[0]
			if !slices.Equal(sorted(s.Kept), c.want) || len(s.Kept)+len(s.Dropped) != 4 || s.NoOpinion {
				t.Errorf("geo step kept %v dropped %v, want %v kept", s.Kept, s.Dropped, c.want)
			}
			if !strings.Contains(s.Why, "client in "+c.region+" by "+c.by) {
				t.Errorf("why %q, want the client in %s by %s", s.Why, c.region, c.by)
			}
			if !slices.Equal(sorted(v.Answer.Records), c.want) || !slices.Equal(sorted(v.Reply.Records), c.want) {
				t.Errorf("answer %v, reply %v, want %v", v.Answer.Records, v.Reply.Records, c.want)
			}
			if c.by != "default" && (v.Answer.ECSScope != c.scope || v.Reply.ECSScope != c.scope) {
				t.Errorf("ECS scope %d, reply's %d, want %d", v.Answer.ECSScope, v.Reply.ECSScope, c.scope)
			}
			if v.Answer.ECSScope != v.Reply.ECSScope || v.Reply.Rcode != "NOERROR" {
				t.Errorf("answer's ECS scope %d, the reply's %d (%s)", v.Answer.ECSScope, v.Reply.ECSScope, v.Reply.Rcode)
			}
			t.Logf("GET /api/explain for %s:\n%s", c.client, body)
			if !strings.Contains(v.Trace, "1 geo: kept") {
				t.Errorf("trace:\n%s", v.Trace)
			}
		})
	}
	// Without client: the requester (127.0.0.1, no prefix: the default).
	code, v, body := getExplain(t, d.http, url.Values{"name": {"geo.example.test."}})
	if code != http.StatusOK || v.ClientFrom != "requester" || v.Client != "127.0.0.1/32" || !slices.Equal(v.Reply.Records, []string{"192.0.2.4"}) {
		t.Errorf("requester: %d %s", code, body)
	}
	for q, want := range map[string]int{
		"name=nope.example.test.":                   http.StatusNotFound,
		"client=10.0.0.0/8":                         http.StatusBadRequest,
		"name=geo.example.test.&client=nonsense":    http.StatusBadRequest,
		"name=geo.example.test.&type=MX":            http.StatusBadRequest,
		"name=geo.example.test.&client=10.0.0.1/33": http.StatusBadRequest,
	} {
		if code, body := get(t, d.http, "/api/explain?"+q); code != want {
			t.Errorf("%s: %d %s, want %d", q, code, body, want)
		}
	}
	if _, page := get(t, d.http, "/"); !strings.Contains(page, `href="/api/explain?name=geo.example.test."`) {
		t.Error("the status page has no explain link for geo.example.test.")
	}
}

// TestExplainClient: the client parameter's forms.
func TestExplainClient(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1":            "192.0.2.1/32",
		"192.0.2.77/24":        "192.0.2.0/24",
		"2001:db8::1":          "2001:db8::1/128",
		"::ffff:192.0.2.1":     "192.0.2.1/32",
		"::ffff:192.0.2.0/120": "192.0.2.0/24",
		"fe80::1%eth0":         "fe80::1/128",
	} {
		p, from, err := explainClient(in, "")
		if err != nil || p.String() != want || from != "query" {
			t.Errorf("%s: %v %s %v, want %s", in, p, from, err, want)
		}
	}
	if p, from, err := explainClient("", "[2001:db8::9]:4711"); err != nil || p.String() != "2001:db8::9/128" || from != "requester" {
		t.Errorf("requester: %v %s %v", p, from, err)
	}
}

// TestExplainWithinUnplaced: a geo record answered one address by weight
// within the region, and a geo block without a default: a client no
// prefix places has the geo step's "no opinion" (every address goes on)
// and the weighted step's one draw, with the note that the reply draws
// again; an eu client has eu's addresses kept and then one of them.
func TestExplainWithinUnplaced(t *testing.T) {
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t)}
	var recs strings.Builder
	recs.WriteString("  - name: gw.example.test.\n    ttl: 1s\n    answer: geo\n    within: weightedRandom\n    addresses:\n")
	for i, reg := range []string{"eu", "eu", "us"} {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, regions: [%s], weight: %d, probeAddr: %q}\n", i+1, reg, 3-i, bs[i].addr())
	}
	d := startDaemon(t, controllerYAML(`geo:
  prefixes: {"198.51.100.0/24": eu, "203.0.113.0/24": us}`, recs.String()))
	q := url.Values{"name": {"gw.example.test."}, "client": {"192.0.2.0/24"}}
	waitFor(t, 60*time.Second, "every address published", func() bool {
		_, v, _ := getExplain(t, d.http, q)
		return len(v.Published) == 3
	})
	_, v, body := getExplain(t, d.http, q)
	if len(v.Steps) != 2 || v.Steps[0].Name != "geo" || v.Steps[1].Name != "within weightedRandom" {
		t.Fatalf("steps: %s", body)
	}
	if g := v.Steps[0]; !g.NoOpinion || len(g.Kept) != 3 || len(g.Dropped) != 0 || !strings.Contains(g.Why, "client not placed") {
		t.Errorf("geo step for an unplaced client: %+v", g)
	}
	if w := v.Steps[1]; len(w.Kept) != 1 || len(w.Dropped) != 2 || !strings.Contains(w.Why, "192.0.2.1=3") {
		t.Errorf("weighted step: %+v", w)
	}
	if len(v.Answer.Records) != 1 || len(v.Reply.Records) != 1 || v.Note == "" || v.Within != AnswerWeightedRandom {
		t.Errorf("answer %v, reply %v, note %q: %s", v.Answer.Records, v.Reply.Records, v.Note, body)
	}
	t.Logf("unplaced:\n%s", v.Trace)
	q.Set("client", "198.51.100.9")
	_, v, body = getExplain(t, d.http, q)
	if g := v.Steps[0]; g.NoOpinion || !slices.Equal(sorted(g.Kept), []string{"192.0.2.1", "192.0.2.2"}) {
		t.Errorf("geo step for an eu client: %s", body)
	}
	if a := v.Answer.Records; len(a) != 1 || (a[0] != "192.0.2.1" && a[0] != "192.0.2.2") || v.Answer.ECSScope != 24 || v.Reply.ECSScope != 24 {
		t.Errorf("eu client: %s", body)
	}
	t.Logf("eu:\n%s", v.Trace)
}
