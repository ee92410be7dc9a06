package sshcerts

// KeysGenerated is the number of key pairs Generate started in this test binary.
func KeysGenerated() int64 { return generated.Load() }
