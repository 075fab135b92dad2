package testmoto_test

import (
	"testing"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/internal/testmoto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Start runs moto; each Provider gets a zone of its own, written and read
// through the route53 adapter.
func TestStartProvider(t *testing.T) {
	s := testmoto.Start(t)
	ctx := t.Context()
	p1, id1, err := s.Provider(ctx, "example.test.")
	require.NoError(t, err)
	_, id2, err := s.Provider(ctx, "example.test.")
	require.NoError(t, err)
	assert.NotEqual(t, id1, id2)
	_, err = p1.SetRecords(ctx, "example.test.", []libdns.Record{libdns.TXT{Name: "t", Text: "x"}})
	require.NoError(t, err)
	recs, err := p1.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	var txt []string
	for _, r := range recs {
		if rr := r.RR(); rr.Name == "t" && rr.Type == "TXT" {
			txt = append(txt, rr.Data)
		}
	}
	assert.Equal(t, []string{"x"}, txt)
}
