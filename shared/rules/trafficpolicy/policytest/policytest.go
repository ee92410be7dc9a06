// Package policytest holds adversarial traffic policy documents for the tests of the validator
// and of every route that takes a policy: the shapes that make validation work hardest, each at
// or past the limit that bounds it (and the documents of the campaign that found the problem).
package policytest

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// Case is one adversarial document.
type Case struct {
	Name string
	Doc  string
}

// nestedList is size([[…depth…n…]]) > 0: type inference grows steeply with the nesting.
func nestedList(depth, n int) string {
	return fmt.Sprintf("size(%s%d%s) > 0", strings.Repeat("[", depth), n, strings.Repeat("]", depth))
}

// rules writes one rule per expression list, each with a deny action.
func rules(exprs [][]string) string {
	var rs []any
	for _, e := range exprs {
		rs = append(rs, map[string]any{"expressions": e, "actions": []any{map[string]any{"type": "deny"}}})
	}
	return jsonText(map[string]any{"on_http_request": rs})
}

// jsonText writes v as JSON as a client would (no HTML escaping of <, > and &).
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return b.String()
}

// fill puts distinct expressions made by gen into one rule until the document reaches size
// bytes (one rule: each expression is one value, so the value limit is not what stops it).
func fill(size int, gen func(i int) string) string {
	var exprs []string
	total := 0
	for i := 0; total < size; i++ {
		e := gen(i)
		exprs = append(exprs, e)
		total += len(e) + 3
	}
	return rules([][]string{exprs})
}

// Cases returns the adversarial documents.
func Cases() []Case {
	yamlDeep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'j'; i++ {
		laughs += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	manyValues := "on_http_request:\n  - actions:\n      - type: log\n        config:\n          metadata:\n            m: [" +
		strings.Repeat("1,", 60000) + "1]\n"
	interpolations := map[string]any{}
	for i := 0; i < 600; i++ {
		interpolations[fmt.Sprintf("k%d", i)] = fmt.Sprintf("${conn.client_ip + '%d'} ${%s}", i, nestedList(20, i))
	}
	logDoc := jsonText(map[string]any{"on_http_request": []any{map[string]any{"actions": []any{
		map[string]any{"type": "log", "config": map[string]any{"metadata": interpolations}}}}}})
	bigBody := jsonText(map[string]any{"on_http_request": []any{map[string]any{"actions": []any{
		map[string]any{"type": "custom-response", "config": map[string]any{"status_code": 200, "body": strings.Repeat("Down for maintenance. ", 11600)}}}}}})
	dollarBody := jsonText(map[string]any{"on_http_request": []any{map[string]any{"actions": []any{
		map[string]any{"type": "custom-response", "config": map[string]any{"body": strings.Repeat("${1}", 60000)}}}}}})
	var cidrs []string
	for i := 0; i < 9900; i++ {
		cidrs = append(cidrs, fmt.Sprintf("10.%d.%d.0/24", i/256, i%256))
	}
	cidrDoc := jsonText(map[string]any{"on_tcp_connect": []any{map[string]any{"actions": []any{
		map[string]any{"type": "restrict-ips", "config": map[string]any{"allow": cidrs}}}}}})
	var regexes []any
	for i := 0; i < 60; i++ {
		var words []string
		for j := 0; len(strings.Join(words, "|")) < 4000; j++ {
			words = append(words, fmt.Sprintf("w%d_%d", i, j))
		}
		regexes = append(regexes, map[string]any{"from": "(?:" + strings.Join(words[:len(words)-1], "|") + "){1,9}", "to": "b"})
	}
	regexDoc := jsonText(map[string]any{"on_http_request": []any{map[string]any{"actions": []any{
		map[string]any{"type": "request-body-find-replace", "config": map[string]any{"replacements": regexes}}}}}})
	return []Case{
		{"campaign: nested list expression twice (578 bytes)", rules([][]string{{nestedList(246, 1), nestedList(246, 1)}})},
		{"campaign: nested list expressions (250 KB)", fill(250<<10, func(i int) string { return nestedList(246, i) })},
		{"nested lists just within the parser's depth", fill(250<<10, func(i int) string { return nestedList(22, i) })},
		{"nested lists and maps", fill(250<<10, func(i int) string {
			return fmt.Sprintf("size(%s%d%s) > 0", strings.Repeat("[{'a':", 9), i, strings.Repeat("}]", 9))
		})},
		{"long list literals", fill(250<<10, func(i int) string {
			return "size([" + strings.Repeat(fmt.Sprintf("[%d,[2]],", i%10), 200) + fmt.Sprint(i) + "]) > 0"
		})},
		{"long conjunctions", fill(250<<10, func(i int) string {
			return strings.Repeat(fmt.Sprintf("req.method == '%d' && ", i), 90) + "true"
		})},
		{"operator chains past the depth", fill(250<<10, func(i int) string { return strings.Repeat(fmt.Sprint(i%10)+"+", 1000) + "1 > 0" })},
		{"select chains past the depth", fill(250<<10, func(i int) string { return "req" + strings.Repeat(".a", 1000) + fmt.Sprintf(" == %d", i) })},
		{"index chains past the depth", fill(250<<10, func(i int) string { return "req" + strings.Repeat("[0]", 670) + fmt.Sprintf(" == %d", i) })},
		{"expressions over the size limit", fill(250<<10, func(i int) string { return fmt.Sprintf("'%0*d' == req.method", 3000, i) })},
		{"more distinct expressions than the limit", fill(20<<10, func(i int) string { return fmt.Sprintf("req.method == '%d'", i) })},
		{"nested comprehensions", fill(250<<10, func(i int) string {
			return fmt.Sprintf("req.headers.all(a, req.headers.all(b, req.headers.all(c, req.headers.all(d, a == '%d'))))", i)
		})},
		{"unbalanced brackets", fill(250<<10, func(i int) string { return strings.Repeat("(", 1000) + fmt.Sprint(i) + strings.Repeat("]", 1000) })},
		{"interpolations in one log action", logDoc},
		{"a 250 KB custom-response body", bigBody},
		{"60,000 interpolations of one expression", dollarBody},
		{"9,900 CIDRs", cidrDoc},
		{"YAML block list of 9,900 values", "on_http_request:\n  - actions:\n      - type: log\n        config:\n          metadata:\n            m:\n" +
			strings.Repeat("              - 1\n", 9900)},
		{"YAML mapping of 4,900 keys", "on_http_request:\n  - actions:\n      - type: log\n        config:\n          metadata:\n" + yamlKeys(4900)},
		{"60 regular expressions of 4 KB", regexDoc},
		{"YAML nested 5,000 deep", yamlDeep},
		{"JSON nested 100,000 deep", strings.Repeat("[", 100000) + strings.Repeat("]", 100000)},
		{"YAML alias expansion (billion laughs)", laughs},
		{"60,000 values", manyValues},
		{"over the document size", fill(300<<10, func(i int) string { return fmt.Sprintf("req.method == '%d'", i) })},
	}
}

// HTMLPage is an HTML page of about n bytes, dense in the characters JSON encoders escape for
// HTML (<, > and &) and free of quotes: the campaign's custom-response pages.
func HTMLPage(n int) string {
	const row = "<p><b>&lt;</b>&amp;<i>&gt;</i></p>\n"
	return "<html><body><table>\n" + strings.Repeat(row, n/len(row)) + "</table></body></html>"
}

// CustomResponse is a policy answering every request with page as text/html, written as a
// client writes it (<, > and & as they are).
func CustomResponse(page string) string {
	return jsonText(map[string]any{"on_http_request": []any{map[string]any{"actions": []any{map[string]any{
		"type": "custom-response", "config": map[string]any{"status_code": 200, "content": page,
			"headers": map[string]string{"content-type": "text/html"}}}}}}})
}

func yamlKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "            k%d: ${conn.client_ip}\n", i)
	}
	return b.String()
}

// CPU returns the process's CPU time (user and system) so far.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LeastCPU runs do tries times (do(0), do(1), …) and returns the least process CPU one run took.
// The process's CPU counts everything it did meanwhile (collecting other tests' garbage, the
// test stack's goroutines), which on a loaded machine can add tens of milliseconds to one
// measure; what a document or request itself costs is in every run, so the least of a few is
// its cost, and one that is over the bound is over it every time.
func LeastCPU(tries int, do func(try int)) time.Duration {
	least := time.Duration(-1)
	for i := 0; i < tries; i++ {
		start := CPU()
		do(i)
		if took := CPU() - start; least < 0 || took < least {
			least = took
		}
	}
	return least
}

// MaxCPU is the CPU one request may take to accept or refuse a policy.
const MaxCPU = 200 * time.Millisecond
