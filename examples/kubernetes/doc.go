// Command kubernetes is the heartbeat controller's GSLB as a Kubernetes
// controller: one per cluster, several replicas with one leader.
//
// Its gateways are the Services (type LoadBalancer) and Gateway API
// Gateways annotated gslb.gslbkit.io/service=<service>. It watches them,
// their EndpointSlices and the HTTPRoutes' backends with client-go
// informers, turns them into gateway verdicts (the health package's Gate),
// beats (heartbeat) and the CNAME topology (failover), and publishes the
// records (record) into the embedded zone served on -dns-addr, an RFC 2136
// primary or Route 53. See README.md.
//
//	go run ./examples/kubernetes -kubeconfig ~/.kube/config -cluster eu-1 \
//	    -clusters eu-1=eu-west,us-1=us-east -domain example.test \
//	    -heartbeat-secret "$(head -c32 /dev/urandom | base64)"
package main
