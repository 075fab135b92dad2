package heartbeat

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/fielderr"
)

// MaxBeatLen is the longest beat value: one TXT character-string.
const MaxBeatLen = 255

// MaxGateways is the largest healthy-gateway count a beat carries.
const MaxGateways = 65535

// maxMillis keeps timestamps to at most 15 decimal digits (year ≈ 33658).
const maxMillis = 999_999_999_999_999

// version1 and version2 are the first field of a beat of each format
// version; both are 7 bytes.
const (
	version1 = "v=gslb1"
	version2 = "v=gslb2"
)

// Errors returned while encoding, parsing or verifying beats. Parse and
// verify errors are *BeatError values wrapping one of these; test with
// errors.Is.
var (
	// ErrMalformed: the value is not a well-formed beat of this format
	// (truncated, fields missing, out of order, bad characters or numbers).
	ErrMalformed = errors.New("heartbeat: malformed beat")
	// ErrOversized: the value is longer than MaxBeatLen bytes.
	ErrOversized = errors.New("heartbeat: beat longer than 255 bytes")
	// ErrVersion: the value is a beat of a format version this package does not read.
	ErrVersion = errors.New("heartbeat: unsupported beat version")
	// ErrUnsigned: a keyring is configured and the beat carries no signature.
	ErrUnsigned = errors.New("heartbeat: unsigned beat")
	// ErrUnknownKey: the beat is signed with a key id the keyring does not hold.
	ErrUnknownKey = errors.New("heartbeat: beat signed with an unknown key")
	// ErrBadSignature: the signature does not match the beat (forged or altered).
	ErrBadSignature = errors.New("heartbeat: bad beat signature")
	// ErrFuture: a reader found a beat stamped further ahead than
	// SelfHealInterval + SkewTolerance (a clock far off, or a forgery by
	// a key holder); the cluster is judged stale.
	ErrFuture = errors.New("heartbeat: beat stamped too far in the future")
	// ErrInvalidBeat: a Beat given to the encoder has a field out of range.
	ErrInvalidBeat = errors.New("heartbeat: invalid beat")
)

// BeatError says which field of a beat value was wrong and why. It
// unwraps to one of the package's sentinel errors.
type BeatError struct {
	// Field is the field's key ("c", "t", …) or a description such as
	// "value" or "signature".
	Field string
	// Reason explains what was wrong, in words.
	Reason string
	// Err is the sentinel (ErrMalformed, ErrOversized, …).
	Err error
}

// Error returns "<sentinel>: field <f>: <reason>".
func (e *BeatError) Error() string {
	return e.Err.Error() + ": field " + e.Field + ": " + e.Reason
}

// Unwrap returns the sentinel.
func (e *BeatError) Unwrap() error { return e.Err }

func beatErr(sentinel error, field, reason string) error {
	return &BeatError{Field: field, Reason: reason, Err: sentinel}
}

// Beat is one cluster's heartbeat: who, where, when, and optionally how
// many of its gateways are healthy. It is a plain value.
//
// The text form (the TXT record's value, at most MaxBeatLen bytes, one
// character-string) is a fixed-order list of key=value fields separated
// by semicolons, in one of two format versions:
//
//	v=gslb1;c=<cluster>;r=<region>;t=<unix ms>[;g=<gateways>][;h=1][;k=<key id>;m=<mac>]
//	v=gslb2;c=<cluster>;r=<region>;t=<unix ms>;g=<healthy>;n=<total>[;h=1][;k=<key id>;m=<mac>]
//
// v is the format version; c the cluster and r the region, each a DNS
// label; t the timestamp in milliseconds since the Unix epoch (decimal, no
// leading zeros). In version 1, g is the healthy-gateway count (1–65535,
// omitted when 0 = not reported). Version 2 adds the gateway summary: g is
// the healthy count (0–n) and n the cluster's total count of gateways
// (1–65535), both required. h=1 marks a self-heal beat (stamped in the
// future, see Rules); k and m, present together and last, are the signing
// key's id and the MAC: HMAC-SHA256 with the key's secret over
// "gslb1/local\n" or "gslb1/global\n" (the scope; the same in both
// versions, since the version field itself is signed) followed by every
// byte of the value before ";m=", written in raw base64url (43 characters,
// no padding). No field may repeat, appear out of order or be unknown: a
// reader rejects anything else as malformed. This package reads both
// versions (a version-1 beat has no summary: Total is 0); readers of
// releases before version 2 existed reject version-2 beats with
// ErrVersion, which is why writing them is an option (Config.BeatVersion)
// to turn on only once every reader is upgraded.
type Beat struct {
	// Cluster is the publishing cluster's name, a DNS label of 1–63 bytes;
	// encoding writes it in lower case.
	Cluster string
	// Region is the cluster's region, a DNS label of 1–63 bytes.
	Region string
	// Time is the beat's timestamp, kept to the millisecond (encoding
	// truncates); it must not be before the Unix epoch.
	Time time.Time
	// Gateways is the number of healthy gateways, 0–MaxGateways. Without
	// a summary (Total 0), 0 means "not reported" and is omitted from the
	// text; with one, it is the healthy count, 0–Total.
	Gateways int
	// Total is the number of gateways the cluster has, served or not,
	// 0–MaxGateways; 0 means no summary. A beat with Total > 0 encodes as
	// format version 2, one with Total 0 as version 1 (see Version).
	Total int
	// SelfHeal marks a beat stamped in the future by self-heal.
	SelfHeal bool
	// KeyID is the id of the key that signed the beat; "" for an
	// unsigned beat. Encoding ignores it (Keyring.Seal sets it); parsing
	// fills it in.
	KeyID string
}

// Validate reports the first field of b out of range as a *FieldError
// wrapping ErrInvalidBeat, naming the field (as in Go: "Cluster",
// "Total"), its value and what is allowed.
func (b Beat) Validate() error {
	if dnsname.CheckLabel(b.Cluster, false) != nil {
		return fielderr.New(ErrInvalidBeat, "Cluster", b.Cluster, dnsname.LabelRule)
	}
	if dnsname.CheckLabel(b.Region, false) != nil {
		return fielderr.New(ErrInvalidBeat, "Region", b.Region, dnsname.LabelRule)
	}
	if ms := b.Time.UnixMilli(); b.Time.IsZero() || ms < 0 || ms > maxMillis {
		return fielderr.New(ErrInvalidBeat, "Time", b.Time, "from the Unix epoch to year 33658")
	}
	if b.Gateways < 0 || b.Gateways > MaxGateways {
		return fielderr.New(ErrInvalidBeat, "Gateways", b.Gateways, fielderr.Range(0, MaxGateways))
	}
	if b.Total < 0 || b.Total > MaxGateways {
		return fielderr.New(ErrInvalidBeat, "Total", b.Total, fielderr.Range(0, MaxGateways))
	}
	if b.Total > 0 && b.Gateways > b.Total {
		return fielderr.New(ErrInvalidBeat, "Gateways", b.Gateways, fmt.Sprintf("[0, Total (%d)] in a beat with a summary", b.Total))
	}
	return nil
}

// Version returns the format version b encodes as: 2 when it carries a
// gateway summary (Total > 0), else 1.
func (b Beat) Version() int {
	if b.Total > 0 {
		return 2
	}
	return 1
}

// Summary returns the beat's gateway summary: healthy of total gateways,
// and ok false when the beat carries none (a version-1 beat), which means
// "unknown", not "none healthy".
func (b Beat) Summary() (healthy, total int, ok bool) {
	if b.Total <= 0 {
		return 0, 0, false
	}
	return b.Gateways, b.Total, true
}

// AppendText appends b's unsigned text form to dst (see Beat). It fails
// with ErrInvalidBeat when a field is out of range.
func (b Beat) AppendText(dst []byte) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return dst, err
	}
	if b.Total > 0 {
		dst = append(dst, version2...)
	} else {
		dst = append(dst, version1...)
	}
	dst = append(dst, ";c="...)
	for i := 0; i < len(b.Cluster); i++ {
		c := b.Cluster[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	dst = append(dst, ";r="...)
	dst = append(dst, b.Region...)
	dst = append(dst, ";t="...)
	dst = strconv.AppendInt(dst, b.Time.UnixMilli(), 10)
	if b.Total > 0 {
		dst = append(dst, ";g="...)
		dst = strconv.AppendInt(dst, int64(b.Gateways), 10)
		dst = append(dst, ";n="...)
		dst = strconv.AppendInt(dst, int64(b.Total), 10)
	} else if b.Gateways > 0 {
		dst = append(dst, ";g="...)
		dst = strconv.AppendInt(dst, int64(b.Gateways), 10)
	}
	if b.SelfHeal {
		dst = append(dst, ";h=1"...)
	}
	return dst, nil
}

// MarshalText returns b's unsigned text form.
func (b Beat) MarshalText() ([]byte, error) { return b.AppendText(make([]byte, 0, 96)) }

// String returns b's unsigned text form, or a description of why b cannot
// be encoded.
func (b Beat) String() string {
	t, err := b.MarshalText()
	if err != nil {
		return "invalid beat: " + err.Error()
	}
	return string(t)
}

// parsed is a syntactically valid beat with the positions the verifier needs.
type parsed struct {
	beat Beat
	// signedLen is the length of the prefix the MAC covers (everything
	// before ";m="); 0 when unsigned.
	signedLen int
	// mac is the base64url MAC text; "" when unsigned.
	mac string
}

// ParseBeat reads a beat's text form, of either format version (see
// Beat), checking syntax only: it does not
// verify a signature (use Keyring.Open for that), so a beat it returns
// with a KeyID is signed but not yet trusted. It never panics; errors are
// *BeatError values wrapping ErrOversized, ErrVersion or ErrMalformed.
func ParseBeat(text string) (Beat, error) {
	p, err := parse(text)
	return p.beat, err
}

func parse(s string) (parsed, error) {
	var p parsed
	if len(s) > MaxBeatLen {
		return p, beatErr(ErrOversized, "value", "has "+strconv.Itoa(len(s))+" bytes, allowed at most 255")
	}
	v2 := hasVersion(s, version2)
	if !v2 && !hasVersion(s, version1) {
		if strings.HasPrefix(s, "v=") {
			return p, beatErr(ErrVersion, "v", "want gslb1 or gslb2")
		}
		return p, beatErr(ErrMalformed, "v", "the value must start with v=gslb1 or v=gslb2")
	}
	rest := s[len(version1):]
	next := func(key string, required bool) (string, bool, error) {
		if !strings.HasPrefix(rest, ";"+key+"=") {
			if required {
				return "", false, beatErr(ErrMalformed, key, "missing or out of order")
			}
			return "", false, nil
		}
		v := rest[len(key)+2:]
		end := strings.IndexByte(v, ';')
		if end < 0 {
			end = len(v)
		}
		rest = v[end:]
		return v[:end], true, nil
	}
	c, _, err := next("c", true)
	if err != nil {
		return p, err
	}
	if dnsname.CheckLabel(c, false) != nil {
		return p, beatErr(ErrMalformed, "c", "not a DNS label")
	}
	r, _, err := next("r", true)
	if err != nil {
		return p, err
	}
	if dnsname.CheckLabel(r, false) != nil {
		return p, beatErr(ErrMalformed, "r", "not a DNS label")
	}
	t, _, err := next("t", true)
	if err != nil {
		return p, err
	}
	ms, ok := decimal(t, maxMillis)
	if !ok {
		return p, beatErr(ErrMalformed, "t", "want milliseconds since the epoch, 1–15 digits")
	}
	p.beat = Beat{Cluster: c, Region: r, Time: time.UnixMilli(ms)}
	if v2 {
		g, _, err := next("g", true)
		if err != nil {
			return parsed{}, err
		}
		healthy, ok := decimal(g, MaxGateways)
		if !ok {
			return parsed{}, beatErr(ErrMalformed, "g", "want a healthy-gateway count 0–65535")
		}
		n, _, err := next("n", true)
		if err != nil {
			return parsed{}, err
		}
		total, ok := decimal(n, MaxGateways)
		if !ok || total == 0 {
			return parsed{}, beatErr(ErrMalformed, "n", "want a gateway total 1–65535")
		}
		if healthy > total {
			return parsed{}, beatErr(ErrMalformed, "g", "want at most n healthy gateways")
		}
		p.beat.Gateways, p.beat.Total = int(healthy), int(total)
	} else if g, ok, _ := next("g", false); ok {
		n, ok := decimal(g, MaxGateways)
		if !ok || n == 0 {
			return parsed{}, beatErr(ErrMalformed, "g", "want a gateway count 1–65535")
		}
		p.beat.Gateways = int(n)
	}
	if h, ok, _ := next("h", false); ok {
		if h != "1" {
			return parsed{}, beatErr(ErrMalformed, "h", "want 1")
		}
		p.beat.SelfHeal = true
	}
	if k, ok, _ := next("k", false); ok {
		if !validKeyID(k) {
			return parsed{}, beatErr(ErrMalformed, "k", "want a key id of "+keyIDRule)
		}
		p.signedLen = len(s) - len(rest)
		m, ok, _ := next("m", false)
		if !ok || len(m) != macTextLen || !isBase64URL(m) {
			return parsed{}, beatErr(ErrMalformed, "m", "want a 43-character base64url HMAC-SHA256 after k")
		}
		p.beat.KeyID = k
		p.mac = m
	}
	if rest != "" {
		return parsed{}, beatErr(ErrMalformed, "value", "unexpected text after the last field")
	}
	return p, nil
}

// hasVersion reports whether s starts with the version field v, followed
// by a field separator or nothing.
func hasVersion(s, v string) bool {
	return strings.HasPrefix(s, v) && (len(s) == len(v) || s[len(v)] == ';')
}

// decimal parses 1–15 ASCII digits without leading zeros (except "0") and
// at most max.
func decimal(s string, max int64) (int64, bool) {
	if len(s) == 0 || len(s) > 15 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, n <= max
}

func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
