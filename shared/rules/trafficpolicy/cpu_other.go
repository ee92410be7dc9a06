//go:build !linux

package trafficpolicy

import "time"

var started = time.Now()

// threadCPU falls back to the wall clock where the thread's CPU time is not available.
func threadCPU() time.Duration { return time.Since(started) }
