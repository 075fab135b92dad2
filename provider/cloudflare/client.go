package cloudflare

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
)

// maxBody bounds how much of a response is read (a page of 100 records
// is far below it).
const maxBody = 8 << 20

// response is Cloudflare's envelope around every answer.
type response struct {
	Success    bool            `json:"success"`
	Errors     []Message       `json:"errors"`
	Result     json.RawMessage `json:"result"`
	ResultInfo *struct {
		Page       int `json:"page"`
		PerPage    int `json:"per_page"`
		TotalPages int `json:"total_pages"`
		Count      int `json:"count"`
		TotalCount int `json:"total_count"`
	} `json:"result_info"`
}

// do sends one request to path (below BaseURL) with an optional JSON body
// and decodes the envelope's result into out. token overrides the API
// token when non-empty. Errors answer Throttled() and Temporary().
func (p *Provider) do(ctx context.Context, method, path, token string, body, out any) (*response, error) {
	if p.client == nil {
		return nil, ErrNotConfigured
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("cloudflare: %s %s: encoding the request: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, BaseURL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("cloudflare: %s %s: %w", method, path, err)
	}
	if token == "" {
		token = p.cfg.APIToken
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		werr := fmt.Errorf("cloudflare: %s %s: %w", method, stripQuery(path), err)
		return nil, errclass.Mark(werr, errclass.Of(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		werr := fmt.Errorf("cloudflare: %s %s: reading the response: %w", method, stripQuery(path), err)
		return nil, errclass.Mark(werr, errclass.Transient)
	}
	var env response
	jerr := json.Unmarshal(raw, &env)
	if resp.StatusCode >= 400 || jerr != nil || !env.Success {
		status := resp.StatusCode
		if status < 400 && jerr != nil {
			// A 2xx we cannot read: treat it like a bad gateway.
			status = http.StatusBadGateway
			env.Errors = append(env.Errors, Message{Message: "unreadable response: " + jerr.Error()})
		}
		return nil, &APIError{Method: method, Path: stripQuery(path), Status: status, Errors: env.Errors, Wait: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	if out != nil && len(env.Result) > 0 && string(env.Result) != "null" {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return nil, fmt.Errorf("cloudflare: %s %s: decoding the result: %w", method, stripQuery(path), err)
		}
	}
	return &env, nil
}

func stripQuery(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		return path[:i]
	}
	return path
}

// retryAfter parses a Retry-After header: seconds or an HTTP date
// (relative to now). Missing, malformed or past values give 0; values are
// capped at one hour.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		d = time.Duration(min(s, 3600)) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, time.Hour)
}
