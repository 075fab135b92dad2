package provider_test

import (
	"context"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/gslbkit/gslb/record"
	"github.com/gslbkit/gslb/record/fencetest"
)

// plainStore is the in-memory zone with only the four libdns methods: no
// atomic replace, no fence.
type plainStore struct{ provider.Provider }

func chainAround(t *testing.T, p libdns.RecordGetter) (*provider.Wrapped, *provider.Meter) {
	t.Helper()
	w, m, err := provider.NewChain(p, provider.DefaultChainConfig(), nil)
	require.NoError(t, err)
	return w, m
}

// A fenced Reconciler over the usual meter-retry-limit chain around a
// store that fences passes the fencing kit: the chain forwards
// ReplaceFenced, and the meter counts it.
func TestChainKeepsFencing(t *testing.T) {
	var meters []*provider.Meter
	fencetest.Run(t, "example.test.", func(context.Context) (fencetest.Store, error) {
		p := &memory.Provider{}
		w, m := chainAround(t, p)
		meters = append(meters, m)
		return w, p.AddZone("example.test.")
	})
	var fenced int64
	for _, m := range meters {
		fenced += m.Stats().Method(provider.MethodReplaceFenced).Calls
	}
	assert.Positive(t, fenced, "the fenced writes went through the chain")
}

// So does a Faulty wrapper (it embeds a Wrapped) when it injects nothing.
func TestFaultyKeepsFencing(t *testing.T) {
	fencetest.Run(t, "example.test.", func(context.Context) (fencetest.Store, error) {
		p := &memory.Provider{}
		f, err := providertest.NewFaulty(p, providertest.FaultConfig{Seed: 1})
		if err != nil {
			return nil, err
		}
		return f, p.AddZone("example.test.")
	})
}

// A chain around a plain libdns provider forwards the atomic methods only
// to fail them clearly; record.New judges by the provider inside, so it
// refuses a fencing token and writes with SetRecords and DeleteRecords.
func TestChainAroundPlainStore(t *testing.T) {
	ctx := context.Background()
	p := &memory.Provider{}
	require.NoError(t, p.AddZone("example.test."))
	w, m := chainAround(t, plainStore{p})
	assert.False(t, w.Supports(provider.MethodReplaceRecords))
	assert.False(t, w.Supports(provider.MethodReplaceFenced))
	err := w.ReplaceRecords(ctx, "example.test.", nil, nil)
	require.ErrorIs(t, err, provider.ErrUnsupported)
	replaces := m.Stats().Method(provider.MethodReplaceRecords).Calls
	err = w.ReplaceFenced(ctx, "example.test.", libdns.TXT{}, libdns.TXT{}, nil, nil)
	require.ErrorIs(t, err, provider.ErrUnsupported)
	assert.Equal(t, int64(1), m.Stats().Method(provider.MethodReplaceFenced).Calls, "one attempt: unsupported is permanent")

	_, err = record.New(w, record.LocalConfig("deploy"), record.Options{FenceToken: 1})
	require.ErrorIs(t, err, record.ErrCannotFence)

	r, err := record.New(w, record.LocalConfig("deploy"), record.Options{})
	require.NoError(t, err)
	app := func(typ, v string) record.Desired {
		return record.Desired{Sets: []record.RRSet{{Zone: "example.test.", Name: "app", Type: typ, TTL: time.Minute, Values: []string{v}}}}
	}
	_, err = r.Apply(ctx, app("A", "192.0.2.1"))
	require.NoError(t, err)
	assert.Equal(t, replaces, m.Stats().Method(provider.MethodReplaceRecords).Calls, "no ReplaceRecords through a chain around a plain store")
}

// replacing adds record.Replacer to the in-memory zone and counts its
// calls (the in-memory zone switches types atomically in SetRecords).
type replacing struct {
	*memory.Provider
	calls int
}

func (r *replacing) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	r.calls++
	if _, err := r.DeleteRecords(ctx, zone, del); err != nil {
		return err
	}
	_, err := r.SetRecords(ctx, zone, set)
	return err
}

// Around a store that replaces atomically, a Reconciler's type switch
// (addresses to a CNAME) is a ReplaceRecords call through the chain.
func TestChainKeepsAtomicReplace(t *testing.T) {
	ctx := context.Background()
	mp := &memory.Provider{}
	require.NoError(t, mp.AddZone("example.test."))
	p := &replacing{Provider: mp}
	w, m := chainAround(t, p)
	assert.True(t, w.Supports(provider.MethodReplaceRecords))
	cfg := record.LocalConfig("deploy")
	cfg.AllowTypeSwitch = true
	r, err := record.New(w, cfg, record.Options{})
	require.NoError(t, err)
	_, err = r.Apply(ctx, record.Desired{Sets: []record.RRSet{{Zone: "example.test.", Name: "app", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1"}}}})
	require.NoError(t, err)
	_, err = r.Apply(ctx, record.Desired{Sets: []record.RRSet{{Zone: "example.test.", Name: "app", Type: "CNAME", TTL: time.Minute, Values: []string{"pool.example.test."}}}})
	require.NoError(t, err)
	assert.Positive(t, m.Stats().Method(provider.MethodReplaceRecords).Calls)
	assert.Equal(t, int(m.Stats().Method(provider.MethodReplaceRecords).Calls), p.calls)
	recs, err := p.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	var got []string
	for _, rec := range recs {
		if rr := rec.RR(); rr.Name == "app" {
			got = append(got, rr.Type+" "+rr.Data)
		}
	}
	assert.Equal(t, []string{"CNAME pool.example.test."}, got)
}
