package provider_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/provider"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrapOrder(t *testing.T) {
	var trace []string
	tag := func(name string) provider.Interceptor {
		return provider.InterceptorFunc(func(ctx context.Context, c provider.Call, next provider.Invoker) (provider.Result, error) {
			trace = append(trace, name+">"+string(c.Method))
			r, err := next(ctx, c)
			trace = append(trace, "<"+name)
			return r, err
		})
	}
	w := provider.Wrap(&tiny{}, tag("outer"), nil, tag("inner"))
	_, err := w.GetRecords(context.Background(), "example.test.")
	require.NoError(t, err)
	assert.Equal(t, []string{"outer>GetRecords", "inner>GetRecords", "<inner", "<outer"}, trace)
}

func TestWrapForwardsEveryMethod(t *testing.T) {
	ctx := context.Background()
	p := &tiny{}
	w := provider.Wrap(p)
	rec := libdns.TXT{Name: "a", Text: "x"}
	_, err := w.SetRecords(ctx, "z.", []libdns.Record{rec})
	require.NoError(t, err)
	_, err = w.AppendRecords(ctx, "z.", []libdns.Record{libdns.TXT{Name: "b", Text: "y"}})
	require.NoError(t, err)
	got, err := w.GetRecords(ctx, "z.")
	require.NoError(t, err)
	assert.Len(t, got, 2)
	gone, err := w.DeleteRecords(ctx, "z.", []libdns.Record{rec})
	require.NoError(t, err)
	assert.Len(t, gone, 1)
	assert.Same(t, p, w.Unwrap())
}

// A provider lacking a method gets an *UnsupportedError that is permanent
// and passes through the interceptors (a meter counts it).
func TestWrapUnsupported(t *testing.T) {
	m := provider.NewMeter(nil)
	w := provider.Wrap(readOnly{}, m)
	cases := []struct {
		method provider.Method
		call   func() error
	}{
		{provider.MethodAppendRecords, func() error { _, err := w.AppendRecords(context.Background(), "z.", nil); return err }},
		{provider.MethodSetRecords, func() error { _, err := w.SetRecords(context.Background(), "z.", nil); return err }},
		{provider.MethodDeleteRecords, func() error { _, err := w.DeleteRecords(context.Background(), "z.", nil); return err }},
		{provider.MethodListZones, func() error { _, err := w.ListZones(context.Background()); return err }},
	}
	for _, c := range cases {
		t.Run(string(c.method), func(t *testing.T) {
			assert.False(t, w.Supports(c.method))
			err := c.call()
			require.ErrorIs(t, err, provider.ErrUnsupported)
			var ue *provider.UnsupportedError
			require.True(t, errors.As(err, &ue))
			assert.Equal(t, c.method, ue.Method)
			assert.Equal(t, errclass.Permanent, errclass.Of(err))
			assert.Equal(t, int64(1), m.Stats().Method(c.method).Permanent)
		})
	}
	assert.True(t, w.Supports(provider.MethodGetRecords))
	assert.True(t, provider.MethodSetRecords.Writes())
	assert.False(t, provider.MethodGetRecords.Writes())
}
