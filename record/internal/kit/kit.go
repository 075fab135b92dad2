package kit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/testrecords"
)

// Scenario is one check of a kit against a fresh store of type S.
type Scenario[S any] struct {
	Name string
	Run  func(ctx context.Context, s S, zone string) error
}

// Check plays scenarios in order, each against a store open returns for
// zone, and returns the first failure as "<kit>: <scenario>: <error>"
// (an open that fails: "<kit>: <scenario>: open: <error>"), or nil.
func Check[S any](ctx context.Context, kit, zone string, open func(context.Context) (S, error), scenarios []Scenario[S]) error {
	for _, sc := range scenarios {
		s, err := open(ctx)
		if err != nil {
			return fmt.Errorf("%s: %s: open: %w", kit, sc.Name, err)
		}
		if err := sc.Run(ctx, s, zone); err != nil {
			return fmt.Errorf("%s: %s: %w", kit, sc.Name, err)
		}
	}
	return nil
}

// Run plays scenarios as subtests of t named after them, each against a
// store open returns for zone with the subtest's context.
func Run[S any](t *testing.T, zone string, open func(context.Context) (S, error), scenarios []Scenario[S]) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			ctx := t.Context()
			s, err := open(ctx)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if err := sc.Run(ctx, s, zone); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Read returns the records of zone at name and type, as g returns them,
// and their data, sorted.
func Read(ctx context.Context, g libdns.RecordGetter, zone, name, typ string) ([]libdns.Record, []string, error) {
	recs, err := g.GetRecords(ctx, zone)
	if err != nil {
		return nil, nil, fmt.Errorf("GetRecords: %w", err)
	}
	out, data := testrecords.At(recs, name, typ)
	return out, data, nil
}

// Holds checks that zone holds exactly want (data, any order) at name and
// type; what says which step is checked.
func Holds(ctx context.Context, g libdns.RecordGetter, zone, what, name, typ string, want ...string) error {
	_, got, err := Read(ctx, g, zone, name, typ)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: %s %s holds [%s], want [%s]", what, name, typ, strings.Join(got, " "), strings.Join(want, " "))
	}
	return nil
}
