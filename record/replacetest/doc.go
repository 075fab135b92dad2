// Package replacetest is the test kit for record.Replacer implementations:
// a store that deletes some records and sets others in one atomic write.
// Check and Run play, against a real store, the scenario a Reconciler
// relies on when a name switches type: records set and read back, one
// ReplaceRecords switching a name from an address set to a CNAME and back
// (deleting another name and keeping a third in the same call, and
// replacing an RRset both deleted and set), an empty call changing
// nothing, and a record.Reconciler switching a name from A to CNAME and
// back in exactly one write each time. While each switch runs, a reader
// reads the zone again and again; a read that finds the name with neither
// its old RRset nor its new one, or with both, fails the scenario: that is
// how a store doing the deletions and the sets in two writes is caught.
//
// provider/rfc2136 (against a real BIND), provider/route53 (against a fake
// and moto) and provider/cloudflare (against a fake) pass it. See Example
// for a store that passes and one that writes twice.
package replacetest
