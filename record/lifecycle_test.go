package record

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFieldErrorFormat: the exact message of a few fields, one shape.
func TestFieldErrorFormat(t *testing.T) {
	c := DefaultConfig("gslb-1")
	c.WriteBurst = -1
	d := DefaultConfig("gslb-1")
	d.RetryBase = time.Millisecond
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"int", c.Validate(), "record: invalid config: writeBurst = -1: allowed [1, 10000], or 0 for the default"},
		{"duration", d.Validate(), "record: invalid config: retryBase = 1ms: allowed [10ms, 1h]"},
		{"owner", DefaultConfig("a b").Validate(), `record: invalid config: ownerId = "a b": allowed printable ASCII without spaces, quotes or backslashes`},
		{"marker rule", Config{OwnerID: "x", MarkerPrefix: "-x"}.Validate(), `record: invalid config: markerPrefix = "-x": allowed a DNS label: [1, 63] letters, digits, hyphens or underscores (no hyphen first or last)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.EqualError(t, c.err, c.want)
			require.ErrorIs(t, c.err, ErrInvalidConfig)
			require.ErrorIs(t, c.err, ErrInvalid)
			var fe *FieldError
			require.ErrorAs(t, c.err, &fe)
		})
	}
}

// TestZeroValues: a zero Reconciler returns ErrNotConfigured, never panics.
func TestZeroValues(t *testing.T) {
	var r Reconciler
	ctx := t.Context()
	require.NotPanics(t, func() {
		require.ErrorIs(t, r.Set(Desired{}), ErrNotConfigured)
		_, err := r.Apply(ctx, Desired{})
		require.ErrorIs(t, err, ErrNotConfigured)
		_, err = r.ReconcileOnce(ctx)
		require.ErrorIs(t, err, ErrNotConfigured)
		require.ErrorIs(t, r.Run(ctx), ErrNotConfigured)
		require.False(t, r.Pending())
		_ = r.Conflicts()
		_ = r.Config()
	})
	require.NoError(t, Config{OwnerID: "x"}.Validate(), "zero fields take the defaults")
}
