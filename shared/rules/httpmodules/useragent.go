package httpmodules

import (
	"regexp"
	"slices"

	"tunnelapi/shared/platform/api"
)

// UserAgentFilter is a stored user_agent_filter module: RE2 regular expressions, stored as
// given and compiled when checked.
type UserAgentFilter struct {
	Enabled bool     `dynamodbav:"enabled"`
	Allow   []string `dynamodbav:"allow"`
	Deny    []string `dynamodbav:"deny"`
}

// UserAgentFilterIn is the request form of UserAgentFilter.
type UserAgentFilterIn struct {
	Enabled *bool    `json:"enabled"`
	Allow   []string `json:"allow"`
	Deny    []string `json:"deny"`
}

// UserAgentFilterJSON is the response form of UserAgentFilter.
type UserAgentFilterJSON struct {
	Enabled bool     `json:"enabled"`
	Allow   []string `json:"allow"`
	Deny    []string `json:"deny"`
}

// Check validates a user_agent_filter module: allow and deny are RE2 regular expressions (215
// naming the entry). The count and size of the expressions are
// checked before any is compiled, so a request costs at most MaxUserAgentRegexes compilations
// of MaxUserAgentRegexBytes each (RE2 compiles in time linear in the pattern, and refuses
// repetitions that would expand beyond its program size limit).
func (in UserAgentFilterIn) Check(field string) (UserAgentFilter, error) {
	u := UserAgentFilter{Enabled: enabled(in.Enabled)}
	lists := []struct {
		name string
		list []string
	}{{"allow", in.Allow}, {"deny", in.Deny}}
	for _, l := range lists {
		f := path(field, l.name)
		if len(l.list) > MaxUserAgentRegexes {
			return u, api.Invalid(f, "%s has %d expressions; the limit is %d", f, len(l.list), MaxUserAgentRegexes)
		}
		for i, re := range l.list {
			if len(re) > MaxUserAgentRegexBytes {
				return u, api.Invalid(index(f, i), "%s is %d bytes long; the limit is %d", index(f, i), len(re), MaxUserAgentRegexBytes)
			}
		}
	}
	for _, l := range lists {
		f := path(field, l.name)
		for i, re := range l.list {
			if re == "" {
				return u, api.Invalid(index(f, i), "%s must not be empty", index(f, i))
			}
			if _, err := regexp.Compile(re); err != nil {
				return u, api.Invalid(index(f, i), "%s is not a valid RE2 regular expression: %s", index(f, i), err.Error())
			}
		}
	}
	u.Allow, u.Deny = api.Slice(slices.Clone(in.Allow)), api.Slice(slices.Clone(in.Deny))
	return u, nil
}

// JSON returns u's response form.
func (u UserAgentFilter) JSON() *UserAgentFilterJSON {
	return &UserAgentFilterJSON{Enabled: u.Enabled, Allow: api.Slice(u.Allow), Deny: api.Slice(u.Deny)}
}
