package provider

import "time"

// SetMaxRateWait sets how long a call may wait for a rate limit in all,
// and returns what it was.
func SetMaxRateWait(d time.Duration) time.Duration {
	old := maxRateWait
	maxRateWait = d
	return old
}
