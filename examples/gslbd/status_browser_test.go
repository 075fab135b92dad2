package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gslbkit/gslb/internal/testproc"
)

// findChromium returns the path of Chromium (or Chrome): GSLBKIT_CHROMIUM
// where it is set, else the first installed. Where there is none the test
// is skipped, or fails where GSLBKIT_REQUIRE_CHROMIUM=1 (CI sets it).
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GSLBKIT_CHROMIUM"); p != "" {
		return p
	}
	return testproc.Require(t, "GSLBKIT_REQUIRE_CHROMIUM",
		"chromium is not installed; the status page's browser test needs it (apt-get install -y chromium, or set GSLBKIT_CHROMIUM to its path)",
		"chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
}

// newBrowser starts a headless Chromium with a 360 px wide viewport and
// returns a tab's context; everything is closed when the test ends.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := findChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(360, 800),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-gpu", true),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox as root
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); acancel() })
	// The first Run starts the browser.
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(360, 800)); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// pageText returns the text of the elements matching sel, one string each.
func pageText(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	js := fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(e => e.innerText)`, sel)
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", sel, err)
	}
	return out
}

// addressText is the text of the status page's card of ip.
func addressText(t *testing.T, ctx context.Context, ip string) string {
	t.Helper()
	return strings.Join(pageText(t, ctx, `article.addr[data-ip="`+ip+`"]`), "\n")
}

// headText is the first line of the card of ip: address, state, served,
// intent.
func headText(t *testing.T, ctx context.Context, ip string) string {
	t.Helper()
	return strings.Join(pageText(t, ctx, `article.addr[data-ip="`+ip+`"] .head`), "\n")
}

// artifactDir is where the test saves files for people to look at:
// $GSLBKIT_ARTIFACTS when set (CI keeps it), else the test's artifact
// directory (kept with go test -artifacts).
func artifactDir(t *testing.T) string {
	if d := os.Getenv("GSLBKIT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.ArtifactDir()
}

// TestStatusPageInBrowser loads the controller's and a node's status page
// in a real headless Chromium, 360 px wide, and reads them as a person
// would: every address passing; a backend stopped → its address critical
// and not served; a drain made through the API → drained; the node's
// source, last sync and health; a record's "why this answer" link opens its
// explanation. The page must refresh itself (the test
// never reloads it) and fit 360 px without horizontal scrolling. A
// screenshot is saved as an artifact. Order is asserted under hang
// guards; times are logged.
func TestStatusPageInBrowser(t *testing.T) {
	ctx := newBrowser(t)
	bs := []*backend{newBackend(t), newBackend(t)}
	var recs strings.Builder
	// passingThreshold 10: a drain (forced critical) stays visible for
	// about 2 s of passing probes even where drains are not sticky.
	recs.WriteString("  - name: app.example.test.\n    ttl: 5s\n    failover: app.backup.example.net.\n    probe: {policy: {passingThreshold: 10, initialState: passing}}\n    addresses:\n")
	for i, b := range bs {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, regions: [eu-west-%d], probeAddr: %q}\n", i+1, i+1, b.addr())
	}
	const secret = "0123456789abcdef0123"
	ctl := startDaemon(t, controllerYAML("replication: {secret: "+secret+"}", recs.String()))
	const guard = 60 * time.Second

	if _, err := chromedp.Run(ctx, chromedp.Navigate("http://"+ctl.http+"/?refresh=250ms")); err != nil {
		t.Fatal(err)
	}
	// The first publication waits for every address's first probe result
	// (the startup hold); the page then shows the embedded zone's health.
	waitFor(t, guard, "page shows both addresses passing and served, and the embedded zone published", func() bool {
		a, b := headText(t, ctx, "192.0.2.1"), headText(t, ctx, "192.0.2.2")
		return strings.Contains(a, "passing") && strings.Contains(b, "passing") &&
			strings.Contains(a, "served") && !strings.Contains(b, "not served") &&
			strings.Contains(strings.Join(pageText(t, ctx, "body"), ""), "embedded")
	})
	// Everything the page promises is on it (the embedded zone's health
	// once its first reconcile is done).
	waitFor(t, guard, "page shows the embedded zone's health", func() bool {
		return strings.Contains(strings.Join(pageText(t, ctx, ".box.provider"), ""), "embedded")
	})
	body := strings.Join(pageText(t, ctx, "body"), "")
	for _, want := range []string{"app.example.test.", "TTL 5s", "P50", "P95", "P99", "time in state", "last result",
		"Recent transitions", "Publishing", "embedded", "Replication nodes", "/metrics", "/api/records", "probed at", bs[0].addr()} {
		if !strings.Contains(body, want) {
			t.Errorf("status page lacks %q:\n%s", want, body)
		}
	}

	// Stop a backend: its address must show as critical, in words.
	start := time.Now()
	bs[1].srv.Close()
	waitFor(t, guard, "stopped backend shown critical", func() bool {
		h := headText(t, ctx, "192.0.2.2")
		return strings.Contains(h, "critical") && strings.Contains(h, "not served")
	})
	t.Logf("status page showed the stopped backend critical %v after the stop (refresh 250ms; probes every 200ms, critical after 2 failures)",
		time.Since(start).Round(time.Millisecond))
	if h := headText(t, ctx, "192.0.2.1"); !strings.Contains(h, "passing") {
		t.Errorf("the healthy address is not shown passing: %q", h)
	}
	if tr := strings.Join(pageText(t, ctx, "ol.tr li"), "\n"); !strings.Contains(tr, "192.0.2.2") || !strings.Contains(tr, "critical") {
		t.Errorf("recent transitions lack the change to critical:\n%s", tr)
	}

	// Drain through the API: the page says drained. 192.0.2.1 is the last
	// served address, so the drain needs force.
	req, _ := http.NewRequest(http.MethodPost, "http://"+ctl.http+"/api/records/app.example.test/addresses/192.0.2.1/drain", strings.NewReader(`{"force": true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("drain: %s", resp.Status)
	}
	start = time.Now()
	waitFor(t, guard, "drained address shown drained", func() bool {
		h := headText(t, ctx, "192.0.2.1")
		return strings.Contains(h, "drained") && strings.Contains(h, "not served")
	})
	t.Logf("status page showed the drain %v after the API call", time.Since(start).Round(time.Millisecond))
	if a := addressText(t, ctx, "192.0.2.1"); !strings.Contains(a, "drain at ") {
		t.Errorf("operator action not shown: %q", a)
	}

	// The layout holds at 360 px: nothing wider than the viewport.
	width, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ Inner, Scroll int }](`({Inner: window.innerWidth, Scroll: document.documentElement.scrollWidth})`))
	if err != nil {
		t.Fatal(err)
	}
	if width.Inner != 360 || width.Scroll > 360 {
		t.Errorf("at 360 px the page is %d px wide (viewport %d): it scrolls sideways", width.Scroll, width.Inner)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifactDir(t), "gslbd-status-360px.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the controller's status page at 360 px: %s", shot)

	// The record's "why this answer" link explains it for the browser's
	// own address (GET /api/explain without client).
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.rec[data-record="app.example.test."] a[data-explain]').href`))
	if err != nil {
		t.Fatalf("the record's explain link: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Navigate(href)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, guard, "the explain link opens the record's explanation", func() bool {
		b := strings.Join(pageText(t, ctx, "body"), "")
		return strings.Contains(b, `"name": "app.example.test."`) && strings.Contains(b, `"clientFrom": "requester"`) &&
			strings.Contains(b, `"client": "127.0.0.1/32"`) && strings.Contains(b, `"trace"`)
	})

	// The node's page: its source, last sync and health.
	node := startDaemon(t, fmt.Sprintf(`zone: example.test.
dns: {addr: "127.0.0.1:0"}
http: {addr: "127.0.0.1:0"}
replication: {secret: %s}
node: {url: "http://%s/replication", interval: 200ms}
`, secret, ctl.http), "-node")
	if _, err := chromedp.Run(ctx, chromedp.Navigate("http://"+node.http+"/?refresh=250ms")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, guard, "node page shows a synced copy", func() bool {
		n := strings.Join(pageText(t, ctx, ".box.node"), "")
		return strings.Contains(n, "✔ ok") && strings.Contains(n, "http://"+ctl.http+"/replication") &&
			strings.Contains(n, "last sync") && !strings.Contains(n, "never")
	})
	if names := strings.Join(pageText(t, ctx, "main"), ""); !strings.Contains(names, "app.example.test.") {
		t.Errorf("node page lacks the names it serves:\n%s", names)
	}
	if png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		t.Fatal(err)
	}
	shot = filepath.Join(artifactDir(t), "gslbd-node-status-360px.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the node's status page at 360 px: %s", shot)
}
