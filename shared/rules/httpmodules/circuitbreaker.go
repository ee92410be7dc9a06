package httpmodules

import "tunnelapi/shared/platform/api"

// CircuitBreaker is a circuit_breaker module in its stored and its response form.
type CircuitBreaker struct {
	Enabled                  bool    `dynamodbav:"enabled" json:"enabled"`
	TrippedDuration          int64   `dynamodbav:"tripped_duration" json:"tripped_duration"`
	RollingWindow            int64   `dynamodbav:"rolling_window" json:"rolling_window"`
	NumBuckets               int64   `dynamodbav:"num_buckets" json:"num_buckets"`
	VolumeThreshold          int64   `dynamodbav:"volume_threshold" json:"volume_threshold"`
	ErrorThresholdPercentage float64 `dynamodbav:"error_threshold_percentage" json:"error_threshold_percentage"`
}

// CircuitBreakerIn is the request form of CircuitBreaker.
type CircuitBreakerIn struct {
	Enabled                  *bool    `json:"enabled"`
	TrippedDuration          *int64   `json:"tripped_duration"`
	RollingWindow            *int64   `json:"rolling_window"`
	NumBuckets               *int64   `json:"num_buckets"`
	VolumeThreshold          *int64   `json:"volume_threshold"`
	ErrorThresholdPercentage *float64 `json:"error_threshold_percentage"`
}

// MaxBuckets is the largest num_buckets.
const MaxBuckets = 128

// DefaultCircuitBreaker holds the values of members a request leaves out: the platform's
// defaults (10 s tripped, a 10 s window of 10 buckets, 20 requests, 50 % errors).
var DefaultCircuitBreaker = CircuitBreaker{Enabled: true, TrippedDuration: 10, RollingWindow: 10,
	NumBuckets: 10, VolumeThreshold: 20, ErrorThresholdPercentage: 0.5}

// Check validates a circuit_breaker module: tripped_duration > 0 (7016), rolling_window > 0
// (7017), num_buckets 1–128 (7018), error_threshold_percentage 0.0–1.0 (7011), volume_threshold
// ≥ 0. Absent members take the platform's defaults (DefaultCircuitBreaker).
func (in CircuitBreakerIn) Check(field string) (CircuitBreaker, error) {
	c := DefaultCircuitBreaker
	c.Enabled = enabled(in.Enabled)
	api.Set(&c.TrippedDuration, in.TrippedDuration)
	api.Set(&c.RollingWindow, in.RollingWindow)
	api.Set(&c.NumBuckets, in.NumBuckets)
	api.Set(&c.VolumeThreshold, in.VolumeThreshold)
	api.Set(&c.ErrorThresholdPercentage, in.ErrorThresholdPercentage)
	switch {
	case c.TrippedDuration <= 0:
		f := path(field, "tripped_duration")
		return c, api.BadRequest(CodeBreakerTripped, f, "%s must be a number of seconds greater than 0", f)
	case c.RollingWindow <= 0:
		f := path(field, "rolling_window")
		return c, api.BadRequest(CodeBreakerWindow, f, "%s must be a number of seconds greater than 0", f)
	case c.NumBuckets < 1 || c.NumBuckets > MaxBuckets:
		f := path(field, "num_buckets")
		return c, api.BadRequest(CodeBreakerBuckets, f, "%s must be from 1 to %d", f, MaxBuckets)
	case c.VolumeThreshold < 0:
		f := path(field, "volume_threshold")
		return c, api.Invalid(f, "%s must not be negative", f)
	case !(c.ErrorThresholdPercentage >= 0 && c.ErrorThresholdPercentage <= 1):
		f := path(field, "error_threshold_percentage")
		return c, api.BadRequest(CodeBreakerThreshold, f, "%s must be from 0.0 to 1.0 (a fraction, not a percentage)", f)
	}
	return c, nil
}

// JSON returns c's response form.
func (c CircuitBreaker) JSON() *CircuitBreaker { return &c }
