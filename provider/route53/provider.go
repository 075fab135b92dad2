package route53

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	r53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
)

// Provider is the Route 53 adapter. It talks to Route 53 through the AWS
// SDK for Go v2 (the client github.com/libdns/route53 v1.6.2 builds, with
// the same configuration chain), with gslbkit's conventions:
//
//   - Errors answer Throttled() and Temporary(): Throttling and
//     PriorRequestNotComplete (and HTTP 429) are throttled; HTTP 5xx,
//     ServiceUnavailable, timeouts and network errors are transient;
//     InvalidChangeBatch, NoSuchHostedZone, access and signature errors
//     are permanent. See WrapError.
//   - SetRecords sends every RRset of the call in one change batch, which
//     Route 53 applies atomically: all of it or none.
//   - TXT text is quoted, split into 255-byte strings and escaped (octal,
//     as Route 53 documents) on the way in and decoded on the way out
//     byte for byte. (libdns/route53 v1.6.2 strips quotes at either end of
//     the text when reading.) A TXT given in presentation form (a
//     libdns.RR whose data begins with a double quote, several strings)
//     keeps its strings and reads back in the same form. A value longer
//     than Route 53's 4,000 characters is refused before sending.
//   - DeleteRecords honours libdns v1's wildcards (empty type, TTL or
//     value) and returns only what it deleted.
//   - A configuration that cannot be loaded (an unknown profile) is an
//     error, not a process exit.
//
// Route 53 keeps RRsets whole and gives each a single TTL: SetRecords and
// AppendRecords use the first record's TTL for a new RRset, and
// AppendRecords keeps an existing RRset's TTL. Route 53 refuses a CNAME
// beside other data and at the apex (InvalidChangeBatch). GetRecords
// returns the apex SOA and NS; alias records and records with a routing
// policy (a SetIdentifier) are neither returned nor touched.
//
// Provider is safe for concurrent use; read-modify-write calls
// (AppendRecords, DeleteRecords) are serialised within one Provider.
// Processes sharing a zone must coordinate themselves.
type Provider struct {
	cfg Config

	mu     sync.Mutex
	client *r53.Client
	zones  map[string]string // zone name → hosted zone ID

	// rmw serialises AppendRecords and DeleteRecords.
	rmw sync.Mutex
}

// New validates cfg and returns a Provider. It contacts nothing; the AWS
// configuration is loaded on the first call. cfg is copied.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg.withDefaults(), zones: map[string]string{}}, nil
}

// Config returns the provider's configuration, defaults filled in.
func (p *Provider) Config() Config { return p.cfg }

// api returns the SDK client, loading the AWS configuration on first use.
func (p *Provider) api(ctx context.Context) (*r53.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.zones == nil {
		return nil, ErrNotConfigured
	}
	if p.client != nil {
		return p.client, nil
	}
	attempts := p.cfg.MaxAttempts
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return retry.AddWithMaxAttempts(retry.NewStandard(), attempts) }),
	}
	if p.cfg.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(p.cfg.Profile))
	}
	if p.cfg.Region != "" {
		opts = append(opts, config.WithRegion(p.cfg.Region))
	}
	if p.cfg.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(p.cfg.AccessKeyID, p.cfg.SecretAccessKey, p.cfg.SessionToken)))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("route53: loading the AWS configuration (profile %q): %w", p.cfg.Profile, err)
	}
	p.client = r53.NewFromConfig(awsCfg)
	return p.client, nil
}

// zoneID returns the hosted zone ID for zone (normalised), from the
// configuration or looked up by name once.
func (p *Provider) zoneID(ctx context.Context, c *r53.Client, zone string) (string, error) {
	if p.cfg.HostedZoneID != "" {
		return p.cfg.HostedZoneID, nil
	}
	p.mu.Lock()
	id, ok := p.zones[zone]
	p.mu.Unlock()
	if ok {
		return id, nil
	}
	out, err := c.ListHostedZonesByName(ctx, &r53.ListHostedZonesByNameInput{DNSName: aws.String(zone), MaxItems: aws.Int32(10)})
	if err != nil {
		return "", WrapError("ListHostedZonesByName", zone, err)
	}
	for _, private := range []bool{false, true} {
		for _, hz := range out.HostedZones {
			if strings.EqualFold(aws.ToString(hz.Name), zone) && (hz.Config == nil || hz.Config.PrivateZone == private) {
				id = strings.TrimPrefix(aws.ToString(hz.Id), "/hostedzone/")
				p.mu.Lock()
				p.zones[zone] = id
				p.mu.Unlock()
				return id, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %s", ErrNoZone, zone)
}

// prepare normalises zone and returns the client and hosted zone ID.
func (p *Provider) prepare(ctx context.Context, zone string) (string, *r53.Client, string, error) {
	z, err := zoneops.Zone(zone)
	if err != nil {
		return "", nil, "", fmt.Errorf("route53: %w", err)
	}
	c, err := p.api(ctx)
	if err != nil {
		return "", nil, "", err
	}
	id, err := p.zoneID(ctx, c, z)
	if err != nil {
		return "", nil, "", err
	}
	return z, c, id, nil
}

// list returns the zone's plain RRsets (no alias, no routing policy).
func (p *Provider) list(ctx context.Context, c *r53.Client, zone, id string) ([]types.ResourceRecordSet, error) {
	in := &r53.ListResourceRecordSetsInput{HostedZoneId: aws.String(id), MaxItems: aws.Int32(300)}
	var out []types.ResourceRecordSet
	for {
		page, err := c.ListResourceRecordSets(ctx, in)
		if err != nil {
			return nil, WrapError("ListResourceRecordSets", zone, err)
		}
		for _, s := range page.ResourceRecordSets {
			if s.AliasTarget != nil || s.SetIdentifier != nil || len(s.ResourceRecords) == 0 {
				continue
			}
			out = append(out, s)
		}
		if !page.IsTruncated {
			return out, nil
		}
		in.StartRecordName, in.StartRecordType, in.StartRecordIdentifier = page.NextRecordName, page.NextRecordType, page.NextRecordIdentifier
	}
}

// fromSet converts one RRset to typed libdns records.
func fromSet(s types.ResourceRecordSet, zone string) []libdns.Record {
	name := zoneops.Name(decodeName(aws.ToString(s.Name)), zone)
	ttl := time.Duration(aws.ToInt64(s.TTL)) * time.Second
	out := make([]libdns.Record, 0, len(s.ResourceRecords))
	for _, r := range s.ResourceRecords {
		rr := libdns.RR{Name: name, TTL: ttl, Type: string(s.Type), Data: aws.ToString(r.Value)}
		if s.Type == types.RRTypeTxt || s.Type == types.RRTypeSpf {
			data, plain := zoneops.TXTData(decodeTXTStrings(rr.Data))
			rr.Data = data
			if !plain {
				// Several strings that are not one text cut at 255
				// bytes: presentation form, a libdns.RR.
				out = append(out, rr)
			} else {
				out = append(out, libdns.TXT{Name: rr.Name, TTL: rr.TTL, Text: data})
			}
			continue
		}
		out = append(out, zoneops.Typed(rr))
	}
	return out
}

// maxValue is the longest value Route 53 accepts (a resource record's Value,
// "not to exceed 4,000 characters").
const maxValue = 4000

// encodeValue writes a record's data the way Route 53 wants it. TXT and
// SPF data keeps its strings: a libdns.TXT (or plain text) is cut into
// 255-byte strings, presentation form (data beginning with a double
// quote, as a libdns.RR) is written string for string. A value longer than
// Route 53 accepts is an error, before anything is sent.
func encodeValue(r libdns.Record) (string, error) {
	rr := r.RR()
	if t := strings.ToUpper(rr.Type); t != "TXT" && t != "SPF" {
		return rr.Data, nil
	}
	ss, err := zoneops.TXTInput(r)
	if err != nil {
		return "", fmt.Errorf("route53: record %s %s: %w", rr.Name, rr.Type, err)
	}
	v := encodeTXTStrings(ss)
	if len(v) > maxValue {
		return "", fmt.Errorf("route53: record %s %s: value of %d characters once quoted and escaped; Route 53 accepts at most %d", rr.Name, rr.Type, len(v), maxValue)
	}
	return v, nil
}

// group is the records of one RRset in a call, in input order.
type group struct {
	set  zoneops.RRset
	name string // fully qualified
	recs []libdns.Record
}

func groups(recs []libdns.Record, zone string) ([]*group, error) {
	var out []*group
	idx := map[zoneops.RRset]*group{}
	for _, r := range recs {
		rr := r.RR()
		if rr.Name == "" || rr.Type == "" {
			return nil, fmt.Errorf("route53: record %+v: name and type are required (\"@\" for the apex)", rr)
		}
		k := zoneops.KeyOf(r, zone).Set()
		g := idx[k]
		if g == nil {
			g = &group{set: k, name: strings.ToLower(libdns.AbsoluteName(k.Name, zone))}
			idx[k] = g
			out = append(out, g)
		}
		g.recs = append(g.recs, r)
	}
	return out, nil
}

// upsert builds an UPSERT of name/type holding values (deduplicated).
func upsert(name, typ string, ttl time.Duration, values []string) types.Change {
	return types.Change{Action: types.ChangeActionUpsert, ResourceRecordSet: rrsetOf(name, typ, ttl, values)}
}

func rrsetOf(name, typ string, ttl time.Duration, values []string) *types.ResourceRecordSet {
	seen := map[string]bool{}
	var rrs []types.ResourceRecord
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			rrs = append(rrs, types.ResourceRecord{Value: aws.String(v)})
		}
	}
	return &types.ResourceRecordSet{
		Name: aws.String(name), Type: types.RRType(strings.ToUpper(typ)),
		TTL: aws.Int64(int64(ttl / time.Second)), ResourceRecords: rrs,
	}
}

// apply sends one change batch, waiting for INSYNC when configured.
func (p *Provider) apply(ctx context.Context, c *r53.Client, method, zone, id string, changes []types.Change) error {
	if len(changes) == 0 {
		return nil
	}
	out, err := c.ChangeResourceRecordSets(ctx, &r53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(id),
		ChangeBatch:  &types.ChangeBatch{Changes: changes, Comment: aws.String("gslbkit " + method)},
	})
	if err != nil {
		return WrapError(method, zone, err)
	}
	if p.cfg.WaitForSync && out.ChangeInfo != nil {
		w := r53.NewResourceRecordSetsChangedWaiter(c)
		if err := w.Wait(ctx, &r53.GetChangeInput{Id: out.ChangeInfo.Id}, p.cfg.MaxWait); err != nil {
			return WrapError(method+" (waiting for INSYNC)", zone, err)
		}
	}
	return nil
}
