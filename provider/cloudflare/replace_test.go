package cloudflare_test

import (
	"context"
	"testing"

	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/gslbkit/gslb/record"
	"github.com/gslbkit/gslb/record/replacetest"
)

var _ record.Replacer = (*cloudflare.Provider)(nil)

// The ReplaceRecords kit's scenarios against the fake API: one batch
// switches a name between addresses and a CNAME (the fake, like
// Cloudflare, refuses a CNAME beside other data, and applies a batch's
// deletes first), never read with neither, and a Reconciler's type switch
// is that one batch.
func TestReplaceRecords(t *testing.T) {
	replacetest.Run(t, "example.test.", func(context.Context) (replacetest.Store, error) {
		return newProvider(t, newFakeCloudflare(t, token, zoneID, "example.test"), nil), nil
	})
}
