package envfill

import (
	"os"
	"strings"
)

// From returns a function that sets *dst, when it is empty, to the value
// of the first of keys that getenv answers with more than white space
// (trimmed); getenv nil means os.Getenv.
func From(getenv func(string) string) func(dst *string, keys ...string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	return func(dst *string, keys ...string) {
		for _, k := range keys {
			if *dst == "" {
				*dst = strings.TrimSpace(getenv(k))
			}
		}
	}
}
