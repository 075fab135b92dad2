package kit_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record/internal/kit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Check opens a store per scenario, stops at the first failure and names
// the scenario; an open that fails is said so.
func TestCheck(t *testing.T) {
	var opened, ran []string
	open := func(name string) func(context.Context) (*memory.Provider, error) {
		return func(context.Context) (*memory.Provider, error) {
			opened = append(opened, name)
			if name == "bad open" {
				return nil, errors.New("no server")
			}
			return &memory.Provider{}, nil
		}
	}
	sc := func(name string, err error) kit.Scenario[*memory.Provider] {
		return kit.Scenario[*memory.Provider]{Name: name, Run: func(context.Context, *memory.Provider, string) error {
			ran = append(ran, name)
			return err
		}}
	}
	all := []kit.Scenario[*memory.Provider]{sc("A", nil), sc("B", errors.New("broke")), sc("C", nil)}
	if err := kit.Check(t.Context(), "k", "example.test.", open("ok"), all); err == nil || err.Error() != "k: B: broke" {
		t.Errorf("Check = %v, want k: B: broke", err)
	}
	if len(opened) != 2 || len(ran) != 2 {
		t.Errorf("opened %v, ran %v: want two of each, none after the failure", opened, ran)
	}
	if err := kit.Check(t.Context(), "k", "example.test.", open("bad open"), all); err == nil || err.Error() != "k: A: open: no server" {
		t.Errorf("Check = %v, want k: A: open: no server", err)
	}
}

// Run plays each scenario as a subtest of that name.
func TestRun(t *testing.T) {
	var ran []string
	kit.Run(t, "example.test.", func(context.Context) (*memory.Provider, error) { return &memory.Provider{}, nil },
		[]kit.Scenario[*memory.Provider]{{Name: "One", Run: func(_ context.Context, _ *memory.Provider, zone string) error {
			ran = append(ran, zone)
			return nil
		}}})
	if len(ran) != 1 || ran[0] != "example.test." {
		t.Errorf("ran %v", ran)
	}
}

func TestHoldsReadFails(t *testing.T) {
	p := &memory.Provider{} // no zone: GetRecords fails
	err := kit.Holds(t.Context(), p, "example.test.", "step", "app", "A")
	if err == nil || err.Error()[:len("step: GetRecords: ")] != "step: GetRecords: " {
		t.Errorf("Holds = %v, want step: GetRecords: …", err)
	}
}
