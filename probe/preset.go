package probe

import "time"

// Every preset starts from DefaultPolicy and overrides the fields its peer
// sets, so a field a preset does not mention has its default value. The
// rules each preset follows are its peer's, listed in docs/semantics.md; the tests in
// preset_test.go name the rule they check.

// RecordService returns the record service's policy, which is also
// DefaultPolicy: interval 10s, timeout 1s, warning after 1 failure, critical
// after 3, passing after 1 success, start passing, fail-now → critical;
// warning and recovery are probed at half the interval, critical targets
// back off by doubling from the interval up to 300s. Configs that declare
// the record-service style also call ValidateRecordService (interval
// 10–300s, timeout 0.1–3.0s).
func RecordService() Policy { return DefaultPolicy() }

// Envoy returns Envoy's active health checking policy, with Envoy Gateway's
// defaults: interval 3s, timeout 1s, unhealthyThreshold 3, healthyThreshold
// 1. Every target starts critical (Envoy rule 1); a first success passes at
// once whatever healthyThreshold says (rule 2); a first failure leaves it
// critical (rule 3). WarningThreshold is 1: a healthy host with a failure
// pending shows as warning, which is still served, so there is no served
// warning state beyond Envoy's own "healthy, change pending". A fail-now
// result (non-retriable status, body mismatch, gRPC not SERVING) makes the
// target critical at once (rule 5). The Envoy schedule (rule 9) applies,
// with every edge and unhealthy interval at its default (the interval).
func Envoy() Policy {
	p := DefaultPolicy()
	p.Interval = 3 * time.Second
	p.Timeout = time.Second
	p.WarningThreshold = 1
	p.CriticalThreshold = 3
	p.PassingThreshold = 1
	p.InitialState = Critical
	p.FirstPassImmediate = true
	p.FailNowAsFailure = false
	p.Schedule = ScheduleEnvoy
	return p
}

// ProxySync returns the heartbeat controller's proxy-config-sync check
// policy: checked once per reconcile (interval 10s, timeout 3s), any
// failure makes the target critical at once (warning and critical
// thresholds 1), and 3 consecutive successes bring it back (recovery, not
// served, in between). A target starts critical and its first success
// passes at once, so a controller restart does not hold healthy gateways
// back for three reconciles; after any failure the full 3 are needed.
func ProxySync() Policy {
	p := DefaultPolicy()
	p.Interval = 10 * time.Second
	p.Timeout = 3 * time.Second
	p.WarningThreshold = 1
	p.CriticalThreshold = 1
	p.PassingThreshold = 3
	p.WarningExitThreshold = 3
	p.InitialState = Critical
	p.FirstPassImmediate = true
	p.Schedule = ScheduleEnvoy
	return p
}

// Consul returns Consul's check-threshold policy for the given
// successBeforePassing, failuresBeforeWarning and failuresBeforeCritical.
// As in Consul, 0 behaves like 1, except failuresBeforeWarning 0, which
// means "the same as failuresBeforeCritical"; a failuresBeforeWarning
// above failuresBeforeCritical is never reached in Consul either, so it is
// also taken as failuresBeforeCritical. Negative values are passed through
// unchanged, so Validate rejects them.
//
// A new check is critical and its first result applies at once (Consul
// starts its counters at their thresholds). successBeforePassing successes
// are needed both to leave critical (recovery in between, which Consul
// reports as "unchanged" critical: not served either way) and to leave
// warning. Consul has no fail-now: it counts as an ordinary failure. The
// schedule is a fixed interval (10s) with timeout 10s, Consul's defaults.
//
// One Consul quirk is not reproduced: with failuresBeforeWarning below
// failuresBeforeCritical, Consul moves a critical check that has passed
// once to warning on its next failure; this machine keeps it critical.
func Consul(successBeforePassing, failuresBeforeWarning, failuresBeforeCritical int) Policy {
	one := func(n int) int {
		if n == 0 {
			return 1
		}
		return n
	}
	crit := one(failuresBeforeCritical)
	warn := failuresBeforeWarning
	if warn == 0 || warn > crit {
		warn = crit
	}
	p := DefaultPolicy()
	p.Interval = 10 * time.Second
	p.Timeout = 10 * time.Second
	p.WarningThreshold = warn
	p.CriticalThreshold = crit
	p.PassingThreshold = one(successBeforePassing)
	p.WarningExitThreshold = one(successBeforePassing)
	p.InitialState = Critical
	p.FirstPassImmediate = true
	p.FailNowAsFailure = true
	p.Schedule = ScheduleEnvoy
	return p
}

// Route 53 health check intervals.
const (
	route53StandardInterval = 30 * time.Second
	route53FastInterval     = 10 * time.Second
)

// Route53 returns Route 53's health check policy: failureThreshold
// consecutive failures make a healthy endpoint unhealthy and as many
// consecutive successes make an unhealthy one healthy (symmetric; Route 53's
// default is 3, also taken for 0; its range is 1–10). There is no served
// warning state (warning and critical thresholds are equal). The interval
// is 30s, or 10s with fast (Route 53's two choices), at a fixed schedule;
// the timeout is 6s (4s to connect plus 2s for the answer, which the HTTP
// prober enforces separately). A new endpoint is considered healthy until
// results say otherwise, as Route 53 does; fail-now counts as an ordinary
// failure.
func Route53(failureThreshold int, fast bool) Policy {
	if failureThreshold == 0 {
		failureThreshold = 3
	}
	p := DefaultPolicy()
	p.Interval = route53StandardInterval
	if fast {
		p.Interval = route53FastInterval
	}
	p.Timeout = 6 * time.Second
	p.WarningThreshold = failureThreshold
	p.CriticalThreshold = failureThreshold
	p.PassingThreshold = failureThreshold
	p.WarningExitThreshold = failureThreshold
	p.InitialState = Passing
	p.FailNowAsFailure = true
	p.Schedule = ScheduleEnvoy
	return p
}

// gdnsd's default thresholds, for Gdnsd.
const (
	gdnsdUpThresh   = 20
	gdnsdOkThresh   = 10
	gdnsdDownThresh = 10
)

// Gdnsd returns gdnsd's monitoring policy: a target that is up goes down
// after downThresh failures, counted while up and reset only by okThresh
// consecutive successes (failures accumulate across sparse successes); a
// target that is down comes up after upThresh consecutive successes
// (recovery in between); the first result applies at once. There is no
// served warning state. A 0 argument takes gdnsd's default (up_thresh 20,
// ok_thresh 10, down_thresh 10); the interval is 10s and the timeout 5s at
// a fixed schedule; fail-now counts as an ordinary failure. Negative
// values are passed through, so Validate rejects them.
func Gdnsd(upThresh, okThresh, downThresh int) Policy {
	for _, a := range []struct {
		v *int
		d int
	}{{&upThresh, gdnsdUpThresh}, {&okThresh, gdnsdOkThresh}, {&downThresh, gdnsdDownThresh}} {
		if *a.v == 0 {
			*a.v = a.d
		}
	}
	p := DefaultPolicy()
	p.Interval = 10 * time.Second
	p.Timeout = 5 * time.Second
	p.WarningThreshold = downThresh
	p.CriticalThreshold = downThresh
	p.PassingThreshold = upThresh
	p.WarningExitThreshold = 1
	p.FailureResetThreshold = okThresh
	p.InitialState = Critical
	p.FirstPassImmediate = true
	p.FailNowAsFailure = true
	p.Schedule = ScheduleEnvoy
	return p
}
