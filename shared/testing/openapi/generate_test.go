package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The generator: it reduces the platform's OpenAPI file, when it is beside the checkout, to the
// facts testdata/openapi.json holds. Regenerate the copy with
//
//	go test ./shared/testing/openapi -run TestCopyIsCurrent -update

var update = flag.Bool("update", false, "rewrite testdata/openapi.json from the OpenAPI file beside the checkout")

// referencePath is the platform's OpenAPI file, relative to this package.
const referencePath = "../../../../shared/reference/ngrok-openapi.yaml"

func TestCopyIsCurrent(t *testing.T) {
	src, err := os.ReadFile(referencePath)
	if err != nil {
		t.Skip("the platform's OpenAPI file is not beside the checkout: the tests use testdata/openapi.json as it is")
	}
	got, err := generate(src)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, factsJSON) {
		t.Fatal("testdata/openapi.json differs from what the OpenAPI file generates: run this test with -update and commit it")
	}
}

type rawSpec struct {
	Paths      map[string]map[string]rawOperation `yaml:"paths"`
	Components struct {
		Schemas map[string]rawSchema `yaml:"schemas"`
	} `yaml:"components"`
}

type rawOperation struct {
	Parameters []struct {
		Name string `yaml:"name"`
		In   string `yaml:"in"`
	} `yaml:"parameters"`
	RequestBody struct {
		Content map[string]struct {
			Schema rawSchema `yaml:"schema"`
		} `yaml:"content"`
	} `yaml:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema rawSchema `yaml:"schema"`
		} `yaml:"content"`
	} `yaml:"responses"`
}

type rawSchema struct {
	Ref        string     `yaml:"$ref"`
	Type       string     `yaml:"type"`
	Required   []string   `yaml:"required"`
	Properties yaml.Node  `yaml:"properties"`
	Items      *rawSchema `yaml:"items"`
}

// methods in the order the copy lists an operation's methods.
var methods = []string{"get", "post", "put", "patch", "delete"}

func generate(src []byte) ([]byte, error) {
	var spec rawSpec
	if err := yaml.Unmarshal(src, &spec); err != nil {
		return nil, fmt.Errorf("parse the OpenAPI file: %w", err)
	}
	facts := Facts{Schemas: map[string]Schema{}}
	for name, raw := range spec.Components.Schemas {
		s, err := schema(spec, name, raw)
		if err != nil {
			return nil, err
		}
		facts.Schemas[name] = s
	}
	paths := make([]string, 0, len(spec.Paths))
	for p := range spec.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for m := range spec.Paths[p] {
			if !slices.Contains(methods, m) {
				return nil, fmt.Errorf("%s: unknown method %q", p, m)
			}
		}
		for _, m := range methods {
			raw, ok := spec.Paths[p][m]
			if !ok {
				continue
			}
			op, err := operation(spec, strings.ToUpper(m), p, raw)
			if err != nil {
				return nil, err
			}
			facts.Operations = append(facts.Operations, op)
		}
	}
	return encode(facts)
}

// encode writes the facts as JSON with one operation and one member a line, so that a change
// of the description shows as a change of the lines it touches.
func encode(facts Facts) ([]byte, error) {
	var buf bytes.Buffer
	line := func(v any, last bool) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.WriteString("  ")
		buf.Write(b)
		if !last {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
		return nil
	}
	buf.WriteString("{\n \"operations\": [\n")
	for i, op := range facts.Operations {
		if err := line(op, i == len(facts.Operations)-1); err != nil {
			return nil, err
		}
	}
	buf.WriteString(" ],\n \"schemas\": {\n")
	names := make([]string, 0, len(facts.Schemas))
	for n := range facts.Schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		s := facts.Schemas[n]
		fmt.Fprintf(&buf, "  %q: {\"name\": %q, \"members\": [", n, s.Name)
		for j, m := range s.Members {
			buf.WriteString("\n ")
			if err := line(m, j == len(s.Members)-1); err != nil {
				return nil, err
			}
			buf.Truncate(buf.Len() - 1) // the newline: the closing bracket follows
		}
		buf.WriteString("]}")
		if i < len(names)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString(" }\n}\n")
	// The copy must decode to what was written.
	var back Facts
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		return nil, fmt.Errorf("the generated copy: %w", err)
	}
	return buf.Bytes(), nil
}

func operation(spec rawSpec, method, path string, raw rawOperation) (Operation, error) {
	op := Operation{Method: method, Path: path}
	for _, p := range raw.Parameters {
		if p.In == "query" && p.Name == "filter" {
			op.Filter = true
		}
	}
	var err error
	if body, ok := raw.RequestBody.Content["application/json"]; ok {
		if op.Request, err = schemaName(spec, body.Schema); err != nil {
			return op, fmt.Errorf("%s %s request: %w", method, path, err)
		}
	}
	// The success response: the lowest 2xx status with a JSON body.
	var codes []string
	for code, r := range raw.Responses {
		if _, ok := r.Content["application/json"]; ok && strings.HasPrefix(code, "2") {
			codes = append(codes, code)
		}
	}
	sort.Strings(codes)
	if len(codes) > 0 {
		if op.Response, err = schemaName(spec, raw.Responses[codes[0]].Content["application/json"].Schema); err != nil {
			return op, fmt.Errorf("%s %s response: %w", method, path, err)
		}
	}
	return op, nil
}

// schemaName names the component schema s refers to.
func schemaName(spec rawSpec, s rawSchema) (string, error) {
	name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/")
	if !ok {
		return "", fmt.Errorf("an inline schema (the copy knows only named ones)")
	}
	if _, ok := spec.Components.Schemas[name]; !ok {
		return "", fmt.Errorf("unknown schema %s", name)
	}
	return name, nil
}

func schema(spec rawSpec, name string, raw rawSchema) (Schema, error) {
	out := Schema{Name: name, Members: []Member{}}
	if raw.Type != "object" {
		return out, fmt.Errorf("schema %s: type %q", name, raw.Type)
	}
	props := raw.Properties.Content
	for i := 0; i+1 < len(props); i += 2 {
		var p rawSchema
		if err := props[i+1].Decode(&p); err != nil {
			return out, fmt.Errorf("schema %s: %w", name, err)
		}
		m, err := member(spec, props[i].Value, p)
		if err != nil {
			return out, fmt.Errorf("schema %s: %w", name, err)
		}
		m.Required = slices.Contains(raw.Required, m.Name)
		out.Members = append(out.Members, m)
	}
	return out, nil
}

func member(spec rawSpec, name string, p rawSchema) (Member, error) {
	m := Member{Name: name, Type: p.Type}
	var err error
	switch {
	case p.Ref != "":
		if m.Ref, err = schemaName(spec, p); err != nil {
			return m, fmt.Errorf("%s: %w", name, err)
		}
		m.Type = spec.Components.Schemas[m.Ref].Type
	case p.Type == "array" && p.Items != nil && p.Items.Ref != "":
		if m.Ref, err = schemaName(spec, *p.Items); err != nil {
			return m, fmt.Errorf("%s: %w", name, err)
		}
		m.Items = spec.Components.Schemas[m.Ref].Type
	case p.Type == "array" && p.Items != nil:
		m.Items = p.Items.Type
	case p.Type == "array":
		return m, fmt.Errorf("%s: an array without items", name)
	case p.Properties.Kind != 0:
		return m, fmt.Errorf("%s: an inline object (the copy knows only named ones)", name)
	}
	if !slices.Contains([]string{"string", "boolean", "integer", "number", "array", "object"}, m.Type) {
		return m, fmt.Errorf("%s: type %q", name, m.Type)
	}
	return m, nil
}
