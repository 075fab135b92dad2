// Package dnsname normalises and checks DNS names the same way in every
// package: lower case, fully qualified (trailing dot), labels of 1–63 bytes,
// names of at most 253 characters (255 octets on the wire).
package dnsname
