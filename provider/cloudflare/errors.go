package cloudflare

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrAPI is matched (errors.Is) by every *APIError.
var ErrAPI = errors.New("cloudflare: API error")

// ErrNoZone is matched when no zone has the name asked for. Permanent.
var ErrNoZone = errors.New("cloudflare: zone not found")

// Message is one entry of a Cloudflare response's "errors" list.
type Message struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// codeThrottled is Cloudflare's "Please wait and consider throttling your
// request speed".
const codeThrottled = 971

// APIError is an answer from Cloudflare's API that is not a success: an
// HTTP status of 400 or more, or "success": false. HTTP 429 (and error
// code 971) is throttled, 5xx transient, everything else permanent (a bad
// token, a conflicting record, a malformed request).
type APIError struct {
	// Method and Path are the request's.
	Method, Path string
	// Status is the HTTP status code.
	Status int
	// Errors are the messages Cloudflare sent.
	Errors []Message
	// Wait is the Retry-After the server asked for, 0 when none.
	Wait time.Duration
}

// Error summarises the request, the status and Cloudflare's messages.
func (e *APIError) Error() string {
	var parts []string
	for _, m := range e.Errors {
		parts = append(parts, fmt.Sprintf("%d: %s", m.Code, m.Message))
	}
	s := fmt.Sprintf("cloudflare: %s %s: HTTP %d", e.Method, e.Path, e.Status)
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	return s
}

// Unwrap returns ErrAPI.
func (e *APIError) Unwrap() error { return ErrAPI }

// StatusCode returns the HTTP status.
func (e *APIError) StatusCode() int { return e.Status }

// Throttled reports HTTP 429 or Cloudflare's error code 971.
func (e *APIError) Throttled() bool {
	if e.Status == 429 {
		return true
	}
	for _, m := range e.Errors {
		if m.Code == codeThrottled {
			return true
		}
	}
	return false
}

// Temporary reports throttling, HTTP 5xx and 408.
func (e *APIError) Temporary() bool {
	return e.Throttled() || e.Status >= 500 || e.Status == 408
}

// RetryAfter returns the wait the server asked for (the Retry-After
// header), which provider.Retry honours.
func (e *APIError) RetryAfter() time.Duration { return e.Wait }

// HasCode reports whether Cloudflare sent error code c (e.g. 81053, "a
// record with that host already exists").
func (e *APIError) HasCode(c int) bool {
	for _, m := range e.Errors {
		if m.Code == c {
			return true
		}
	}
	return false
}

// ErrNotConfigured is returned by the methods of a Provider not made by New
// (a zero Provider).
var ErrNotConfigured = errors.New("cloudflare: provider not configured (use New)")
