package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
)

// httpRef is the net/http engine: the reference implementation the lean
// engine is checked against, selectable with Engine "nethttp". It uses a
// private Transport with keep-alives, compression, proxies and HTTP/2 off,
// and never follows redirects. net/http runs a reader and a writer
// goroutine per connection; they end when Probe closes the response.
type httpRef struct {
	h      *HTTP
	host   string // the Host header
	client *http.Client
	url    url.URL
	header http.Header
	body   []byte
}

func newHTTPRef(h *HTTP, host string, body []byte) *httpRef {
	r := &httpRef{h: h, host: host, body: body, header: make(http.Header)}
	r.url = url.URL{Scheme: "http", Host: h.dialAddr, Opaque: h.cfg.Path}
	if h.useTLS {
		r.url.Scheme = "https"
	}
	for k, v := range h.cfg.Headers {
		r.header[k] = []string{v}
	}
	if r.header.Get("User-Agent") == "" {
		r.header.Set("User-Agent", httpUserAgent)
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: httpMaxHeaderBytes,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{},
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := h.dial(ctx)
			if err != nil {
				return nil, err
			}
			probeSetDeadline(ctx, c, h.cfg.ResponseTimeout)
			return c, nil
		},
	}
	if h.useTLS {
		tr.TLSClientConfig = h.tls.config()
	}
	r.client = &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return r
}

func (r *httpRef) probe(ctx context.Context) Result {
	u := r.url
	m := r.h.cfg.method()
	req, err := http.NewRequestWithContext(ctx, m, u.String(), nil)
	if err != nil {
		return Result{Status: Fail, Kind: KindOther, Detail: err.Error()}
	}
	req.URL = &u
	req.Host = r.host
	req.Header = r.header.Clone()
	if r.body != nil || m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch {
		req.Body = io.NopCloser(bytes.NewReader(r.body))
		req.ContentLength = int64(len(r.body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(r.body)), nil }
		if len(r.body) == 0 {
			req.Body = http.NoBody
		}
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return httpFailed("request", err)
	}
	defer resp.Body.Close()
	if len(r.h.segs) == 0 {
		return r.h.verdict(resp.StatusCode, nil, false)
	}
	matched, err := httpRefMatch(resp.Body, r.h.segs, r.h.window)
	return r.h.verdict(resp.StatusCode, err, matched)
}

// httpRefMatch reads body until segs matched, the window is full, or the
// body ends; an error before that is returned.
func httpRefMatch(body io.Reader, segs [][]byte, window int) (bool, error) {
	var m segMatcher
	m.reset(segs)
	left := int64(window)
	if window == 0 {
		left = -1
	}
	buf := make([]byte, 4096)
	for {
		p := buf
		if left >= 0 && int64(len(p)) > left {
			p = p[:left]
		}
		if len(p) == 0 {
			return m.done(), nil
		}
		n, err := body.Read(p)
		if m.feed(p[:n]) {
			return true, nil
		}
		if left >= 0 {
			left -= int64(n)
		}
		if left == 0 {
			return false, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}
