package replacetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record/replacetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryPasses(t *testing.T) {
	replacetest.Run(t, "example.test.", open(func(p *memory.Provider) replacetest.Store { return &atomic{Provider: p} }))
}

// keepsDeleted applies set but not del.
type keepsDeleted struct{ *atomic }

func (k keepsDeleted) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	return k.atomic.ReplaceRecords(ctx, zone, nil, set)
}

// refusesEmpty fails a call with nothing to change.
type refusesEmpty struct{ *atomic }

func (r refusesEmpty) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	if len(del)+len(set) == 0 {
		return errors.New("empty batch")
	}
	return r.atomic.ReplaceRecords(ctx, zone, del, set)
}

// The kit has teeth: each broken store fails with the step it broke.
func TestBrokenStoresCaught(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		wrap func(*memory.Provider) replacetest.Store
		want string
	}{
		{"twoWrites", func(p *memory.Provider) replacetest.Store { return &twoWrites{Provider: p} },
			"SwitchAndBack: ReplaceRecords from addresses to a CNAME: a read while it ran found replacetest-app with A [] and CNAME []"},
		{"keepsDeleted", func(p *memory.Provider) replacetest.Store { return keepsDeleted{&atomic{Provider: p}} },
			"SwitchAndBack: after the switch to a CNAME: replacetest-old A holds [192.0.2.1], want []"},
		{"refusesEmpty", func(p *memory.Provider) replacetest.Store { return refusesEmpty{&atomic{Provider: p}} },
			"NothingToChange: ReplaceRecords with nothing to change: empty batch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := replacetest.Check(ctx, "example.test.", open(c.wrap))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// A store that is not a Replacer underneath (a wrapper adding the method
// to a plain store does not count for record.New) makes the Reconciler
// write twice. plain hides memory.Provider's own ReplaceRecords.
type plain struct{ libdns.RecordGetter }

type notInnermost struct {
	*atomic
	inner plain
}

func (n notInnermost) Unwrap() libdns.RecordGetter { return n.inner }

func TestReconcilerTwoWritesCaught(t *testing.T) {
	err := replacetest.Check(context.Background(), "example.test.", open(func(p *memory.Provider) replacetest.Store {
		return notInnermost{atomic: &atomic{Provider: p}, inner: plain{p}}
	}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ReconcilerSwitch: Reconciler switching to CNAME")
}
