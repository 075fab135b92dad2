package testrecords_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
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

// TestLoad: the fixtures load into a store as they are, and a zone added
// twice fails the test.
func TestLoad(t *testing.T) {
	for _, recs := range [][]libdns.Record{testrecords.FastPath(), testrecords.Chains()} {
		p := &memory.Provider{}
		testrecords.Load(t, p, "example.test.", recs)
		got, err := p.GetRecords(context.Background(), "example.test.")
		if err != nil || len(got) != len(recs)+1 { // and the SOA memory makes
			t.Errorf("GetRecords: %d records, %v; want %d", len(got), err, len(recs)+1)
		}
		f := &fatal{TB: t}
		testrecords.Load(f, p, "example.test.", nil)
		if f.msg == "" {
			t.Error("adding a zone twice did not fail the test")
		}
	}
}

// TestLines: "name type data", the OPT record left out.
func TestLines(t *testing.T) {
	m := new(dns.Msg)
	m.SetEdns0(1232, false)
	a, _ := dns.NewRR("www.example.test. 30 IN A 192.0.2.1")
	txt, _ := dns.NewRR(`t.example.test. 30 IN TXT "hello world"`)
	got := fmt.Sprint(testrecords.Lines(append([]dns.RR{a, txt}, m.Extra...)))
	if want := `[www.example.test. A 192.0.2.1 t.example.test. TXT "hello world"]`; got != want {
		t.Errorf("Lines = %s, want %s", got, want)
	}
}
