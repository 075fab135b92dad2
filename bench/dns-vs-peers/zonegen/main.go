// Command zonegen writes the scale run's zone and query files (see
// bench/dns-vs-peers/scale.sh):
//
//	zonegen -names N -queries Q -dir DIR
//
// DIR/scale.zone holds example.test. with N names below the apex, in 20
// kinds by name number: 10 of 20 hold 1–2 A records, 3 an AAAA record, 2 a
// TXT record, 3 a CNAME to an address name, 1 is a wildcard "*.w…" with an
// A record, 1 a delegation "d…" with its NS record and glue. DIR/empty.zone
// is the same zone with no names (the empty server's RSS). DIR/uniform.txt
// and DIR/zipf.txt hold Q dnsperf queries each, asking the names'
// own types (a random label under each wildcard, a name below each
// delegation) plus 5 % names that do not exist: uniform over the names,
// and Zipf-like (s = 1.1 over a random permutation of the names, so the
// popular ones are spread over the zone). DIR/changes.txt lists 1,000
// changes for the IXFR run, one per line: "name ttl A address" (the name's
// A RRset replaced by that one address).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	names := flag.Int("names", 10000, "names below the apex")
	queries := flag.Int("queries", 1000000, "queries per query file")
	dir := flag.String("dir", ".", "output directory")
	flag.Parse()
	if *names < 2000 || *queries < 1 {
		log.Fatal("zonegen: -names must be at least 2000 and -queries at least 1")
	}
	if err := run(*dir, *names, *queries); err != nil {
		log.Fatal(err)
	}
}

// kind is a name's kind, from its number.
func kind(i int) string {
	switch k := i % 20; {
	case k < 10:
		return "a"
	case k < 13:
		return "aaaa"
	case k < 15:
		return "txt"
	case k < 18:
		return "cname"
	case k == 18:
		return "wild"
	default:
		return "deleg"
	}
}

func owner(i int) string {
	switch kind(i) {
	case "wild":
		return fmt.Sprintf("*.w%07d", i)
	case "deleg":
		return fmt.Sprintf("d%07d", i)
	}
	return fmt.Sprintf("h%07d", i)
}

const head = "$ORIGIN example.test.\n$TTL 300\n" +
	"@ IN SOA ns1.example.test. hostmaster.example.test. 1 3600 600 86400 300\n" +
	"@ IN NS ns1.example.test.\nns1 IN A 127.0.0.1\n"

func create(dir, name string) (*os.File, *bufio.Writer, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, nil, err
	}
	return f, bufio.NewWriterSize(f, 1<<20), nil
}

func closeAll(f *os.File, w *bufio.Writer) error {
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func run(dir string, n, q int) error {
	if err := os.WriteFile(filepath.Join(dir, "empty.zone"), []byte(head), 0o644); err != nil {
		return err
	}
	f, w, err := create(dir, "scale.zone")
	if err != nil {
		return err
	}
	w.WriteString(head)
	records := 2
	for i := range n {
		o := owner(i)
		a := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		switch kind(i) {
		case "a":
			fmt.Fprintf(w, "%s IN A %s\n", o, a)
			records++
			if i%2 == 0 {
				fmt.Fprintf(w, "%s IN A 10.%d.%d.%d\n", o, 128+i>>16&127, i>>8&255, i&255)
				records++
			}
		case "aaaa":
			fmt.Fprintf(w, "%s IN AAAA 2001:db8::%x:%x\n", o, i>>16, i&0xffff)
			records++
		case "txt":
			fmt.Fprintf(w, "%s IN TXT \"v=spf1 ip4:%s -all\"\n", o, a)
			records++
		case "cname":
			fmt.Fprintf(w, "%s IN CNAME h%07d.example.test.\n", o, i-i%20) // kind "a"
			records++
		case "wild":
			fmt.Fprintf(w, "%s IN A %s\n", o, a)
			records++
		case "deleg":
			fmt.Fprintf(w, "%s IN NS ns.%s.example.test.\nns.%s IN A %s\n", o, o, o, a)
			records += 2
		}
	}
	if err := closeAll(f, w); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(uint64(n), 7))
	perm := r.Perm(n)
	zipf := rand.NewZipf(r, 1.1, 1, uint64(n-1))
	for _, spread := range []string{"uniform", "zipf"} {
		f, w, err := create(dir, spread+".txt")
		if err != nil {
			return err
		}
		for range q {
			if r.IntN(20) == 0 {
				fmt.Fprintf(w, "nx%08d.example.test A\n", r.IntN(100000000))
				continue
			}
			var i int
			if spread == "uniform" {
				i = r.IntN(n)
			} else {
				i = perm[zipf.Uint64()]
			}
			switch kind(i) {
			case "a", "cname":
				fmt.Fprintf(w, "h%07d.example.test A\n", i)
			case "aaaa":
				fmt.Fprintf(w, "h%07d.example.test AAAA\n", i)
			case "txt":
				fmt.Fprintf(w, "h%07d.example.test TXT\n", i)
			case "wild":
				fmt.Fprintf(w, "q%d.w%07d.example.test A\n", r.IntN(1000), i)
			case "deleg":
				fmt.Fprintf(w, "www.d%07d.example.test A\n", i)
			}
		}
		if err := closeAll(f, w); err != nil {
			return err
		}
	}
	f, w, err = create(dir, "changes.txt")
	if err != nil {
		return err
	}
	for j := range 1000 {
		k := j * (n / 2 / 1000) // the k-th name of kind "a"
		i := k/10*20 + k%10
		fmt.Fprintf(w, "h%07d 300 A 172.16.%d.%d\n", i, j>>8, j&255)
	}
	if err := closeAll(f, w); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "records"), fmt.Appendf(nil, "%d\n", records), 0o644)
}
