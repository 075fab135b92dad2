package route53_test

import (
	"errors"
	"fmt"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/provider/route53"
)

// Configuration comes from the usual AWS variables; a throttling answer
// from Route 53 is classified so callers back off.
func Example() {
	env := map[string]string{"AWS_REGION": "us-east-1", "GSLB_ROUTE53_HOSTED_ZONE_ID": "Z0123456789ABC"}
	cfg := route53.DefaultConfig().FromEnv(func(k string) string { return env[k] })
	if _, err := route53.New(cfg); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Region, cfg.HostedZoneID, cfg.MaxAttempts)

	err := route53.WrapError("SetRecords", "example.com.", throttling{})
	fmt.Println(errclass.Of(err), route53.ErrorCode(err), errors.Is(err, throttling{}))
	// Output:
	// us-east-1 Z0123456789ABC 1
	// throttled Throttling true
}

// throttling has the shape of the AWS SDK's API error for Route 53's
// <Code>Throttling</Code> answer.
type throttling struct{}

func (throttling) Error() string     { return "Rate exceeded" }
func (throttling) ErrorCode() string { return "Throttling" }
