package probecall

import (
	"context"
	"errors"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// Timed runs one probe, f with ctx, and returns its result with Latency set
// to the time f took. A failure that ends while ctx is canceled (not past
// its deadline) is reported as "canceled" (KindOther): the Monitor stopped
// or dropped the probe, which says nothing of the target.
func Timed(ctx context.Context, f func(context.Context) probe.Result) probe.Result {
	start := time.Now()
	r := f(ctx)
	if r.Status != probe.Pass && errors.Is(ctx.Err(), context.Canceled) {
		r.Status, r.Kind, r.Detail = probe.Fail, probe.KindOther, "canceled"
	}
	r.Latency = time.Since(start)
	return r
}
