package dnsprobe

import (
	"context"
	"testing"
	"time"
)

// probersCtx returns a context with a generous hang guard.
func probersCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
