package memory

import (
	"strconv"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/provider/dnssec"
)

// Config.Signers: zones signed by name, whichever way they arrive.

// validateSigners checks Config.Signers: none nil, one per zone.
func validateSigners(signers []*dnssec.Signer) error {
	seen := map[string]bool{}
	for i, s := range signers {
		path := "signers[" + strconv.Itoa(i) + "]"
		if s == nil {
			return fielderr.New(ErrInvalidConfig, path, "nil", "a signer made by dnssec.NewSigner")
		}
		if seen[s.Zone()] {
			return fielderr.New(ErrInvalidConfig, path, s.Zone(), "one signer per zone")
		}
		seen[s.Zone()] = true
	}
	return nil
}

// signerFor returns the signer Config.Signers holds for the zone named key
// (normalised), nil when none does.
func (p *Provider) signerFor(key string) *dnssec.Signer {
	for _, s := range p.cfg.Signers {
		if s.Zone() == key {
			return s
		}
	}
	return nil
}

// withSigners gives each zone of zones (freshly built, not yet published)
// that has no signer the one Config.Signers holds for its name.
func (p *Provider) withSigners(zones map[string]*zone) {
	for name, z := range zones {
		if z.Signer == nil {
			z.Signer = p.signerFor(name)
		}
	}
}
