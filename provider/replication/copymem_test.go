package replication

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
)

// The memory of copies: how far saving, loading, serving and fetching a
// replica copy raise the process's peak RSS above the steady RSS of the
// copy ("apply" takes a snapshot over a held copy, which stays until the
// new one is built: about twice the copy is expected there). Run only when GSLBKIT_COPY_MEMORY lists record counts, e.g.
//
//	GSLBKIT_COPY_MEMORY=100000,1000000 go test ./provider/replication/ -run TestCopyMemory -v -timeout 30m
//
// Each phase runs in a child process (this test binary again), so each
// peak is its own: the child builds or loads the copy, collects garbage,
// returns freed memory to the OS (debug.FreeOSMemory), reads VmRSS as the
// steady memory, resets the kernel's peak (writing 5 to
// /proc/self/clear_refs), runs the phase and reads VmHWM as the peak. The
// peak RSS is what a host's memory has to hold; Go's heap figures are
// printed beside it. GOGC is left at its default and GOMEMLIMIT unset
// unless the caller's environment sets them (the child inherits them).
// The test only reports; it asserts nothing about the figures.
func TestCopyMemory(t *testing.T) {
	sizes := os.Getenv("GSLBKIT_COPY_MEMORY")
	if sizes == "" {
		t.Skip("set GSLBKIT_COPY_MEMORY=100000,1000000 to measure the memory of copies (Linux)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	t.Logf("GOGC=%q GOMEMLIMIT=%q GOMAXPROCS=%d", os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"), runtime.GOMAXPROCS(0))
	t.Logf("%-9s %-6s %10s %10s %7s %9s %9s %10s %10s", "records", "phase", "steady MiB", "peak MiB", "ratio", "wall s", "CPU s", "heap MiB", "file MiB")
	var curves []string
	defer func() {
		for _, c := range curves {
			t.Log(c)
		}
	}()
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("GSLBKIT_COPY_MEMORY: %q is not a record count", f)
		}
		dir := t.TempDir()
		for _, phase := range []string{"serve", "save", "load", "fetch", "apply"} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestCopyMemoryChild$", "-test.v")
			cmd.Env = append(os.Environ(), "GSLBKIT_COPY_CHILD="+phase, "GSLBKIT_COPY_N="+strconv.Itoa(n), "GSLBKIT_COPY_DIR="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%d records, %s: %v\n%s", n, phase, err, out)
			}
			var m copyMeasure
			for _, line := range strings.Split(string(out), "\n") {
				if j, ok := strings.CutPrefix(strings.TrimSpace(line), "COPYMEM "); ok {
					if err := json.Unmarshal([]byte(j), &m); err != nil {
						t.Fatal(err)
					}
				}
			}
			if m.Phase == "" {
				t.Fatalf("%d records, %s: no measurement\n%s", n, phase, out)
			}
			t.Logf("%-9d %-6s %10.1f %10.1f %7.3f %9.2f %9.2f %10.1f %10.1f", n, phase, mib(m.SteadyRSS), mib(m.PeakRSS), float64(m.PeakRSS)/float64(m.SteadyRSS), m.Seconds, m.CPU, mib(m.SteadyHeap), mib(m.FileBytes))
			curves = append(curves, fmt.Sprintf("%-9d %-6s RSS MiB during the phase: %v", n, phase, m.Curve))
		}
	}
}

type copyMeasure struct {
	Phase      string
	Records    int
	SteadyRSS  int64   // bytes, VmRSS with the copy held, after GC
	PeakRSS    int64   // bytes, VmHWM during the phase (after the steady reading)
	SteadyHeap int64   // bytes, HeapAlloc with the copy held, after GC
	Seconds    float64 // wall time of the phase
	CPU        float64 // user + system CPU seconds of the phase
	FileBytes  int64
	Curve      []int64 // the RSS during the phase, MiB, at most 16 points (the highest of each slice of time)
}

// sampleRSS reads VmRSS every 20 ms until stop is closed, then sends the
// readings.
func sampleRSS(stop <-chan struct{}, out chan<- []int64) {
	var rss []int64
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		v, _ := readStatus("VmRSS")
		rss = append(rss, v>>20)
		select {
		case <-stop:
			out <- rss
			return
		case <-tick.C:
		}
	}
}

// curve keeps at most n points of rss, the highest of each slice.
func curve(rss []int64, n int) []int64 {
	if len(rss) <= n {
		return rss
	}
	out := make([]int64, n)
	for i := range n {
		lo, hi := i*len(rss)/n, (i+1)*len(rss)/n
		for _, v := range rss[lo:hi] {
			out[i] = max(out[i], v)
		}
	}
	return out
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

const copyMemSecret = "copy-memory-secret-0123456789"

// TestCopyMemoryChild is one phase of TestCopyMemory, in its own process.
func TestCopyMemoryChild(t *testing.T) {
	phase := os.Getenv("GSLBKIT_COPY_CHILD")
	if phase == "" {
		t.Skip("a child of TestCopyMemory")
	}
	n, _ := strconv.Atoi(os.Getenv("GSLBKIT_COPY_N"))
	dir := os.Getenv("GSLBKIT_COPY_DIR")
	body := filepath.Join(dir, "snapshot.json")
	m := copyMeasure{Phase: phase, Records: n}
	ctx := context.Background()
	cfg := DefaultReplicaConfig()
	cfg.URL, cfg.Zones, cfg.Auth.Secret = "http://127.0.0.1:1/replication", []string{copyMemZone}, copyMemSecret
	cfg.MaxBody, cfg.Timeout = 1<<30, 10*time.Minute
	var start time.Time
	var cpu0 float64
	stop, samples := make(chan struct{}), make(chan []int64, 1)
	begin := func() { // the copy is held: steady, then the peak starts over
		m.SteadyRSS, m.SteadyHeap = steady(t)
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			t.Fatalf("resetting the peak RSS: %v", err)
		}
		start, cpu0 = time.Now(), cpuSeconds()
		go sampleRSS(stop, samples)
	}
	end := func() {
		m.Seconds, m.CPU = time.Since(start).Seconds(), cpuSeconds()-cpu0
		m.PeakRSS = procStatus(t, "VmHWM")
		close(stop)
		m.Curve = curve(<-samples, 16)
	}
	switch phase {
	case "serve": // the source writes a signed snapshot reply (to a file)
		src := copyMemSource(t, n)
		h, err := NewHandler(src, HandlerConfig{Secret: copyMemSecret}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(body)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, "/replication/snapshot", nil)
		HandlerConfig{Secret: copyMemSecret}.SignRequest(req)
		w := &fileResponse{f: bufio.NewWriterSize(f, 64<<10), h: http.Header{}}
		begin()
		h.ServeHTTP(w, req)
		end()
		if err := w.f.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if fi, err := os.Stat(body); err == nil {
			m.FileBytes = fi.Size()
		}
	case "save": // a replica holding the copy saves it to Dir
		src := copyMemSource(t, n)
		cfg.Dir = dir
		r, err := NewReplica(src, cfg, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		begin()
		r.save(src.Version(), src.Epoch())
		end()
		if err := r.Status().SaveErr; err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(dir, copyFile)); err == nil {
			m.FileBytes = fi.Size()
		}
	case "load": // a replica starts from the saved copy
		local := new(memory.Provider)
		cfg.Dir = dir
		begin() // steady of an empty process here; the copy's below
		r, err := NewReplica(local, cfg, nil, nil, nil)
		end()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Status().LoadErr; err != nil {
			t.Fatal(err)
		}
		m.SteadyRSS, m.SteadyHeap = steady(t)
		copyMemCheck(t, local, n)
	case "fetch": // an empty replica takes the snapshot the source served
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			serveSignedFile(t, w, req, body)
		}))
		defer srv.Close()
		cfg.URL = srv.URL + "/replication"
		local := new(memory.Provider)
		r, err := NewReplica(local, cfg, srv.Client(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		begin()
		r.syncOnce(ctx)
		end()
		if err := r.Status().LastErr; err != nil {
			t.Fatal(err)
		}
		m.SteadyRSS, m.SteadyHeap = steady(t)
		copyMemCheck(t, local, n)
	case "apply": // a replica holding the saved copy takes the served one over it
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			serveSignedFile(t, w, req, body)
		}))
		defer srv.Close()
		cfg.URL, cfg.Dir = srv.URL+"/replication", dir
		local := new(memory.Provider)
		r, err := NewReplica(local, cfg, srv.Client(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		r.st.Synced = false // take a whole snapshot, the old copy answering meanwhile
		r.mu.Unlock()
		r.cfg.Dir = "" // measure the apply, not a save after it
		begin()
		r.syncOnce(ctx)
		end()
		if err := r.Status().LastErr; err != nil {
			t.Fatal(err)
		}
		copyMemCheck(t, local, n)
	default:
		t.Fatalf("unknown phase %q", phase)
	}
	j, _ := json.Marshal(m)
	fmt.Printf("COPYMEM %s\n", j)
}

const copyMemZone = "big.test."

// copyMemSource returns a Provider holding one zone of n records, a mix of
// A (40 %), AAAA (25 %), TXT (20 %) and CNAME (15 %), one owner name each.
func copyMemSource(t testing.TB, n int) *memory.Provider {
	zs := memory.ZoneSnapshot{Name: copyMemZone, SOA: memory.SOA{NS: "ns1." + copyMemZone, Mbox: "hostmaster." + copyMemZone, Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minimum: 60, TTL: 3600}}
	zs.Records = make([]memory.ZoneRecord, 0, n)
	for i := range n {
		r := memory.ZoneRecord{Name: fmt.Sprintf("h%07d", i), TTL: 300}
		switch i % 20 {
		case 0, 1, 2, 3, 4, 5, 6, 7:
			r.Type, r.Data = "A", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		case 8, 9, 10, 11, 12:
			r.Type, r.Data = "AAAA", fmt.Sprintf("2001:db8::%x:%x", i>>16, i&0xffff)
		case 13, 14, 15, 16:
			r.Type, r.Data = "TXT", fmt.Sprintf("v=spf1 ip4:10.%d.%d.0/24 -all", i>>16&255, i>>8&255)
		default:
			r.Type, r.Data = "CNAME", fmt.Sprintf("h%07d.%s", (i+1)%n, copyMemZone)
		}
		zs.Records = append(zs.Records, r)
	}
	p := new(memory.Provider)
	if err := p.Restore(memory.Snapshot{Zones: []memory.ZoneSnapshot{zs}}); err != nil {
		t.Fatal(err)
	}
	return p
}

func copyMemCheck(t *testing.T, p *memory.Provider, n int) {
	recs, err := p.GetRecords(context.Background(), copyMemZone)
	if err != nil || len(recs) != n {
		t.Fatalf("the copy holds %d records (%v), want %d", len(recs), err, n)
	}
}

// steady collects garbage, returns free memory to the OS and reads the RSS
// and the live heap.
func steady(t *testing.T) (rss, heap int64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return procStatus(t, "VmRSS"), int64(ms.HeapAlloc)
}

func procStatus(t *testing.T, field string) int64 {
	v, err := readStatus(field)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// readStatus reads a field of /proc/self/status in bytes.
func readStatus(field string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// fileResponse is a ResponseWriter that writes the body to a file.
type fileResponse struct {
	f    *bufio.Writer
	h    http.Header
	code int
}

func (w *fileResponse) Header() http.Header         { return w.h }
func (w *fileResponse) WriteHeader(code int)        { w.code = code }
func (w *fileResponse) Write(p []byte) (int, error) { return w.f.Write(p) }

// serveSignedFile answers a signed request with the file at path, signed
// for its nonce, reading the file twice rather than holding it.
func serveSignedFile(t *testing.T, w http.ResponseWriter, req *http.Request, path string) {
	auth := HandlerConfig{Secret: copyMemSecret}
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		http.Error(w, err.Error(), 500)
		return
	}
	defer f.Close()
	mac := replyMAC(auth.Secret, req.Header.Get(NonceHeader))
	size, _ := io.Copy(mac, f)
	w.Header().Set(SignatureHeader, fmt.Sprintf("%x", mac.Sum(nil)))
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	_, _ = f.Seek(0, 0)
	_, _ = io.Copy(w, f)
}
