package health

import (
	"encoding/json"
	"github.com/gslbkit/gslb/internal/fielderr"
	"math"
	"time"

	"github.com/gslbkit/gslb/internal/jsontime"
)

// OutlierConfig configures passive health checking (outlier detection) the
// way Envoy does. DefaultOutlierConfig gives Envoy's defaults;
// EnvoyGatewayOutlierConfig gives Envoy Gateway's (interval 3 s). Start
// from one of them and change fields. In a config built by hand, a zero
// Interval, BaseEjectionTime, MinimumHosts or RequestVolume takes its
// default; the other zero values keep their meaning (a consecutive-failure
// rule of 0 is off, MaxEjectionTime 0 is max(300s, base), ...), so the zero
// OutlierConfig is a detector that ejects nothing. In JSON the durations
// are strings such as "30s".
type OutlierConfig struct {
	// Consecutive5xx ejects an endpoint after this many 5xx responses in a
	// row. 0 disables the rule; else 1–1000. Default 5.
	Consecutive5xx int `json:"consecutive5xx"`
	// ConsecutiveGatewayErrors ejects after this many 502, 503 or 504
	// responses in a row, when EnforceGatewayErrors is set. 0–1000;
	// default 5 (Envoy counts them but does not enforce by default).
	ConsecutiveGatewayErrors int `json:"consecutiveGatewayErrors"`
	// EnforceGatewayErrors turns the gateway-error rule on. Default false.
	EnforceGatewayErrors bool `json:"enforceGatewayErrors"`
	// ConsecutiveLocalOriginFailures ejects after this many local-origin
	// failures in a row (connect failures, timeouts, resets: no response).
	// They are counted apart from 5xx (Envoy's split mode). 0 disables;
	// else 1–1000. Default 5.
	ConsecutiveLocalOriginFailures int `json:"consecutiveLocalOriginFailures"`

	// Interval is how often Tick should run the analysis: returns,
	// multiplier decay, success-rate and failure-percentage ejection.
	// 1ms–1h. Default 10s (Envoy Gateway: 3s).
	Interval time.Duration `json:"interval"`
	// BaseEjectionTime is the first ejection's length; the n-th consecutive
	// ejection lasts n × base, capped at MaxEjectionTime. 1ms–24h.
	// Default 30s.
	BaseEjectionTime time.Duration `json:"baseEjectionTime"`
	// MaxEjectionTime caps an ejection. 0 means max(300s, BaseEjectionTime);
	// else BaseEjectionTime–24h. Default 0.
	MaxEjectionTime time.Duration `json:"maxEjectionTime"`
	// MaxEjectionPercent caps the share of endpoints ejected at once: an
	// ejection happens only if 100 × (ejected + 1) / total ≤ this. 0–100.
	// Default 10.
	MaxEjectionPercent float64 `json:"maxEjectionPercent"`
	// AlwaysEjectOne allows one ejection while none is in force, whatever
	// MaxEjectionPercent says. Default false.
	AlwaysEjectOne bool `json:"alwaysEjectOneEndpoint"`

	// SuccessRate configures statistical ejection by success rate.
	SuccessRate SuccessRateConfig `json:"successRate"`
	// FailurePercentage configures ejection by failure percentage.
	FailurePercentage FailurePercentageConfig `json:"failurePercentage"`
}

// SuccessRateConfig configures success-rate ejection: at each analysis,
// among endpoints with at least RequestVolume requests in the interval, and
// only if at least MinimumHosts qualify, those whose success rate is below
// mean − StdevFactor × stdev (population standard deviation) are ejected.
type SuccessRateConfig struct {
	// Enforce turns the rule on. Default true.
	Enforce bool `json:"enforce"`
	// MinimumHosts is how many endpoints must qualify, 1–100000. Default 5.
	MinimumHosts int `json:"minimumHosts"`
	// RequestVolume is the requests an endpoint needs in the interval to
	// qualify, 1–10000000. Default 100.
	RequestVolume int `json:"requestVolume"`
	// StdevFactor multiplies the standard deviation, 0–100. Default 1.9.
	StdevFactor float64 `json:"stdevFactor"`
}

// FailurePercentageConfig configures failure-percentage ejection: among
// endpoints with at least RequestVolume requests in the interval, and only if
// at least MinimumHosts qualify, those with 100 − success rate ≥ Threshold
// are ejected.
type FailurePercentageConfig struct {
	// Enforce turns the rule on. Default false.
	Enforce bool `json:"enforce"`
	// Threshold is the failure percentage that ejects, 0–100. Default 85.
	Threshold float64 `json:"threshold"`
	// MinimumHosts is how many endpoints must qualify, 1–100000. Default 5.
	MinimumHosts int `json:"minimumHosts"`
	// RequestVolume is the requests an endpoint needs in the interval,
	// 1–10000000. Default 50.
	RequestVolume int `json:"requestVolume"`
}

// DefaultOutlierConfig returns Envoy's outlier-detection defaults.
func DefaultOutlierConfig() OutlierConfig {
	return OutlierConfig{
		Consecutive5xx:                 5,
		ConsecutiveGatewayErrors:       5,
		ConsecutiveLocalOriginFailures: 5,
		Interval:                       10 * time.Second,
		BaseEjectionTime:               30 * time.Second,
		MaxEjectionPercent:             10,
		SuccessRate:                    SuccessRateConfig{Enforce: true, MinimumHosts: 5, RequestVolume: 100, StdevFactor: 1.9},
		FailurePercentage:              FailurePercentageConfig{Threshold: 85, MinimumHosts: 5, RequestVolume: 50},
	}
}

// EnvoyGatewayOutlierConfig returns the defaults a config decoded from
// Envoy Gateway's passive health check block starts from: Envoy's, with
// an analysis interval of 3 s.
func EnvoyGatewayOutlierConfig() OutlierConfig {
	c := DefaultOutlierConfig()
	c.Interval = 3 * time.Second
	return c
}

// MaxEjection returns the effective cap on an ejection's length.
func (c OutlierConfig) MaxEjection() time.Duration {
	c = c.withDefaults()
	if c.MaxEjectionTime > 0 {
		return c.MaxEjectionTime
	}
	return max(300*time.Second, c.BaseEjectionTime)
}

// withDefaults fills the zero fields that take a default.
func (c OutlierConfig) withDefaults() OutlierConfig {
	d := DefaultOutlierConfig()
	if c.Interval == 0 {
		c.Interval = d.Interval
	}
	if c.BaseEjectionTime == 0 {
		c.BaseEjectionTime = d.BaseEjectionTime
	}
	if c.SuccessRate.MinimumHosts == 0 {
		c.SuccessRate.MinimumHosts = d.SuccessRate.MinimumHosts
	}
	if c.SuccessRate.RequestVolume == 0 {
		c.SuccessRate.RequestVolume = d.SuccessRate.RequestVolume
	}
	if c.FailurePercentage.MinimumHosts == 0 {
		c.FailurePercentage.MinimumHosts = d.FailurePercentage.MinimumHosts
	}
	if c.FailurePercentage.RequestVolume == 0 {
		c.FailurePercentage.RequestVolume = d.FailurePercentage.RequestVolume
	}
	return c
}

// outlierJSON is OutlierConfig's JSON form, with duration strings.
type outlierJSON struct {
	plainOutlier
	Interval         jsontime.Duration `json:"interval"`
	BaseEjectionTime jsontime.Duration `json:"baseEjectionTime"`
	MaxEjectionTime  jsontime.Duration `json:"maxEjectionTime"`
}

type plainOutlier OutlierConfig

// MarshalJSON writes the durations as strings such as "30s".
func (c OutlierConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(outlierJSON{plainOutlier(c), jsontime.Duration(c.Interval), jsontime.Duration(c.BaseEjectionTime), jsontime.Duration(c.MaxEjectionTime)})
}

// UnmarshalJSON reads the durations as strings such as "30s" or numbers of
// seconds; absent fields keep their values.
func (c *OutlierConfig) UnmarshalJSON(b []byte) error {
	j := outlierJSON{plainOutlier(*c), jsontime.Duration(c.Interval), jsontime.Duration(c.BaseEjectionTime), jsontime.Duration(c.MaxEjectionTime)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = OutlierConfig(j.plainOutlier)
	c.Interval, c.BaseEjectionTime, c.MaxEjectionTime = j.Interval.D(), j.BaseEjectionTime.D(), j.MaxEjectionTime.D()
	return nil
}

// Validate reports the first field out of range as a *FieldError naming
// field, value and range (zero fields that take a default take it first).
func (c OutlierConfig) Validate() error {
	c = c.withDefaults()
	bad := fieldErr
	switch {
	case c.Consecutive5xx < 0 || c.Consecutive5xx > 1000:
		return bad("consecutive5xx", c.Consecutive5xx, fielderr.Range(0, 1000)+" (0: off)")
	case c.ConsecutiveGatewayErrors < 0 || c.ConsecutiveGatewayErrors > 1000:
		return bad("consecutiveGatewayErrors", c.ConsecutiveGatewayErrors, fielderr.Range(0, 1000)+" (0: off)")
	case c.ConsecutiveLocalOriginFailures < 0 || c.ConsecutiveLocalOriginFailures > 1000:
		return bad("consecutiveLocalOriginFailures", c.ConsecutiveLocalOriginFailures, fielderr.Range(0, 1000)+" (0: off)")
	case c.Interval < time.Millisecond || c.Interval > time.Hour:
		return bad("interval", c.Interval, fielderr.DurationRange(time.Millisecond, time.Hour))
	case c.BaseEjectionTime < time.Millisecond || c.BaseEjectionTime > 24*time.Hour:
		return bad("baseEjectionTime", c.BaseEjectionTime, fielderr.DurationRange(time.Millisecond, 24*time.Hour))
	case c.MaxEjectionTime != 0 && (c.MaxEjectionTime < c.BaseEjectionTime || c.MaxEjectionTime > 24*time.Hour):
		return bad("maxEjectionTime", c.MaxEjectionTime, "[baseEjectionTime ("+fielderr.Duration(c.BaseEjectionTime)+"), 24h], or 0 for max(5m, baseEjectionTime)")
	case !(c.MaxEjectionPercent >= 0 && c.MaxEjectionPercent <= 100):
		return bad("maxEjectionPercent", c.MaxEjectionPercent, fielderr.Range(0, 100))
	case c.SuccessRate.MinimumHosts < 1 || c.SuccessRate.MinimumHosts > 100000:
		return bad("successRate.minimumHosts", c.SuccessRate.MinimumHosts, fielderr.Range(1, 100000))
	case c.SuccessRate.RequestVolume < 1 || c.SuccessRate.RequestVolume > 10000000:
		return bad("successRate.requestVolume", c.SuccessRate.RequestVolume, fielderr.Range(1, 10000000))
	case !(c.SuccessRate.StdevFactor >= 0 && c.SuccessRate.StdevFactor <= 100):
		return bad("successRate.stdevFactor", c.SuccessRate.StdevFactor, fielderr.Range(0, 100))
	case !(c.FailurePercentage.Threshold >= 0 && c.FailurePercentage.Threshold <= 100):
		return bad("failurePercentage.threshold", c.FailurePercentage.Threshold, fielderr.Range(0, 100))
	case c.FailurePercentage.MinimumHosts < 1 || c.FailurePercentage.MinimumHosts > 100000:
		return bad("failurePercentage.minimumHosts", c.FailurePercentage.MinimumHosts, fielderr.Range(1, 100000))
	case c.FailurePercentage.RequestVolume < 1 || c.FailurePercentage.RequestVolume > 10000000:
		return bad("failurePercentage.requestVolume", c.FailurePercentage.RequestVolume, fielderr.Range(1, 10000000))
	}
	return nil
}

// envoyGatewayPassive is the shape of Envoy Gateway's
// BackendTrafficPolicy healthCheck.passive block.
type envoyGatewayPassive struct {
	SplitExternalLocalOriginErrors *bool              `json:"splitExternalLocalOriginErrors"`
	Interval                       *jsontime.Duration `json:"interval"`
	ConsecutiveLocalOriginFailures *int               `json:"consecutiveLocalOriginFailures"`
	ConsecutiveGatewayErrors       *int               `json:"consecutiveGatewayErrors"`
	Consecutive5XxErrors           *int               `json:"consecutive5XxErrors"`
	BaseEjectionTime               *jsontime.Duration `json:"baseEjectionTime"`
	MaxEjectionPercent             *float64           `json:"maxEjectionPercent"`
	AlwaysEjectOneEndpoint         *bool              `json:"alwaysEjectOneEndpoint"`
}

// DecodeEnvoyGatewayPassive decodes an Envoy Gateway healthCheck.passive
// block (JSON; YAML through a YAML-to-JSON converter) onto
// EnvoyGatewayOutlierConfig and validates the result. Unknown fields are
// an error. A consecutiveGatewayErrors value turns that rule on.
func DecodeEnvoyGatewayPassive(data []byte) (OutlierConfig, error) {
	var in envoyGatewayPassive
	dec := json.NewDecoder(bytesReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return OutlierConfig{}, fieldErr("passive", err, "an Envoy Gateway healthCheck.passive block (JSON, known fields only)")
	}
	c := EnvoyGatewayOutlierConfig()
	if in.Interval != nil {
		if in.Interval.D() <= 0 {
			return OutlierConfig{}, fieldErr("interval", in.Interval.D(), fielderr.DurationRange(time.Millisecond, time.Hour))
		}
		c.Interval = in.Interval.D()
	}
	if in.ConsecutiveLocalOriginFailures != nil {
		c.ConsecutiveLocalOriginFailures = *in.ConsecutiveLocalOriginFailures
	}
	if in.ConsecutiveGatewayErrors != nil {
		c.ConsecutiveGatewayErrors = *in.ConsecutiveGatewayErrors
		c.EnforceGatewayErrors = *in.ConsecutiveGatewayErrors > 0
	}
	if in.Consecutive5XxErrors != nil {
		c.Consecutive5xx = *in.Consecutive5XxErrors
	}
	if in.BaseEjectionTime != nil {
		if in.BaseEjectionTime.D() <= 0 {
			return OutlierConfig{}, fieldErr("baseEjectionTime", in.BaseEjectionTime.D(), fielderr.DurationRange(time.Millisecond, 24*time.Hour))
		}
		c.BaseEjectionTime = in.BaseEjectionTime.D()
	}
	if in.MaxEjectionPercent != nil {
		if math.IsNaN(*in.MaxEjectionPercent) {
			return OutlierConfig{}, &FieldError{Path: "maxEjectionPercent", Value: "NaN", Allowed: fielderr.Range(0, 100), Err: ErrInvalidConfig}
		}
		c.MaxEjectionPercent = *in.MaxEjectionPercent
	}
	if in.AlwaysEjectOneEndpoint != nil {
		c.AlwaysEjectOne = *in.AlwaysEjectOneEndpoint
	}
	if err := c.Validate(); err != nil {
		return OutlierConfig{}, err
	}
	return c, nil
}
