package fielderr

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	errPolicy  = errors.New("probe: invalid policy")
	errMonitor = errors.New("probe: invalid monitor config")
)

func TestFormat(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"duration range", New(errPolicy, "interval", -time.Second, DurationRange(time.Millisecond, 5*time.Minute)),
			"probe: invalid policy: interval = -1s: allowed [1ms, 5m]"},
		{"int range", New(errPolicy, "unhealthyThreshold", 0, Range(1, 100)),
			"probe: invalid policy: unhealthyThreshold = 0: allowed [1, 100]"},
		{"string set", New(errPolicy, "mode", "udp", OneOf("http", "tcp")),
			`probe: invalid policy: mode = "udp": allowed one of "http", "tcp"`},
		{"missing", Missing(errPolicy, "url", "an http or https URL"),
			`probe: invalid policy: url = "": allowed an http or https URL`},
		{"at least", New(errPolicy, "workers", -1, AtLeast(0)),
			"probe: invalid policy: workers = -1: allowed >= 0"},
		{"hours", New(errPolicy, "ttl", 90*time.Minute, DurationAtLeast(0)),
			"probe: invalid policy: ttl = 1h30m: allowed >= 0s"},
		{"hidden", Hidden(errPolicy, "token", "the bare token"),
			"probe: invalid policy: token = (set): allowed the bare token"},
		{"or default", New(errPolicy, "timeout", time.Hour, OrDefault(DurationRange(time.Second, 5*time.Minute), 30*time.Second)),
			"probe: invalid policy: timeout = 1h: allowed [1s, 5m], or 0 for the default (30s)"},
		{"together, first set", Together(errPolicy, "keyName", true, "secret", false, "for unsigned updates"),
			`probe: invalid policy: secret = "": allowed set together with keyName (or both empty for unsigned updates)`},
		{"together, second set", Together(errPolicy, "keyName", false, "secret", true, "for unsigned updates"),
			`probe: invalid policy: keyName = "": allowed set together with secret (or both empty for unsigned updates)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.EqualError(t, c.err, c.want) })
	}
}

func TestTogetherHolds(t *testing.T) {
	require.NoError(t, Together(errPolicy, "a", true, "b", true, "for x"))
	require.NoError(t, Together(errPolicy, "a", false, "b", false, "for x"))
}

func TestIn(t *testing.T) {
	inner := New(errPolicy, "interval", -time.Second, DurationRange(time.Millisecond, 5*time.Minute))
	err := In(Key("targets", "web"), errMonitor, In("policy", errPolicy, inner))
	require.EqualError(t, err, `probe: invalid monitor config: targets["web"].policy.interval = -1s: allowed [1ms, 5m]`)
	require.ErrorIs(t, err, errMonitor)
	var fe *Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, `targets["web"].policy.interval`, fe.Path)
	require.Equal(t, "interval", inner.Path, "In returns a copy")

	require.EqualError(t, In(Index("zones", 1), errMonitor, New(errPolicy, "", "x.", "a zone name")),
		`probe: invalid monitor config: zones[1] = "x.": allowed a zone name`)
	plain := errors.New("other")
	require.Equal(t, plain, In("a", errMonitor, plain))
	require.NoError(t, In("a", errMonitor, nil))
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", time.Hour: "1h", 5 * time.Minute: "5m", 90 * time.Second: "1m30s",
		250 * time.Millisecond: "250ms", 26 * time.Hour: "26h", time.Hour + time.Second: "1h0m1s",
	} {
		require.Equal(t, want, Duration(d))
	}
}

func TestBoth(t *testing.T) {
	inner := New(errPolicy, "interval", -time.Second, DurationRange(time.Millisecond, 5*time.Minute))
	err := In(Key("targets", "web")+".policy", Both(errMonitor, errPolicy), inner)
	require.EqualError(t, err, `probe: invalid monitor config: targets["web"].policy.interval = -1s: allowed [1ms, 5m]`)
	require.ErrorIs(t, err, errMonitor)
	require.ErrorIs(t, err, errPolicy)
}
