// Package testmoto runs moto_server, a Route 53 emulator (pip install
// 'moto[server]'), for tests: Start runs it on a free loopback port, waits
// until its API answers, points the AWS SDK's environment at it with Env
// (test credentials, no shared config files, no instance metadata; fakes
// of the API use Env too) and stops it when the test ends; Server.Provider
// creates a hosted zone and returns a provider/route53 Provider for it.
// Where moto_server is missing the test is skipped with a message, unless
// GSLBKIT_REQUIRE_MOTO=1 (CI sets it), which makes that a failure.
package testmoto
