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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.EqualError(t, c.err, c.want) })
	}
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
