package zonetransfer_test

import (
	"context"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransferRunTwice: a Transfer runs once.
func TestTransferRunTwice(t *testing.T) {
	p := new(memory.Provider)
	x, err := zonetransfer.NewTransfer(p, xfrConfig(), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- x.Run(ctx) }()
	go func() { done <- x.Run(ctx) }()
	// Whichever call comes second returns ErrRunning at once; the other
	// runs until ctx ends.
	assert.ErrorIs(t, <-done, zonetransfer.ErrRunning)
	cancel()
	assert.NoError(t, <-done)
	assert.ErrorIs(t, x.Run(context.Background()), zonetransfer.ErrRunning, "after it returned too")
}

// TestZeroValues: the zero Transfer is not usable and says so; no method
// panics. A zero TransferConfig is valid and off.
func TestZeroValues(t *testing.T) {
	var x zonetransfer.Transfer
	assert.ErrorIs(t, x.Run(context.Background()), zonetransfer.ErrNoProvider)
	m := new(dns.Msg)
	m.SetAxfr("example.test.")
	q, err := m.Pack()
	require.NoError(t, err)
	_, err = x.ServeTCP(io.Discard, q, netip.MustParseAddr("127.0.0.1"), nil)
	assert.ErrorIs(t, err, zonetransfer.ErrNoProvider)
	assert.Nil(t, x.RespondUDP(q, nil, netip.MustParseAddr("127.0.0.1")))
	assert.Nil(t, x.RespondWire(q, netip.MustParseAddr("127.0.0.1"), true))
	assert.Equal(t, zonetransfer.TransferStats{}, x.Stats())
	_, err = zonetransfer.NewTransfer(nil, zonetransfer.TransferConfig{}, nil)
	assert.ErrorIs(t, err, zonetransfer.ErrNoProvider)

	var c zonetransfer.TransferConfig
	assert.NoError(t, c.Validate())
	assert.False(t, c.Enabled())
}

// TestConfigMessages pins the message of a few fields (internal/fielderr).
func TestConfigMessages(t *testing.T) {
	for _, tc := range []struct {
		set  func(*zonetransfer.TransferConfig)
		want string
	}{
		{func(c *zonetransfer.TransferConfig) { c.NotifyTimeout = time.Millisecond }, "zonetransfer: invalid config: notifyTimeout = 1ms: allowed [10ms, 1m]"},
		{func(c *zonetransfer.TransferConfig) { c.NotifyRetries = 101 }, "zonetransfer: invalid config: notifyRetries = 101: allowed [0, 100]"},
		{func(c *zonetransfer.TransferConfig) { c.Notify = []string{"192.0.2.1:53", "ns1:53"} }, `zonetransfer: invalid config: notify[1] = "ns1:53": allowed an IP:port such as 192.0.2.53:53`},
		{func(c *zonetransfer.TransferConfig) { c.Keys = []zonetransfer.TSIGKey{{Name: "k", Secret: "c2hvcnQ="}} }, "zonetransfer: invalid config: keys[0].secret = (hidden): allowed base64 of at least 16 bytes"},
		{func(c *zonetransfer.TransferConfig) { c.Allow = []zonetransfer.TransferRule{{Key: "nokey"}} }, `zonetransfer: invalid config: allow[0].key = "nokey": allowed the name of a key in keys`},
	} {
		c := zonetransfer.DefaultTransferConfig()
		tc.set(&c)
		err := c.Validate()
		require.Error(t, err)
		assert.Equal(t, tc.want, err.Error())
		assert.ErrorIs(t, err, zonetransfer.ErrInvalidConfig)
		var fe *zonetransfer.FieldError
		assert.ErrorAs(t, err, &fe)
	}
}
