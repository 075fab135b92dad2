package provider_test

import (
	"context"
	"testing"

	"github.com/libdns/libdns"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tiny, the small provider most tests use, is in example_test.go, beside
// the Example that shows it.

// readOnly implements only libdns.RecordGetter.
type readOnly struct{}

func (readOnly) GetRecords(context.Context, string) ([]libdns.Record, error) { return nil, nil }
