package heartbeat

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var (
	t0      = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	testKey = Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}
	newKey  = Key{ID: "k2", Secret: []byte("fedcba9876543210fedcba9876543210")}
)

func mustKeyring(t testing.TB, keys ...Key) *Keyring {
	t.Helper()
	kr, err := NewKeyring(keys...)
	require.NoError(t, err)
	return kr
}

func TestBeatText(t *testing.T) {
	cases := []struct {
		name string
		beat Beat
		want string
	}{
		{"minimal", Beat{Cluster: "eu-1", Region: "europe", Time: t0}, "v=gslb1;c=eu-1;r=europe;t=1795964400000"},
		{"gateways", Beat{Cluster: "eu-1", Region: "europe", Time: t0.Add(1500 * time.Microsecond), Gateways: 3}, "v=gslb1;c=eu-1;r=europe;t=1795964400001;g=3"},
		{"self-heal", Beat{Cluster: "EU-1", Region: "Europe", Time: t0, SelfHeal: true}, "v=gslb1;c=eu-1;r=Europe;t=1795964400000;h=1"},
		{"epoch", Beat{Cluster: "a", Region: "b", Time: time.UnixMilli(0)}, "v=gslb1;c=a;r=b;t=0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.beat.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
			back, err := ParseBeat(string(got))
			require.NoError(t, err)
			assert.True(t, back.Time.Equal(c.beat.Time.Truncate(time.Millisecond)))
			assert.Equal(t, strings.ToLower(c.beat.Cluster), back.Cluster)
			assert.Equal(t, c.beat.Region, back.Region)
			assert.Equal(t, c.beat.Gateways, back.Gateways)
			assert.Equal(t, c.beat.SelfHeal, back.SelfHeal)
		})
	}
}

func TestBeatValidate(t *testing.T) {
	ok := Beat{Cluster: "a", Region: "r", Time: t0}
	cases := []struct {
		name   string
		mutate func(*Beat)
		field  string
	}{
		{"empty cluster", func(b *Beat) { b.Cluster = "" }, "Cluster"},
		{"cluster with semicolon", func(b *Beat) { b.Cluster = "a;b" }, "Cluster"},
		{"long region", func(b *Beat) { b.Region = strings.Repeat("r", 64) }, "Region"},
		{"zero time", func(b *Beat) { b.Time = time.Time{} }, "Time"},
		{"before epoch", func(b *Beat) { b.Time = time.Unix(-1, 0) }, "Time"},
		{"negative gateways", func(b *Beat) { b.Gateways = -1 }, "Gateways"},
		{"too many gateways", func(b *Beat) { b.Gateways = MaxGateways + 1 }, "Gateways"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := ok
			c.mutate(&b)
			_, err := b.MarshalText()
			require.ErrorIs(t, err, ErrInvalidBeat)
			assert.Contains(t, err.Error(), c.field)
		})
	}
}

func TestLongestBeatFits(t *testing.T) {
	kr := mustKeyring(t, Key{ID: strings.Repeat("k", 16), Secret: testKey.Secret})
	b := Beat{Cluster: strings.Repeat("c", 63), Region: strings.Repeat("r", 63), Time: time.UnixMilli(maxMillis),
		Gateways: MaxGateways, SelfHeal: true}
	s, err := kr.Seal(Global, b)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(s), MaxBeatLen)
	got, err := kr.Open(Global, s)
	require.NoError(t, err)
	assert.Equal(t, b.Cluster, got.Cluster)
}

// TestRejects checks that forged, future-dated (see rules), truncated,
// oversized, malformed and unsigned-when-keyed beats are refused with the
// right sentinel.
func TestRejects(t *testing.T) {
	kr := mustKeyring(t, testKey)
	good, err := kr.Seal(Global, Beat{Cluster: "eu-1", Region: "europe", Time: t0, Gateways: 2})
	require.NoError(t, err)
	unsigned := "v=gslb1;c=eu-1;r=europe;t=1795964400000;g=2"
	otherKey, err := mustKeyring(t, newKey).Seal(Global, Beat{Cluster: "eu-1", Region: "europe", Time: t0})
	require.NoError(t, err)
	wrongSecret, err := mustKeyring(t, Key{ID: "k1", Secret: newKey.Secret}).Seal(Global, Beat{Cluster: "eu-1", Region: "europe", Time: t0})
	require.NoError(t, err)
	localBeat, err := kr.Seal(Local, Beat{Cluster: "eu-1", Region: "europe", Time: t0})
	require.NoError(t, err)
	cases := []struct {
		name string
		text string
		want error
	}{
		{"unsigned when keyed", unsigned, ErrUnsigned},
		{"forged timestamp", strings.Replace(good, "t=1795964400000", "t=1795964499999", 1), ErrBadSignature},
		{"forged gateways", strings.Replace(good, "g=2", "g=9", 1), ErrBadSignature},
		{"self-heal flag added", strings.Replace(good, ";k=", ";h=1;k=", 1), ErrBadSignature},
		{"wrong secret", wrongSecret, ErrBadSignature},
		{"unknown key id", otherKey, ErrUnknownKey},
		{"replayed from the local scope", localBeat, ErrBadSignature},
		{"mac altered", good[:len(good)-1] + flip(good[len(good)-1]), ErrBadSignature},
		{"truncated mac", good[:len(good)-5], ErrMalformed},
		{"truncated after k", good[:strings.Index(good, ";m=")], ErrMalformed},
		{"truncated in t", good[:20], ErrMalformed},
		{"empty", "", ErrMalformed},
		{"oversized", good + strings.Repeat("x", MaxBeatLen), ErrOversized},
		{"other version", "v=gslb3;c=a;r=b;t=1", ErrVersion},
		{"not a beat", "hello world", ErrMalformed},
		{"version prefix only", "v=gslb1x;c=a", ErrVersion},
		{"out of order", "v=gslb1;r=b;c=a;t=1", ErrMalformed},
		{"duplicate field", "v=gslb1;c=a;r=b;t=1;t=2", ErrMalformed},
		{"unknown field", "v=gslb1;c=a;r=b;t=1;x=1", ErrMalformed},
		{"leading zero", "v=gslb1;c=a;r=b;t=01", ErrMalformed},
		{"negative time", "v=gslb1;c=a;r=b;t=-1", ErrMalformed},
		{"time too long", "v=gslb1;c=a;r=b;t=1234567890123456", ErrMalformed},
		{"zero gateways", "v=gslb1;c=a;r=b;t=1;g=0", ErrMalformed},
		{"too many gateways", "v=gslb1;c=a;r=b;t=1;g=65536", ErrMalformed},
		{"bad self-heal flag", "v=gslb1;c=a;r=b;t=1;h=0", ErrMalformed},
		{"k without m", "v=gslb1;c=a;r=b;t=1;k=k1", ErrMalformed},
		{"trailing semicolon", "v=gslb1;c=a;r=b;t=1;", ErrMalformed},
		{"space in cluster", "v=gslb1;c=a b;r=b;t=1", ErrMalformed},
		{"empty region", "v=gslb1;c=a;r=;t=1", ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := kr.Open(Global, c.text)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
			var be *BeatError
			assert.True(t, errors.As(err, &be), "error is a *BeatError: %v", err)
		})
	}
	b, err := kr.Open(Global, good)
	require.NoError(t, err)
	assert.Equal(t, "k1", b.KeyID)
	assert.Equal(t, 2, b.Gateways)
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestKeyRotation(t *testing.T) {
	b := Beat{Cluster: "a", Region: "r", Time: t0}
	old := mustKeyring(t, testKey)
	both := mustKeyring(t, newKey, testKey) // readers first learn k2, publishers switch
	oldBeat, err := old.Seal(Local, b)
	require.NoError(t, err)
	newBeat, err := both.Seal(Local, b)
	require.NoError(t, err)
	assert.Contains(t, newBeat, ";k=k2;")
	for _, text := range []string{oldBeat, newBeat} {
		_, err := both.Open(Local, text)
		assert.NoError(t, err)
	}
	_, err = old.Open(Local, newBeat)
	assert.ErrorIs(t, err, ErrUnknownKey)
	// Without keys, signed beats are parsed (unverified) and unsigned ones accepted.
	var none *Keyring
	got, err := none.Open(Local, newBeat)
	require.NoError(t, err)
	assert.Equal(t, "k2", got.KeyID)
}

func TestKeyValidate(t *testing.T) {
	cases := []struct {
		name string
		keys []Key
		want string
	}{
		{"short secret", []Key{{ID: "a", Secret: []byte("short")}}, "heartbeat: invalid config: keys[0].secret = 5 bytes: allowed >= 16 bytes"},
		{"empty id", []Key{{ID: "", Secret: testKey.Secret}}, `heartbeat: invalid config: keys[0].id = "": allowed [1, 16] letters, digits, '-' or '_'`},
		{"long id", []Key{{ID: strings.Repeat("a", 17), Secret: testKey.Secret}}, "keys[0].id = "},
		{"bad id", []Key{testKey, {ID: "a;b", Secret: testKey.Secret}}, `keys[1].id = "a;b"`},
		{"duplicate ids", []Key{testKey, testKey}, `heartbeat: invalid config: keys[1].id = "k1": allowed an id no other key has (keys[0] has it)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewKeyring(c.keys...)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), string(testKey.Secret))
		})
	}
	kr, err := NewKeyring()
	require.NoError(t, err)
	assert.False(t, kr.Enabled())
}

// TestBeatRoundTripProperty: every valid beat survives Seal then Open,
// with and without keys, and the text always fits one TXT string.
func TestBeatRoundTripProperty(t *testing.T) {
	label := rapid.StringMatching(`[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?`)
	keyed := mustKeyring(t, testKey)
	rapid.Check(t, func(t *rapid.T) {
		b := Beat{
			Cluster:  label.Draw(t, "cluster"),
			Region:   label.Draw(t, "region"),
			Time:     time.UnixMilli(rapid.Int64Range(0, maxMillis).Draw(t, "ms")),
			Gateways: rapid.IntRange(0, MaxGateways).Draw(t, "gw"),
			SelfHeal: rapid.Bool().Draw(t, "heal"),
		}
		if rapid.Bool().Draw(t, "v2") { // a summary: Gateways of Total
			b.Total = rapid.IntRange(max(b.Gateways, 1), MaxGateways).Draw(t, "total")
		}
		for _, kr := range []*Keyring{nil, keyed} {
			scope := Scope(rapid.IntRange(1, 2).Draw(t, "scope"))
			s, err := kr.Seal(scope, b)
			if err != nil {
				t.Fatalf("seal %+v: %v", b, err)
			}
			if len(s) > MaxBeatLen {
				t.Fatalf("beat of %d bytes", len(s))
			}
			got, err := kr.Open(scope, s)
			if err != nil {
				t.Fatalf("open %q: %v", s, err)
			}
			got.KeyID = ""
			if got != b {
				t.Fatalf("round trip: got %+v want %+v", got, b)
			}
		}
	})
}

func TestBeatStringAndErrors(t *testing.T) {
	assert.Equal(t, "v=gslb1;c=a;r=b;t=0", Beat{Cluster: "a", Region: "b", Time: time.UnixMilli(0)}.String())
	assert.Contains(t, Beat{}.String(), "invalid beat")
	_, err := ParseBeat("v=gslb1;c=a")
	var be *BeatError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "r", be.Field)
	assert.Equal(t, "heartbeat: malformed beat: field r: missing or out of order", err.Error())
}

func TestEventsWhen(t *testing.T) {
	for _, e := range []Event{
		BeatWritten{At: t0}, WriteFailed{At: t0}, OwnBeatRead{At: t0}, RecoveringChanged{At: t0}, PublishingChanged{At: t0},
		BeatRejected{At: t0}, ClusterChanged{At: t0}, RegionChanged{At: t0}, FailoverChanged{At: t0}, ReadDone{At: t0},
	} {
		assert.Equal(t, t0, e.When(), "%T", e)
	}
	var got Event
	ObserverFunc(func(e Event) { got = e }).Observe(ReadDone{At: t0})
	assert.Equal(t, ReadDone{At: t0}, got)
}

// TestMACIsDocumented recomputes a beat's MAC the way Beat's doc describes,
// so another implementation can sign and verify beats.
func TestMACIsDocumented(t *testing.T) {
	kr := mustKeyring(t, testKey)
	for _, scope := range []Scope{Local, Global} {
		text, err := kr.Seal(scope, Beat{Cluster: "eu-1", Region: "europe", Time: t0, Gateways: 2})
		require.NoError(t, err)
		i := strings.Index(text, ";m=")
		h := hmac.New(sha256.New, testKey.Secret)
		h.Write([]byte("gslb1/" + scope.String() + "\n" + text[:i]))
		assert.Equal(t, base64.RawURLEncoding.EncodeToString(h.Sum(nil)), text[i+3:])
	}
}
