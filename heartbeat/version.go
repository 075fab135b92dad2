package heartbeat

import "github.com/gslbkit/gslb/internal/fielderr"

// validateBeatVersion checks Config.BeatVersion (kept apart from the other
// fields' checks: it reports in the fielderr shape the module is moving to).
func (c Config) validateBeatVersion() error {
	if c.BeatVersion < 0 || c.BeatVersion > 2 {
		return fielderr.New(ErrInvalidConfig, "beatVersion", c.BeatVersion, fielderr.Range(0, 2))
	}
	return nil
}
