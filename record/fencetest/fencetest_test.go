package fencetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record/fencetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const zone = "example.test."

func openWith(wrap func(*memory.Provider) fencetest.Store) fencetest.Opener {
	return func(context.Context) (fencetest.Store, error) {
		p := &memory.Provider{}
		return wrap(p), p.AddZone(zone)
	}
}

func TestMemoryPasses(t *testing.T) {
	fencetest.Run(t, zone, openWith(func(p *memory.Provider) fencetest.Store { return p }))
}

// unmarked refuses as the store should but says so with a plain error: a
// Reconciler could not tell a fence from a transient failure.
type unmarked struct{ *memory.Provider }

func (u unmarked) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	if err := u.Provider.ReplaceFenced(ctx, zone, was, now, del, set); err != nil {
		return errors.New("refused")
	}
	return nil
}

// halfway applies the changes, then checks the fence: a refused write
// leaves its records behind.
type halfway struct{ *memory.Provider }

func (h halfway) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	if _, err := h.SetRecords(ctx, zone, set); err != nil {
		return err
	}
	return h.Provider.ReplaceFenced(ctx, zone, was, now, del, nil)
}

// refusing fences nothing in and nothing out: it refuses every write.
type refusing struct{ *memory.Provider }

func (r refusing) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	return memory.ErrFenced
}

// The kit has teeth: each broken store fails with the step it broke.
func TestBrokenStoresCaught(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		wrap func(*memory.Provider) fencetest.Store
		want string
	}{
		{"careless", func(p *memory.Provider) fencetest.Store { return careless{p} }, "LateWriterRefused: a late writer expecting the old fence: got <nil>"},
		{"unmarked", func(p *memory.Provider) fencetest.Store { return unmarked{p} }, "LateWriterRefused: a late writer expecting the old fence: got refused"},
		{"halfway", func(p *memory.Provider) fencetest.Store { return halfway{p} }, "LateWriterRefused: after the refused write: fencetest-late A holds [192.0.2.9], want []"},
		{"refusing", func(p *memory.Provider) fencetest.Store { return refusing{p} }, "CompareAndSet: first fenced write on a free zone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := fencetest.Check(ctx, zone, openWith(c.wrap))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// A store whose plain writes fail cannot show the control (the late
// write landing without fencing): that is a failure, not a pass.
type noPlainWrites struct{ *memory.Provider }

func (n noPlainWrites) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return nil, errors.New("read-only")
}

func TestControlMustLand(t *testing.T) {
	err := fencetest.Check(context.Background(), zone, openWith(func(p *memory.Provider) fencetest.Store { return noPlainWrites{p} }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FrozenLeaderUnfenced: writer 1's first write")
}
