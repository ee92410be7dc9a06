package httpmodules

// Toggle is a stored module whose only member is enabled: compression and
// websocket_tcp_converter.
type Toggle struct {
	Enabled bool `dynamodbav:"enabled"`
}

// ToggleIn is the request form of Toggle.
type ToggleIn struct {
	Enabled *bool `json:"enabled"`
}

// ToggleJSON is the response form of Toggle.
type ToggleJSON struct {
	Enabled bool `json:"enabled"`
}

// Check returns the stored module; any request form is valid.
func (in ToggleIn) Check(string) (Toggle, error) { return Toggle{Enabled: enabled(in.Enabled)}, nil }

// JSON returns t's response form.
func (t Toggle) JSON() *ToggleJSON { return &ToggleJSON{Enabled: t.Enabled} }
