package heartbeat

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestZeroValues: zero values of the exported types with methods work or
// return an error, never panic.
func TestZeroValues(t *testing.T) {
	ctx := t.Context()
	now := time.Now()
	require.NotPanics(t, func() {
		var p Publisher
		require.ErrorIs(t, p.Run(ctx), ErrNotConfigured)
		_ = p.Verdict()
		p.SetVerdict(Verdict{})
		_ = p.Recovering(Local)

		var r Reader
		require.ErrorIs(t, r.Run(ctx), ErrNotConfigured)
		_, err := r.Read(ctx, now)
		require.ErrorIs(t, err, ErrNotConfigured)
		_ = r.Last()

		var h Healer
		_, _ = h.Plan(now)
		h.Written(now, false)
		_ = h.ReadBack(now, false, true)
		_ = h.Reset()
		_, _ = h.Own()
	})
	// Zero fields take their defaults.
	require.NoError(t, Rules{}.Validate())
	require.NoError(t, Config{Cluster: "eu-1", Region: "europe", GlobalZone: "g.example.com."}.Validate())
	require.NoError(t, ReaderConfig{Scope: Global, Zone: "g.example.com."}.Validate())
}
