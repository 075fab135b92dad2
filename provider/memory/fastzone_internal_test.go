package memory

import "testing"

// TestFastSourceReadsPlainLines: the lines zonegen and BIND write for the
// common types are read without falling back to the parser.
func TestFastSourceReadsPlainLines(t *testing.T) {
	const file = "$ORIGIN example.test.\n$TTL 300\n" +
		"@ IN SOA ns1.example.test. hostmaster.example.test. 1 3600 600 86400 300\n" +
		"@ IN NS ns1.example.test.\nns1 IN A 127.0.0.1\n\n" +
		"h0000001 IN A 10.0.0.1\nh0000001 60 IN A 10.128.0.1\n" +
		"h0000002\tIN\tAAAA\t2001:db8::2\n" +
		"h0000003 IN TXT \"v=spf1 ip4:10.0.0.3 -all\"\n" +
		"h0000004 IN CNAME h0000000.example.test.\n" +
		"*.w0000005 IN A 10.0.0.5\n" +
		"d0000006 IN NS ns.d0000006.example.test.\nns.d0000006 IN A 10.0.0.6"
	f := &fastSource{data: []byte(file), origin: "example.test."}
	n := 0
	for _, ok := f.next(); ok; _, ok = f.next() {
		n++
	}
	if f.bail || n != 11 || f.line() != 14 {
		t.Fatalf("bail %v after %d records, line %d", f.bail, n, f.line())
	}
}
