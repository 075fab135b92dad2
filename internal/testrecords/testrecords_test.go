package testrecords_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/libdns/libdns"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestData(t *testing.T) {
	p := &memory.Provider{}
	if err := p.AddZone("example.test."); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		testrecords.Address("app", "2001:db8::1"), testrecords.Address("app", "192.0.2.1"),
	}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(testrecords.Data(t, p, "example.test.", "app", "AAAA")); got != "[2001:db8::1]" {
		t.Errorf("AAAA data %s", got)
	}
	if got := testrecords.Data(t, p, "example.test.", "other", "A"); got != nil {
		t.Errorf("no records: %v, want nil", got)
	}
}

type failing struct{}

func (failing) GetRecords(context.Context, string) ([]libdns.Record, error) {
	return nil, errors.New("down")
}

// fatal records the failure Data reports.
type fatal struct {
	testing.TB
	msg string
}

func (f *fatal) Helper()                           {}
func (f *fatal) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

func TestDataFails(t *testing.T) {
	f := &fatal{TB: t}
	testrecords.Data(f, failing{}, "example.test.", "app", "A")
	if f.msg != "GetRecords(example.test.): down" {
		t.Errorf("failure %q", f.msg)
	}
}
