package heartbeat

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"sync"

	"github.com/gslbkit/gslb/internal/fielderr"
)

// macTextLen is the length of a raw base64url HMAC-SHA256.
const macTextLen = 43

// MinSecretLen is the shortest secret a Key accepts (128 bits).
const MinSecretLen = 16

// Key is a shared HMAC-SHA256 key with an id. The id travels in every beat
// it signs so keys can rotate: give every reader the new key, then switch
// the publishers to it, then retire the old one.
type Key struct {
	// ID names the key in beats: 1–16 letters, digits, '-' or '_'.
	ID string `json:"id"`
	// Secret is the shared secret, at least MinSecretLen bytes (base64 in JSON).
	Secret []byte `json:"secret"`
}

// keyIDRule says what a Key.ID may hold.
const keyIDRule = "[1, 16] letters, digits, '-' or '_'"

func validKeyID(id string) bool {
	if len(id) == 0 || len(id) > 16 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Validate reports whether the key's id and secret are usable, as a
// *FieldError wrapping ErrInvalidConfig whose path is "id" or "secret"
// (the secret's length is named, never its bytes).
func (k Key) Validate() error {
	if !validKeyID(k.ID) {
		return fieldErr("id", k.ID, keyIDRule)
	}
	if len(k.Secret) < MinSecretLen {
		return &FieldError{Path: "secret", Value: fmt.Sprintf("%d bytes", len(k.Secret)), Allowed: fmt.Sprintf(">= %d bytes", MinSecretLen), Err: ErrInvalidConfig}
	}
	return nil
}

// Keyring signs and verifies beats. The first key signs; every key
// verifies. A nil or empty *Keyring signs nothing and accepts unsigned
// beats (and signed ones, unverified); a keyring with keys rejects
// unsigned beats. A Keyring is immutable and safe for concurrent use.
type Keyring struct {
	keys []keyState
}

type keyState struct {
	id   string
	pool *sync.Pool // of *macState with this key
}

// macState is one HMAC with scratch space, reused through a pool so that
// signing and verifying allocate nothing.
type macState struct {
	h   hash.Hash
	in  []byte
	sum [sha256.Size]byte
}

// macContext is what the MAC covers before the beat's text, per scope.
var macContext = [...]string{Local: "gslb1/local\n", Global: "gslb1/global\n"}

// NewKeyring returns a keyring holding copies of keys, the first of which
// signs. Key ids must be distinct. With no keys it returns nil (no signing,
// no verification). A bad key is a *FieldError whose path starts with
// "keys[i]".
func NewKeyring(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	kr := &Keyring{}
	seen := map[string]int{}
	for i, k := range keys {
		at := fielderr.Index("keys", i)
		if err := k.Validate(); err != nil {
			return nil, fielderr.In(at, ErrInvalidConfig, err)
		}
		if j, ok := seen[k.ID]; ok {
			return nil, fieldErr(at+".id", k.ID, "an id no other key has ("+fielderr.Index("keys", j)+" has it)")
		}
		seen[k.ID] = i
		secret := append([]byte(nil), k.Secret...)
		kr.keys = append(kr.keys, keyState{id: k.ID, pool: &sync.Pool{New: func() any {
			return &macState{h: hmac.New(sha256.New, secret), in: make([]byte, 0, 2*MaxBeatLen)}
		}}})
	}
	return kr, nil
}

// Enabled reports whether the keyring holds keys (signs and requires signatures).
func (kr *Keyring) Enabled() bool { return kr != nil && len(kr.keys) > 0 }

// SigningKeyID returns the id of the key that signs, or "".
func (kr *Keyring) SigningKeyID() string {
	if !kr.Enabled() {
		return ""
	}
	return kr.keys[0].id
}

func (kr *Keyring) key(id string) *keyState {
	for i := range kr.keys {
		if kr.keys[i].id == id {
			return &kr.keys[i]
		}
	}
	return nil
}

// mac appends the base64url HMAC of (scope, signed) under k to dst. signed
// is copied before dst grows, so it may alias dst.
func mac[T string | []byte](k *keyState, dst []byte, scope Scope, signed T) []byte {
	st := k.pool.Get().(*macState)
	st.in = append(append(st.in[:0], macContext[scope]...), signed...)
	st.h.Reset()
	st.h.Write(st.in)
	out := st.h.Sum(st.sum[:0])
	dst = base64.RawURLEncoding.AppendEncode(dst, out)
	k.pool.Put(st)
	return dst
}

// AppendSeal appends b's text form to dst, signed with the keyring's first
// key for scope (the scope is covered by the MAC, so a beat copied from
// the local zone to the global one fails verification). With no keys it
// appends the unsigned form. b.KeyID is ignored.
func (kr *Keyring) AppendSeal(dst []byte, scope Scope, b Beat) ([]byte, error) {
	start := len(dst)
	dst, err := b.AppendText(dst)
	if err != nil || !kr.Enabled() {
		return dst, err
	}
	if !scope.Valid() {
		return dst[:start], fielderr.New(ErrInvalidBeat, "scope", uint8(scope), fielderr.OneOf("local", "global"))
	}
	k := &kr.keys[0]
	dst = append(dst, ";k="...)
	dst = append(dst, k.id...)
	end := len(dst)
	dst = append(dst, ";m="...)
	return mac(k, dst, scope, dst[start:end]), nil
}

// Seal returns b's text form signed for scope (see AppendSeal).
func (kr *Keyring) Seal(scope Scope, b Beat) (string, error) {
	out, err := kr.AppendSeal(make([]byte, 0, 128), scope, b)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// Open parses text and, when the keyring holds keys, verifies its
// signature for scope: unsigned beats fail with ErrUnsigned, unknown key ids
// with ErrUnknownKey, wrong MACs with ErrBadSignature (compared in constant
// time). With no keys it only parses. It never panics.
func (kr *Keyring) Open(scope Scope, text string) (Beat, error) {
	p, err := parse(text)
	if err != nil {
		return Beat{}, err
	}
	if !kr.Enabled() {
		return p.beat, nil
	}
	if p.beat.KeyID == "" {
		return Beat{}, beatErr(ErrUnsigned, "k", "a key is configured and the beat is not signed")
	}
	k := kr.key(p.beat.KeyID)
	if k == nil {
		return Beat{}, beatErr(ErrUnknownKey, "k", "key id "+p.beat.KeyID+" is not in the keyring")
	}
	var buf [macTextLen]byte
	want := mac(k, buf[:0], scope, text[:p.signedLen])
	if subtle.ConstantTimeCompare(want, []byte(p.mac)) != 1 {
		return Beat{}, beatErr(ErrBadSignature, "m", "the HMAC does not match")
	}
	return p.beat, nil
}
