package replication

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// Signed replication. A Replica never sends the shared secret: it sends a
// fresh random nonce (NonceHeader) and an HMAC-SHA256 of the request,
// keyed by the secret (MACHeader); the Handler answers a request that
// carries a nonce with an HMAC-SHA256 of the nonce and the whole body
// (SignatureHeader), and the Replica applies nothing whose signature is
// missing or wrong (RejectUnsigned, RejectForged). A process that is not
// the source (one that took its address while it was down, say) learns
// nothing it could replay as the secret, and cannot forge a reply; a
// recorded reply does not verify against a new nonce, so it cannot be
// replayed as new. The data itself travels in the clear: use https for
// confidentiality.
//
// A Handler still accepts the secret in its header (HandlerConfig.Header)
// from replicas older than this scheme, and signs only the replies to
// requests that carry a nonce; SendNotify signs too.
const (
	// NonceHeader carries the requester's fresh nonce (32 hex digits).
	NonceHeader = "X-Gslb-Replication-Nonce"
	// MACHeader carries the HMAC-SHA256 (hex) of the request.
	MACHeader = "X-Gslb-Replication-Mac"
	// SignatureHeader carries the HMAC-SHA256 (hex) of the reply.
	SignatureHeader = "X-Gslb-Replication-Signature"
)

// requestMAC is the MAC of a request: its method, the last element of its
// path (snapshot, changes, notify, answers: a proxy may mount the handler
// under another prefix), its raw query and its nonce.
func requestMAC(secret, method, urlPath, rawQuery, nonce string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("gslb-replication-request\n" + method + "\n" + path.Base(urlPath) + "\n" + rawQuery + "\n" + nonce))
	return m.Sum(nil)
}

// replyMAC starts the MAC of a reply to the request with nonce; the body
// is written to it.
func replyMAC(secret, nonce string) hash.Hash {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("gslb-replication-reply\n" + nonce + "\n"))
	return m
}

// SignRequest authenticates req with c's secret without sending it: it
// sets a fresh nonce and the request's MAC, and returns the nonce, against
// which VerifyReply checks the reply. Set req's URL (query included)
// before.
func (c HandlerConfig) SignRequest(req *http.Request) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	nonce := hex.EncodeToString(b[:])
	req.Header.Set(NonceHeader, nonce)
	req.Header.Set(MACHeader, hex.EncodeToString(requestMAC(c.Secret, req.Method, req.URL.Path, req.URL.RawQuery, nonce)))
	return nonce
}

// VerifyRequest reports whether r carries a valid MAC of c's secret (see
// SignRequest) or, from older requesters, the secret itself in c.Header;
// both are compared in constant time.
func (c HandlerConfig) VerifyRequest(r *http.Request) bool {
	if nonce := r.Header.Get(NonceHeader); nonce != "" {
		got, err := hex.DecodeString(r.Header.Get(MACHeader))
		if err == nil && hmac.Equal(got, requestMAC(c.Secret, r.Method, r.URL.Path, r.URL.RawQuery, nonce)) {
			return true
		}
	}
	header := c.Header
	if header == "" {
		header = DefaultSecretHeader
	}
	got := sha256.Sum256([]byte(r.Header.Get(header)))
	want := sha256.Sum256([]byte(c.Secret))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// VerifyReply reports whether signature (SignatureHeader's value) is the
// MAC of body as the reply to the request signed with nonce.
func (c HandlerConfig) VerifyReply(nonce string, body []byte, signature string) bool {
	got, err := hex.DecodeString(signature)
	if err != nil {
		return false
	}
	m := replyMAC(c.Secret, nonce)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// SignReply returns the signature (SignatureHeader's value) of body as the
// reply to the request signed with nonce.
func (c HandlerConfig) SignReply(nonce string, body []byte) string {
	m := replyMAC(c.Secret, nonce)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// WriteSignedJSON writes v as JSON with status 200, signed for r's nonce
// when r carries one (SignatureHeader); the body is built in memory first.
func (c HandlerConfig) WriteSignedJSON(w http.ResponseWriter, r *http.Request, v any) {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(v)
	w.Header().Set("Content-Type", "application/json")
	if nonce := r.Header.Get(NonceHeader); nonce != "" {
		w.Header().Set(SignatureHeader, c.SignReply(nonce, buf.Bytes()))
	}
	_, _ = w.Write(buf.Bytes())
}

// writeSignedStream writes the body write produces with status 200, as
// JSON, signed for r's nonce when r carries one, without holding the body:
// write runs twice when signing, once into the MAC (and a byte count, sent
// as Content-Length) and once to w. write must write the same bytes both
// times (one immutable state). An error of write's first run answers 500;
// of the second, the connection is cut short (the reply then fails its
// length or signature).
func (c HandlerConfig) writeSignedStream(w http.ResponseWriter, r *http.Request, write func(io.Writer) error) {
	w.Header().Set("Content-Type", "application/json")
	if nonce := r.Header.Get(NonceHeader); nonce != "" {
		m := &countingHash{h: replyMAC(c.Secret, nonce)}
		if err := write(m); err != nil {
			http.Error(w, "writing the reply failed", http.StatusInternalServerError)
			return
		}
		w.Header().Set(SignatureHeader, hex.EncodeToString(m.h.Sum(nil)))
		w.Header().Set("Content-Length", strconv.FormatInt(m.n, 10))
	}
	_ = write(w)
}

// countingHash is a hash that counts what it is fed.
type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// verifyingBody hashes what is read from a reply's body, so the replica
// checks the signature once the body is read to its end.
type verifyingBody struct {
	r   interface{ Read([]byte) (int, error) }
	mac hash.Hash
}

func (v *verifyingBody) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.mac.Write(p[:n])
	return n, err
}

// checkSignature compares the reply's signature header with the MAC of the
// body read through vb.
func checkSignature(endpoint, sig string, vb *verifyingBody) error {
	if strings.TrimSpace(sig) == "" {
		return &RejectError{Reason: RejectUnsigned, Err: fmt.Errorf("GET %s: the reply carries no %s: not the configured source, or a source older than this replica", endpoint, SignatureHeader)}
	}
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, vb.mac.Sum(nil)) {
		return &RejectError{Reason: RejectForged, Err: fmt.Errorf("GET %s: the reply's signature does not verify with the shared secret: not the configured source, or altered on the way", endpoint)}
	}
	return nil
}
