package providertest

import (
	"fmt"
	"slices"
	"testing"
)

// The suite's assertions, in the standard library only, so that importing
// providertest (or failovertest, which uses it) brings in no assertion
// library. fatal* stop the subtest; the others mark it failed and go on.

func fatalIfErr(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", msg(format, args), err)
	}
}

func errorIfErr(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", msg(format, args), err)
	}
}

func errorIfNoErr(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", msg(format, args))
	}
}

func check(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Error(msg(format, args))
	}
}

// sameElements reports whether got and want hold the same strings, each as
// many times, in any order.
func sameElements(got, want []string) bool {
	a, b := slices.Clone(got), slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func msg(format string, args []any) string {
	if format == "" {
		return "unexpected result"
	}
	return fmt.Sprintf(format, args...)
}
