module github.com/gslbkit/gslb/provider/conformance

go 1.26.0

// The library under test, from this repository. Only this module moves to
// libdns v1.2.0-alpha.1 (the first release that ships libdnstest); the
// library and its adopters stay on the released v1.1.1.
replace github.com/gslbkit/gslb => ../..

require (
	github.com/gslbkit/gslb v0.0.0
	github.com/libdns/cloudflare v0.2.2
	github.com/libdns/libdns v1.2.0-alpha.1
	github.com/miekg/dns v1.1.73
	go.uber.org/goleak v1.3.0
)

require (
	github.com/aws/aws-sdk-go-v2 v1.39.1 // indirect
	github.com/aws/aws-sdk-go-v2/config v1.31.10 // indirect
	github.com/aws/aws-sdk-go-v2/credentials v1.18.14 // indirect
	github.com/aws/aws-sdk-go-v2/feature/ec2/imds v1.18.8 // indirect
	github.com/aws/aws-sdk-go-v2/internal/configsources v1.4.8 // indirect
	github.com/aws/aws-sdk-go-v2/internal/endpoints/v2 v2.7.8 // indirect
	github.com/aws/aws-sdk-go-v2/internal/ini v1.8.3 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding v1.13.1 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/presigned-url v1.13.8 // indirect
	github.com/aws/aws-sdk-go-v2/service/route53 v1.58.3 // indirect
	github.com/aws/aws-sdk-go-v2/service/sso v1.29.4 // indirect
	github.com/aws/aws-sdk-go-v2/service/ssooidc v1.35.0 // indirect
	github.com/aws/aws-sdk-go-v2/service/sts v1.38.5 // indirect
	github.com/aws/smithy-go v1.23.0 // indirect
	github.com/libdns/rfc2136 v1.0.1 // indirect
	github.com/libdns/route53 v1.6.2 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)
