package record_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record"
)

// pausing is a store shared by two writers whose writes run pause (once
// set) before reaching the store: a writer frozen between its read and its
// write, while the other one acts.
type pausing struct {
	*memory.Provider
	mu    sync.Mutex
	pause func()
	skip  int // writes to let pass before pausing
}

func (p *pausing) hold() {
	p.mu.Lock()
	f := p.pause
	if f != nil && p.skip > 0 {
		p.skip--
		f = nil
	} else {
		p.pause = nil
	}
	p.mu.Unlock()
	if f != nil {
		f()
	}
}

func (p *pausing) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	p.hold()
	return p.Provider.ReplaceFenced(ctx, zone, was, now, del, set)
}

func (p *pausing) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	p.hold()
	return p.Provider.SetRecords(ctx, zone, recs)
}

// plain hides the memory store's Fencer: a plain libdns provider.
type plain struct{ record.ZoneEditor }

func newZone(t *testing.T) *memory.Provider {
	t.Helper()
	p := &memory.Provider{}
	require.NoError(t, p.AddZone("example.com."))
	return p
}

func appAt(ip string) record.Desired {
	return record.Desired{Sets: []record.RRSet{{Zone: "example.com.", Name: "app", Type: "A", TTL: time.Minute, Values: []string{ip}}}}
}

// published returns the sorted data of example.com.'s records at name and
// type.
func published(t *testing.T, p record.ZoneEditor, name, typ string) []string {
	t.Helper()
	return testrecords.Data(t, p, "example.com.", name, typ)
}

type events struct {
	mu  sync.Mutex
	evs []record.Event
}

func (e *events) Observe(ev record.Event) { e.mu.Lock(); e.evs = append(e.evs, ev); e.mu.Unlock() }

func (e *events) fenced() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.evs {
		if _, ok := ev.(record.FencedEvent); ok {
			n++
		}
	}
	return n
}

func writer(t *testing.T, p record.ZoneEditor, token uint64, obs record.Observer) *record.Reconciler {
	t.Helper()
	r, err := record.New(p, record.LocalConfig("deploy"), record.Options{FenceToken: token, Observer: obs})
	require.NoError(t, err)
	return r
}

// A new writer takes the zone over with a higher token; the old one is
// refused by the store, stops writing (no retry, no read) and is reported
// once, until it is given a higher token.
func TestFenceTakeOver(t *testing.T) {
	ctx := context.Background()
	z := newZone(t)
	var ev1 events
	w1, w2 := writer(t, z, 1, &ev1), writer(t, z, 2, nil)

	_, err := w1.Apply(ctx, appAt("192.0.2.1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"deploy 1 1"}, published(t, z, "_gslb-fence", "TXT"))
	_, err = w2.Apply(ctx, appAt("192.0.2.2"))
	require.NoError(t, err)
	assert.Equal(t, []string{"deploy 2 0"}, published(t, z, "_gslb-fence", "TXT"))

	_, err = w1.Apply(ctx, appAt("192.0.2.9"))
	require.ErrorIs(t, err, record.ErrFenced)
	var fe *record.FencedError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "deploy 2 0", fe.Holder)
	assert.Equal(t, []string{"192.0.2.2"}, published(t, z, "app", "A"))
	tok, fenced := w1.FenceToken()
	assert.Equal(t, uint64(1), tok)
	assert.True(t, fenced)
	assert.Equal(t, 1, ev1.fenced())

	// Fenced off: no call at all, the same error, no new event.
	v := z.Version()
	rep, err := w1.ReconcileOnce(ctx)
	require.ErrorIs(t, err, record.ErrFenced)
	assert.True(t, rep.Pending)
	assert.Equal(t, v, z.Version())
	assert.Equal(t, 1, ev1.fenced())

	// Tokens only grow; a higher one lifts the fence and takes over.
	require.ErrorIs(t, w1.SetFenceToken(0), record.ErrInvalid)
	require.NoError(t, w1.SetFenceToken(3))
	_, err = w1.ReconcileOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"192.0.2.9"}, published(t, z, "app", "A"))
	_, err = w2.ReconcileOnce(ctx)
	require.ErrorIs(t, err, record.ErrFenced)
}

// A new leader with nothing to change still fences the old one off at
// once (one fence-only write); after that a steady state writes nothing.
func TestFenceTakeOverWithoutChanges(t *testing.T) {
	ctx := context.Background()
	z := newZone(t)
	w1, w2 := writer(t, z, 1, nil), writer(t, z, 2, nil)
	_, err := w1.Apply(ctx, appAt("192.0.2.1"))
	require.NoError(t, err)
	rep, err := w2.Apply(ctx, appAt("192.0.2.1"))
	require.NoError(t, err)
	assert.True(t, rep.Changes.Empty())
	assert.Equal(t, 1, rep.Writes)
	assert.Equal(t, []string{"deploy 2 0"}, published(t, z, "_gslb-fence", "TXT"))
	rep, err = w2.ReconcileOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Writes)
	_, err = w1.ReconcileOnce(ctx)
	require.ErrorIs(t, err, record.ErrFenced)
}

// A fencing token with a store that cannot fence is refused at New, and
// by SetFenceToken: never pretended.
func TestFenceNeedsFencer(t *testing.T) {
	p := plain{newZone(t)}
	_, err := record.New(p, record.LocalConfig("deploy"), record.Options{FenceToken: 1})
	require.ErrorIs(t, err, record.ErrCannotFence)
	require.ErrorIs(t, err, record.ErrInvalid)
	r, err := record.New(p, record.LocalConfig("deploy"), record.Options{})
	require.NoError(t, err)
	require.ErrorIs(t, r.SetFenceToken(1), record.ErrCannotFence)
	require.NoError(t, r.SetFenceToken(0))
}

// A fence of another owner, or not written by a Reconciler, refuses the
// writer without any write.
func TestFenceForeign(t *testing.T) {
	ctx := context.Background()
	for _, text := range []string{"other 1", "garbage"} {
		z := newZone(t)
		_, err := z.SetRecords(ctx, "example.com.", []libdns.Record{testrecords.Fence(text)})
		require.NoError(t, err)
		v := z.Version()
		_, err = writer(t, z, 5, nil).Apply(ctx, appAt("192.0.2.1"))
		require.ErrorIs(t, err, record.ErrFenced)
		assert.Equal(t, v, z.Version(), text)
	}
}

// The fence name is validated like the marker prefix.
func TestFenceNameValidated(t *testing.T) {
	for _, name := range []string{"a.b", "_gslb-owner", "-x"} {
		cfg := record.DefaultConfig("deploy")
		cfg.FenceName = name
		err := cfg.Validate()
		require.ErrorIs(t, err, record.ErrInvalid, name)
		var fe *record.FieldError
		require.True(t, errors.As(err, &fe))
		assert.Equal(t, "fenceName", fe.Path)
	}
}

// Run, fenced off, stops: no retry, no write, one FencedEvent, however
// many resyncs pass; a higher token wakes it and it takes the zone back.
func TestFenceRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		z := newZone(t)
		var ev events
		cfg := record.LocalConfig("deploy")
		cfg.ResyncInterval = 30 * time.Second
		w1, err := record.New(z, cfg, record.Options{FenceToken: 1, Observer: &ev})
		require.NoError(t, err)
		w2 := writer(t, z, 2, nil)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w1.Run(ctx) }()
		require.NoError(t, w1.Set(appAt("192.0.2.1")))
		synctest.Wait()
		assert.Equal(t, []string{"192.0.2.1"}, published(t, z, "app", "A"))

		_, err = w2.Apply(ctx, appAt("192.0.2.2"))
		require.NoError(t, err)
		v := z.Version()
		time.Sleep(5 * time.Minute) // ten resyncs
		synctest.Wait()
		assert.Equal(t, v, z.Version(), "no write once fenced")
		assert.Equal(t, 1, ev.fenced())
		ev.mu.Lock()
		for _, e := range ev.evs {
			_, retry := e.(record.RetryEvent)
			assert.False(t, retry, "a fence is not retried")
		}
		ev.mu.Unlock()

		require.NoError(t, w1.SetFenceToken(3))
		synctest.Wait()
		assert.Equal(t, []string{"192.0.2.1"}, published(t, z, "app", "A"))
		_, err = w2.ReconcileOnce(ctx)
		require.ErrorIs(t, err, record.ErrFenced)
		cancel()
		require.NoError(t, <-done)
	})
}

// Two writers with the same token (siblings in one process) that move
// the fence under each other are not fenced: the refused one reads the
// fence again, finds its own token and writes once more; refused again,
// it reports a transient error (retried), and the next reconcile writes.
func TestFenceSiblingSameToken(t *testing.T) {
	ctx := context.Background()
	z := &pausing{Provider: newZone(t)}
	a, b := writer(t, z, 7, nil), writer(t, z, 7, nil)
	_, err := a.Apply(ctx, appAt("192.0.2.1"))
	require.NoError(t, err)
	www := func(ip string) record.Desired {
		return record.Desired{Sets: []record.RRSet{{Zone: "example.com.", Name: "www", Type: "A", TTL: time.Minute, Values: []string{ip}}}}
	}
	z.pause = func() {
		_, err := b.Apply(ctx, www("192.0.2.5"))
		require.NoError(t, err)
	}
	_, err = a.Apply(ctx, appAt("192.0.2.2"))
	require.NoError(t, err, "refused once, written at the second try")
	assert.Equal(t, []string{"192.0.2.2"}, published(t, z, "app", "A"))

	// The sibling moves the fence before both tries.
	z.pause = func() {
		_, err := b.Apply(ctx, www("192.0.2.6"))
		require.NoError(t, err)
		z.mu.Lock()
		z.pause = func() {
			_, err := b.Apply(ctx, www("192.0.2.7"))
			require.NoError(t, err)
		}
		z.mu.Unlock()
	}
	_, err = a.Apply(ctx, appAt("192.0.2.3"))
	require.Error(t, err)
	require.NotErrorIs(t, err, record.ErrFenced)
	assert.True(t, provider.Classify(err).Retryable(), "%v", err)
	_, fenced := a.FenceToken()
	assert.False(t, fenced)
	_, err = a.ReconcileOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"192.0.2.3"}, published(t, z, "app", "A"))
	assert.Equal(t, []string{"192.0.2.7"}, published(t, z, "www", "A"))
}
