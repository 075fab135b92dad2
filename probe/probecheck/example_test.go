package probecheck_test

import (
	"fmt"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/probecheck"
)

// An Envoy Gateway healthCheck.active block (as JSON) becomes a Check on
// the Envoy preset, and its policy states its own detection bound.
func ExampleDecodeEnvoyGatewayActive() {
	c, err := probecheck.DecodeEnvoyGatewayActive([]byte(`{
		"type": "HTTP",
		"timeout": "1s",
		"interval": "3s",
		"unhealthyThreshold": 3,
		"healthyThreshold": 1,
		"http": {"path": "/healthz", "expectedStatuses": [200, 204]},
		"overrides": {"port": 9090}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := c.Policy
	fmt.Println(c.Type, c.HTTP.Path, c.HTTP.ExpectedStatuses, c.HTTP.Port)
	fmt.Println(p.InitialState, p.FirstPassImmediate, p.Schedule, p.WarningThreshold, p.CriticalThreshold, p.PassingThreshold)
	fmt.Println("worst-case detection:", probe.WorstCaseDetection(p))

	_, err = probecheck.DecodeEnvoyGatewayActive([]byte(`{"type":"TCP","tcp":{},"overrides":{"port":0}}`))
	fmt.Println(err)
	// Output:
	// HTTP /healthz 200,204 9090
	// critical true envoy 1 3 1
	// worst-case detection: 10.032s
	// probecheck: invalid check config: overrides.port = 0: allowed [1, 65535]
}
