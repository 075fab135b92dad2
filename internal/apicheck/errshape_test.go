package apicheck

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
	"github.com/gslbkit/gslb/health"
	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/dnsprobe"
	"github.com/gslbkit/gslb/probe/grpcprobe"
	"github.com/gslbkit/gslb/probe/probecheck"
	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
	"github.com/gslbkit/gslb/record"
)

// TestValidateErrorShape keeps the one way to say a bad config: for one
// invalid value of every exported Validate in these packages, the error is
// a *fielderr.Error whose message is "<pkg>: invalid <config>: <path> =
// <value>: allowed <what>", the prefix being its sentinel's text.
func TestValidateErrorShape(t *testing.T) {
	for _, c := range []struct {
		name, prefix string
		err          error
	}{
		{"health.AddressConfig", "health: ", health.AddressConfig{Refresh: time.Nanosecond}.Validate()},
		{"health.OutlierConfig", "health: ", health.OutlierConfig{Consecutive5xx: -1}.Validate()},
		{"health.Panic", "health: ", health.Panic{Threshold: -5}.Validate()},
		{"heartbeat.Config", "heartbeat: ", heartbeat.Config{Prefix: "-"}.Validate()},
		{"heartbeat.ReaderConfig", "heartbeat: ", heartbeat.ReaderConfig{Scope: 9}.Validate()},
		{"heartbeat.Rules", "heartbeat: ", heartbeat.Rules{SkewTolerance: -time.Second}.Validate()},
		{"heartbeat.Key", "heartbeat: ", heartbeat.Key{ID: "k1"}.Validate()},
		{"heartbeat.Beat", "heartbeat: ", heartbeat.Beat{Cluster: "a;b"}.Validate()},
		{"probe.Policy", "probe: ", probe.Policy{Interval: -time.Second}.Validate()},
		{"probe.HTTPConfig", "probe: ", probe.HTTPConfig{Method: "BREW"}.Validate()},
		{"probe.TCPConfig", "probe: ", probe.TCPConfig{Send: &probe.Payload{Type: "Base32"}}.Validate()},
		{"probe.TLSConfig", "probe: ", (&probe.TLSConfig{CertFile: "c.pem"}).Validate()},
		{"probe.MonitorConfig", "probe: ", probe.MonitorConfig{Concurrency: -1}.Validate()},
		{"probe.Shard", "probe: ", probe.Shard{Count: -1}.Validate()},
		{"probe.Payload", "probe: ", probe.Payload{}.Validate()},
		{"dnsprobe.Config", "dnsprobe: ", dnsprobe.Config{}.Validate()},
		{"grpcprobe.Config", "grpcprobe: ", grpcprobe.Config{Port: -1}.Validate()},
		{"probecheck.Spec", "probecheck: ", probecheck.Spec{Type: "carrier-pigeon"}.Validate()},
		{"failover.RecordConfig", "failover: ", failover.RecordConfig{PoolLabel: "a.b"}.Validate()},
		{"failover.TopologyConfig", "failover: ", failover.TopologyConfig{}.Validate()},
		{"failover.Strategy", "failover: ", failover.Strategy{Kind: 200}.Validate()},
		{"failover.GeoMap", "failover: ", failover.GeoMap{Prefixes: map[netip.Prefix]string{netip.MustParsePrefix("192.0.2.1/24"): "eu"}}.Validate()},
		{"failover.LatencyConfig", "failover: ", failover.LatencyConfig{SwitchMargin: -1}.Validate()},
		{"failover.ShedConfig", "failover: ", failover.ShedConfig{Low: -1}.Validate()},
		{"record.Config", "record: ", record.Config{}.Validate()},
		{"record.Desired", "record: ", record.Desired{Sets: []record.RRSet{{Zone: "example.com.", Name: "www", Type: "a b", Values: []string{"192.0.2.1"}}}}.Validate()},
		{"failovertest.Config", "failovertest: ", failovertest.Config{WarmUp: -time.Second}.Validate()},
		{"route53.Config", "route53: ", route53.Config{AccessKeyID: "AKIA"}.Validate()},
		{"cloudflare.Config", "cloudflare: ", cloudflare.Config{}.Validate()},
		{"rfc2136.Config", "rfc2136: ", rfc2136.Config{}.Validate()},
		{"replication.ReplicaConfig", "replication: ", replication.ReplicaConfig{URL: "ftp://x"}.Validate()},
		{"replication.HandlerConfig", "replication: ", replication.HandlerConfig{Secret: "short"}.Validate()},
		{"dnsserver.ServerConfig", "dnsserver: ", dnsserver.ServerConfig{Addr: "nowhere"}.Validate()},
		{"dnsserver.RRLConfig", "dnsserver: ", dnsserver.RRLConfig{Rate: -1}.Validate()},
		{"dnssec.Config", "dnssec: ", dnssec.Config{Validity: time.Second}.Validate()},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("the invalid config validated")
			}
			var fe *fielderr.Error
			if !errors.As(c.err, &fe) {
				t.Fatalf("%T %q is not a *fielderr.Error", c.err, c.err)
			}
			msg := c.err.Error()
			if fe.Err == nil || !errors.Is(c.err, fe.Err) {
				t.Fatalf("%q: no sentinel", msg)
			}
			sentinel := fe.Err.Error()
			if !strings.HasPrefix(sentinel, c.prefix+"invalid ") {
				t.Errorf("sentinel %q: want it to start %q", sentinel, c.prefix+"invalid ")
			}
			if !strings.HasPrefix(msg, sentinel+": "+fe.Path) || fe.Path == "" {
				t.Errorf("%q: want %q, then the field's path", msg, sentinel+": ")
			}
			if fe.Allowed == "" {
				t.Errorf("%q: says nothing of what is allowed", msg)
			}
		})
	}
}

// errPackages are the packages whose sentinel errors TestSentinelText reads.
var errPackages = []string{
	"health", "heartbeat", "probe", "probe/dnsprobe", "probe/grpcprobe", "probe/probecheck",
	"failover", "failover/failovertest", "record", "record/fencetest", "record/replacetest",
	"provider/route53", "provider/cloudflare", "provider/rfc2136", "provider/replication",
	"provider/dnsserver", "provider/dnssec",
}

// TestSentinelText reads every package-level errors.New in these packages:
// its text starts with the package name and ": ", and does not start with a
// capital or end in punctuation (Go's convention for error strings); an
// exported one is named Err….
func TestSentinelText(t *testing.T) {
	for _, dir := range errPackages {
		files, _ := filepath.Glob(filepath.Join("../..", dir, "*.go"))
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, name, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, pv := range packageVars(f) {
				text, ok := errorsNew(pv.value)
				if !ok {
					continue
				}
				id := pv.name
				where := fset.Position(pv.value.Pos()).String()
				if !strings.HasPrefix(text, f.Name.Name+": ") {
					t.Errorf("%s: %s = %q: want the prefix %q", where, id, text, f.Name.Name+": ")
				}
				rest := strings.TrimPrefix(text, f.Name.Name+": ")
				if r := []rune(rest); len(r) > 0 && unicode.IsUpper(r[0]) && !(len(r) > 1 && unicode.IsUpper(r[1])) {
					t.Errorf("%s: %s = %q: starts with a capital", where, id, text)
				}
				if strings.HasSuffix(text, ".") || strings.HasSuffix(text, "!") || strings.HasSuffix(text, ":") {
					t.Errorf("%s: %s = %q: ends in punctuation", where, id, text)
				}
				if ast.IsExported(id) && !strings.HasPrefix(id, "Err") {
					t.Errorf("%s: exported error %s: want it named Err…", where, id)
				}
			}
		}
	}
}

// TestInvalidConfigName keeps one name for a config error across the tree:
// a package-level errors.New("<pkg>: invalid config") is named
// ErrInvalidConfig, an ErrInvalidConfig says "<pkg>: invalid config", and a
// variable that only renames ErrInvalidConfig (a former name kept for
// callers) is marked Deprecated.
func TestInvalidConfigName(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "../.." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, pv := range packageVars(f) {
			id := pv.name
			where := fset.Position(pv.value.Pos()).String()
			if x, ok := pv.value.(*ast.Ident); ok && x.Name == "ErrInvalidConfig" && id != x.Name {
				if !strings.Contains(pv.doc.Text(), "Deprecated: use ErrInvalidConfig.") {
					t.Errorf("%s: %s = ErrInvalidConfig: a second name for the config error; mark it \"Deprecated: use ErrInvalidConfig.\" or remove it", where, id)
				}
				continue
			}
			text, ok := errorsNew(pv.value)
			if !ok {
				continue
			}
			config := strings.HasSuffix(text, ": invalid config") && !strings.Contains(strings.TrimSuffix(text, ": invalid config"), " ")
			if config && id != "ErrInvalidConfig" {
				t.Errorf("%s: %s = %q: a package's config error is named ErrInvalidConfig", where, id, text)
			}
			if !config && id == "ErrInvalidConfig" {
				t.Errorf("%s: ErrInvalidConfig = %q: want \"<pkg>: invalid config\"", where, text)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// packageVar is one name = value of a package-level var declaration, with
// its doc comment (the declaration's, where it declares only this spec).
type packageVar struct {
	name  string
	value ast.Expr
	doc   *ast.CommentGroup
}

// packageVars returns the name = value pairs of f's package-level vars.
func packageVars(f *ast.File) []packageVar {
	var out []packageVar
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			doc := vs.Doc
			if doc == nil && len(g.Specs) == 1 {
				doc = g.Doc
			}
			for i, v := range vs.Values {
				out = append(out, packageVar{name: vs.Names[i].Name, value: v, doc: doc})
			}
		}
	}
	return out
}

// errorsNew returns the text of errors.New("…").
func errorsNew(e ast.Expr) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "New" {
		return "", false
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "errors" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
