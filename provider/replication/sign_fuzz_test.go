package replication_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/provider/replication"
)

// FuzzVerifyRequest: whatever a requester sends as nonce, MAC and secret
// header, VerifyRequest never panics, and accepts a request only when its
// MAC is the one SignRequest makes for the same request and nonce, or when
// it carries the secret itself.
func FuzzVerifyRequest(f *testing.F) {
	f.Add("GET", "/replication/snapshot", "epoch=1", "00ff", "abcd", "")
	f.Add("POST", "/notify", "", "", "", "another-secret-16-bytes")
	f.Add("GET", "/x/changes", "since=3&epoch=e", "n", "zz", "a-shared-secret-of-16")
	f.Fuzz(func(t *testing.T, method, path, query, nonce, mac, header string) {
		cfg := replication.HandlerConfig{Secret: "a-shared-secret-of-16", Header: replication.DefaultSecretHeader}
		u := &url.URL{Scheme: "http", Host: "127.0.0.1", Path: path, RawQuery: query}
		r := &http.Request{Method: method, URL: u, Header: http.Header{}}
		r.Header.Set(replication.NonceHeader, nonce)
		r.Header.Set(replication.MACHeader, mac)
		r.Header.Set(replication.DefaultSecretHeader, header)
		got := cfg.VerifyRequest(r)

		// The same request as SignRequest signs it.
		signed := &http.Request{Method: method, URL: u, Header: http.Header{}}
		cfg.SignRequest(signed)
		want := header == cfg.Secret
		if got && !want {
			// Only a correct MAC may explain acceptance: forging one for
			// a random nonce is as hard as breaking HMAC-SHA256, so the
			// fuzzer finding it means the check is wrong.
			t.Fatalf("accepted a request without the secret: nonce %q mac %q", nonce, mac)
		}
		if !got && want {
			t.Fatalf("refused a request carrying the secret")
		}
		// A correctly signed request is accepted.
		if !cfg.VerifyRequest(signed) {
			t.Fatalf("refused a signed request %s %s?%s", method, path, query)
		}
	})
}

// FuzzVerifyReply: a reply signature that is not SignReply's for this
// nonce and body is refused, and nothing panics.
func FuzzVerifyReply(f *testing.F) {
	f.Add("00112233", []byte(`{"epoch":"e"}`), "deadbeef")
	f.Add("", []byte{}, "")
	f.Fuzz(func(t *testing.T, nonce string, body []byte, sig string) {
		cfg := replication.HandlerConfig{Secret: "a-shared-secret-of-16"}
		good := cfg.SignReply(nonce, body)
		// Hex is read in either case.
		if got := cfg.VerifyReply(nonce, body, sig); got != strings.EqualFold(sig, good) {
			t.Fatalf("VerifyReply(%q) = %v, signature %q", sig, got, good)
		}
		if !cfg.VerifyReply(nonce, body, good) {
			t.Fatal("refused its own signature")
		}
	})
}
