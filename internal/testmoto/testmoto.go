package testmoto

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/gslbkit/gslb/provider/route53"
)

// RequireEnv names the variable that, set to "1", turns a missing
// moto_server from a skip into a failure.
const RequireEnv = "GSLBKIT_REQUIRE_MOTO"

// readyTimeout is the hang guard of moto_server's start.
const readyTimeout = 30 * time.Second

// Server is a running moto_server.
type Server struct {
	// Endpoint is its URL, "http://127.0.0.1:port".
	Endpoint string
}

// calls numbers the hosted zones' caller references.
var calls atomic.Int64

// Require returns moto_server's path; where it is missing it skips t, or
// fails it when RequireEnv is "1".
func Require(t testing.TB) string {
	t.Helper()
	return testproc.Require(t, RequireEnv, "testmoto: moto_server is not installed (pip install 'moto[server]')", "moto_server")
}

// Start runs moto_server on 127.0.0.1 and returns once its API answers;
// it points the AWS SDK at it with Env (t.Setenv: not for parallel tests)
// and stops it when t ends. It calls Require first.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Require(t)
	var last error
	for range 3 { // a port found free may be taken before moto binds it
		port, err := testproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		log := &testproc.Buffer{}
		cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
		cmd.Stdout, cmd.Stderr = log, log
		proc, err := testproc.Start(cmd)
		if err != nil {
			t.Fatalf("testmoto: start moto_server: %v", err)
		}
		s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port)}
		if last = ready(s.Endpoint, proc); last == nil {
			t.Cleanup(proc.Stop)
			Env(t, s.Endpoint)
			return s
		}
		proc.Stop()
		last = fmt.Errorf("%w; moto log:\n%s", last, log.String())
	}
	t.Fatalf("testmoto: %v", last)
	return nil
}

// Env points the AWS SDK's Route 53 client at endpoint (moto, or a fake
// of the API) with test credentials and keeps it away from the machine's
// own AWS configuration: shared config files and instance metadata. It
// uses t.Setenv: not for parallel tests.
func Env(t testing.TB, endpoint string) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_ROUTE_53": endpoint, "AWS_ENDPOINT_URL": "",
		"AWS_ACCESS_KEY_ID": "AKIDGSLBKITTEST", "AWS_SECRET_ACCESS_KEY": "gslbkit-test-secret", "AWS_SESSION_TOKEN": "",
		"AWS_REGION": "us-east-1", "AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
	} {
		t.Setenv(k, v)
	}
}

// ready polls moto's API until it answers (a hang guard of readyTimeout),
// or the process exits.
func ready(endpoint string, proc *testproc.Process) error {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(endpoint + "/moto-api/")
		if err == nil {
			_ = resp.Body.Close()
			return nil
		}
		select {
		case <-proc.Done():
			return errors.New("moto_server exited before it was ready")
		case <-deadline.C:
			return fmt.Errorf("moto_server not ready within %v: %v", readyTimeout, err)
		case <-tick.C:
		}
	}
}

// Zone creates a hosted zone named zone ("example.test.") through Route
// 53's REST API and returns its ID (without "/hostedzone/"). Each call
// creates another zone, even of the same name, as Route 53 does.
func (s *Server) Zone(ctx context.Context, zone string) (string, error) {
	body := `<?xml version="1.0" encoding="UTF-8"?><CreateHostedZoneRequest xmlns="https://route53.amazonaws.com/doc/2013-04-01/">` +
		`<Name>` + zone + `</Name><CallerReference>gslbkit-` + strconv.FormatInt(time.Now().UnixNano(), 10) + "-" +
		strconv.FormatInt(calls.Add(1), 10) + `</CallerReference></CreateHostedZoneRequest>`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint+"/2013-04-01/hostedzone", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	// moto checks no signature; it tells the service from the credential scope.
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDGSLBKITTEST/20260101/us-east-1/route53/aws4_request, SignedHeaders=host, Signature=00")
	req.Header.Set("Content-Type", "application/xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("testmoto: creating hosted zone %s: %w", zone, err)
	}
	defer resp.Body.Close()
	var out struct {
		HostedZone struct {
			ID string `xml:"Id"`
		} `xml:"HostedZone"`
	}
	if err := xml.NewDecoder(resp.Body).Decode(&out); err != nil || out.HostedZone.ID == "" {
		return "", fmt.Errorf("testmoto: creating hosted zone %s: %s: %v %+v", zone, resp.Status, err, out)
	}
	return strings.TrimPrefix(out.HostedZone.ID, "/hostedzone/"), nil
}

// Provider creates a hosted zone named zone and returns a route53
// Provider for it (route53.DefaultConfig with its ID) and the ID.
func (s *Server) Provider(ctx context.Context, zone string) (*route53.Provider, string, error) {
	id, err := s.Zone(ctx, zone)
	if err != nil {
		return nil, "", err
	}
	c := route53.DefaultConfig()
	c.HostedZoneID = id
	p, err := route53.New(c)
	return p, id, err
}
