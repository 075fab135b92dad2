package cloudflare

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name, h string
		want    time.Duration
	}{
		{"empty", "", 0},
		{"seconds", "30", 30 * time.Second},
		{"capped", "999999", time.Hour},
		{"negative", "-5", 0},
		{"date", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"past date", now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"garbage", "soon", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, retryAfter(c.h, now)) })
	}
}

// FuzzRetryAfter: any header value gives a wait in [0, 1h], never a panic.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "1", "-1", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "x"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, h string) {
		if d := retryAfter(h, now); d < 0 || d > time.Hour {
			t.Fatalf("retryAfter(%q) = %v", h, d)
		}
	})
}
