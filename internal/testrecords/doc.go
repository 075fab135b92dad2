// Package testrecords holds the record helpers that the tests of stores
// (provider/rfc2136, provider/route53, package record) and record's test
// kits (record/fencetest, record/replacetest) share: the records of a zone
// at one name and type with their data sorted (At, Data), and the records
// those tests write, with the TTL TTL (Address, Fence). It also holds the
// zones the answer tests of provider/memory, provider/dnsserver,
// provider/zonetransfer and provider/replication build their stores from
// (FastPath, Chains, written with Load): records only, so that memory's own
// in-package tests can use them too. Tests only.
package testrecords
