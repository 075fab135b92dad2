package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/gslbkit/gslb/provider"
)

type statusErr int

func (e statusErr) Error() string   { return fmt.Sprintf("HTTP %d", int(e)) }
func (e statusErr) StatusCode() int { return int(e) }

func TestClassify(t *testing.T) {
	base := errors.New("boom")
	for _, tc := range []struct {
		name string
		err  error
		want provider.ErrorClass
	}{
		{"nil", nil, provider.NoError},
		{"plain", base, provider.Permanent},
		{"deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), provider.Temporary},
		{"cancelled", context.Canceled, provider.Permanent},
		{"429", statusErr(429), provider.Throttled},
		{"503", statusErr(503), provider.Temporary},
		{"403", statusErr(403), provider.Permanent},
		{"marked throttled", provider.Mark(base, provider.Throttled), provider.Throttled},
		{"marked temporary, wrapped", fmt.Errorf("x: %w", provider.Mark(fs.ErrNotExist, provider.Temporary)), provider.Temporary},
		{"marked permanent over 503", provider.Mark(statusErr(503), provider.Permanent), provider.Permanent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := provider.Classify(tc.err); got != tc.want {
				t.Fatalf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
	m := provider.Mark(fs.ErrNotExist, provider.Throttled)
	if !errors.Is(m, fs.ErrNotExist) {
		t.Fatal("Mark hides the error it marks")
	}
	var th interface{ Throttled() bool }
	if !errors.As(m, &th) || !th.Throttled() {
		t.Fatal("a throttled mark does not answer Throttled()")
	}
	if provider.Mark(nil, provider.Throttled) != nil {
		t.Fatal("Mark(nil) is not nil")
	}
	if !provider.Temporary.Retryable() || provider.Permanent.Retryable() {
		t.Fatal("Retryable")
	}
}

func ExampleClassify() {
	err := provider.Mark(errors.New("route53: Throttling: Rate exceeded"), provider.Throttled)
	c := provider.Classify(fmt.Errorf("reconcile app.example.com.: %w", err))
	fmt.Println(c, c.Retryable())
	// Output: throttled true
}
