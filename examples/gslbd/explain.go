package main

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/dnsname"
)

// Why this answer: GET /api/explain?name=&type=&client= explains how a
// record is answered to one client (F5 BIG-IP DNS decision logs are the
// model): the addresses configured, the ones published now (what the
// answer hook is handed), each step of the hook with what it kept and
// dropped and why, the answer with its ECS scope, and the embedded zone's
// actual reply to that client. The steps are the very values the zone's
// hook runs (recordSteps, chained by failover.StepChain), so a rotating or
// random step moves on as it would for a query; the reply is another
// query, so with such a step it may differ from the trace's answer.

// recordSteps returns the steps of a record's answer hook: kind k
// (roundRobin, weightedRandom, geo, regionFilter), then within among the
// chosen region's addresses; nil for kind all (no hook).
func recordSteps(k, within AnswerKind, loc *failover.Locator, m failover.Record) []failover.Step {
	var steps []failover.Step
	switch k {
	case AnswerRoundRobin, AnswerWeightedRandom:
		steps = append(steps, choiceStep(string(k), k, m))
	case AnswerGeo:
		steps = append(steps, failover.GeoStep(loc, m.Tags()))
	case AnswerRegionFilter:
		steps = append(steps, failover.RegionFilterStep(loc, m.Tags()))
	default:
		return nil
	}
	if w := choiceHook(within, m); w != nil {
		// Then among the region's addresses (or, with no region chosen,
		// among all of them).
		steps = append(steps, choiceStep("within "+string(within), within, m))
	}
	return steps
}

// choiceStep is choiceHook as a step named name.
func choiceStep(name string, k AnswerKind, m failover.Record) failover.Step {
	s := failover.Step{Name: name, Answer: choiceHook(k, m)}
	switch k {
	case AnswerRoundRobin:
		s.Why = func(netip.Prefix, []libdns.Record, []libdns.Record) string {
			return "rotated by one position per query; this is one rotation"
		}
	case AnswerWeightedRandom:
		ws := m.Weights()
		s.Why = func(_ netip.Prefix, in, _ []libdns.Record) string {
			parts := make([]string, 0, len(in))
			for _, r := range in {
				if a, ok := r.(libdns.Address); ok {
					parts = append(parts, fmt.Sprintf("%s=%d", a.IP, ws[a.IP.Unmap()]))
				}
			}
			return "one address drawn by weight (" + strings.Join(parts, ", ") + "); this is one draw"
		}
	}
	return s
}

// explainView is GET /api/explain's body.
type explainView struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Client is the prefix explained; ClientFrom says where it came from:
	// "query" (the client parameter) or "requester" (the request's source
	// address).
	Client     string `json:"client"`
	ClientFrom string `json:"clientFrom"`
	// Kind and Within are the record's answer and within.
	Kind   AnswerKind `json:"kind"`
	Within AnswerKind `json:"within,omitempty"`
	// Configured are the record's addresses as configured; Published the
	// ones the zone holds now at Name and Type (what the first step is
	// handed: the healthy, undrained ones).
	Configured []AddressSpec `json:"configured"`
	Published  []string      `json:"published"`
	Steps      []explainStep `json:"steps"`
	Answer     explainAnswer `json:"answer"`
	Reply      explainReply  `json:"reply"`
	// Note warns when the reply may differ from the steps' answer.
	Note string `json:"note,omitempty"`
	// Trace is the same as a decision log (failover.Trace's String).
	Trace string `json:"trace"`
}

// explainStep is one step of the hook.
type explainStep struct {
	Name      string   `json:"name"`
	Kept      []string `json:"kept"`
	Dropped   []string `json:"dropped"`
	NoOpinion bool     `json:"noOpinion"`
	Reordered bool     `json:"reordered"`
	Scope     int      `json:"scope"`
	Why       string   `json:"why,omitempty"`
}

// explainAnswer is the steps' answer: its records, its scope and the ECS
// scope the server sends (the scope capped at the client's length).
type explainAnswer struct {
	Records  []string `json:"records"`
	Scope    int      `json:"scope"`
	ECSScope int      `json:"ecsScope"`
}

// explainReply is the embedded zone's reply to the client (a query with
// its prefix as EDNS Client Subnet): rcode, answer records (data) and the
// ECS scope it carries.
type explainReply struct {
	Rcode    string   `json:"rcode"`
	Records  []string `json:"records"`
	ECSScope int      `json:"ecsScope"`
}

// explain serves GET /api/explain.
func (c *controller) explain(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := dnsname.Fqdn(strings.ToLower(q.Get("name")))
	if q.Get("name") == "" {
		writeJSON(w, http.StatusBadRequest, apiError{"name is required: a record's name"})
		return
	}
	if c.byName[name] == nil {
		writeJSON(w, http.StatusNotFound, apiError{"no record " + name})
		return
	}
	qtype := strings.ToUpper(q.Get("type"))
	if qtype == "" {
		qtype = "A"
	}
	if qtype != "A" && qtype != "AAAA" {
		writeJSON(w, http.StatusBadRequest, apiError{"type " + qtype + ": A or AAAA (or none: A)"})
		return
	}
	client, from, err := explainClient(q.Get("client"), r.RemoteAddr)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	rrs, err := c.zone.GetRecords(r.Context(), c.cfg.Zone)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{"reading the zone: " + err.Error()})
		return
	}
	var published []libdns.Record
	for _, rec := range rrs {
		rr := rec.RR()
		if rr.Type == qtype && strings.EqualFold(libdns.AbsoluteName(rr.Name, c.cfg.Zone), name) {
			published = append(published, rec)
		}
	}
	ans := c.answers[name]
	v := explainView{Name: name, Type: qtype, Client: client.String(), ClientFrom: from, Kind: AnswerAll, Configured: c.byName[name].spec.Addresses}
	if ans.kind != "" {
		v.Kind, v.Within = ans.kind, ans.within
	}
	tr := failover.Explain(ans.steps, client, name, qtype, published)
	v.Published = dataOf(published)
	v.Steps = []explainStep{}
	for _, s := range tr.Steps {
		v.Steps = append(v.Steps, explainStep{Name: s.Name, Kept: dataOf(s.Kept), Dropped: dataOf(s.Dropped),
			NoOpinion: s.NoOpinion, Reordered: s.Reordered, Scope: s.Scope, Why: s.Why})
	}
	v.Answer = explainAnswer{Records: dataOf(tr.Answer), Scope: tr.Scope, ECSScope: tr.ECSScope}
	v.Reply = c.explainReply(name, qtype, client)
	if slices.ContainsFunc(ans.steps, func(s failover.Step) bool {
		return strings.HasSuffix(s.Name, string(AnswerRoundRobin)) || strings.HasSuffix(s.Name, string(AnswerWeightedRandom))
	}) {
		v.Note = "a rotating or random step answers each query anew: the reply (another query) may differ from the steps' answer"
	}
	v.Trace = tr.String()
	writeJSON(w, http.StatusOK, v)
}

// explainReply asks the embedded zone what it answers client: a query for
// name and qtype carrying client as EDNS Client Subnet (RFC 7871).
func (c *controller) explainReply(name, qtype string, client netip.Prefix) explainReply {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.StringToType[qtype])
	m.SetEdns0(1232, false)
	family := uint16(1)
	if client.Addr().Is6() {
		family = 2
	}
	opt := m.IsEdns0()
	opt.Option = append(opt.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: family,
		SourceNetmask: uint8(client.Bits()), Address: net.IP(client.Addr().AsSlice())})
	out := explainReply{Records: []string{}}
	reply := c.zone.Respond(m, client.Addr(), false)
	if reply == nil {
		out.Rcode = "no reply"
		return out
	}
	out.Rcode = dns.RcodeToString[reply.Rcode]
	for _, rr := range reply.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			out.Records = append(out.Records, rr.A.String())
		case *dns.AAAA:
			out.Records = append(out.Records, rr.AAAA.String())
		default:
			out.Records = append(out.Records, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	if o := reply.IsEdns0(); o != nil {
		for _, e := range o.Option {
			if s, ok := e.(*dns.EDNS0_SUBNET); ok {
				out.ECSScope = int(s.SourceScope)
			}
		}
	}
	return out
}

// explainClient reads the client parameter: an address (a /32 or /128)
// or a prefix (its host bits cleared), IPv4 mapped into IPv6 read as IPv4;
// empty, the request's source address.
func explainClient(s, remote string) (netip.Prefix, string, error) {
	from := "query"
	if s == "" {
		from = "requester"
		s = remote
		if ap, err := netip.ParseAddrPort(remote); err == nil {
			s = ap.Addr().String()
		}
	}
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return p, from, fmt.Errorf("client %q: an address (192.0.2.1) or a prefix (192.0.2.0/24)", s)
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return p, from, fmt.Errorf("client %q: an address (192.0.2.1) or a prefix (192.0.2.0/24)", s)
		}
		a = a.WithZone("")
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() {
		p = netip.PrefixFrom(a.Unmap(), max(p.Bits()-96, 0))
	}
	return p.Masked(), from, nil
}

// dataOf is the records' data (addresses), never nil.
func dataOf(rs []libdns.Record) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.RR().Data)
	}
	return out
}
