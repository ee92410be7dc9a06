package cfnspec

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is one way a template departs from the specification.
type Problem struct {
	Line, Column int
	Path         string // where in the template: Resources.Table.Properties.KeySchema[0].KeyType
	Message      string
}

// String is the problem as a test reports it: line:column: path: message.
func (p Problem) String() string {
	return fmt.Sprintf("%d:%d: %s: %s", p.Line, p.Column, p.Path, p.Message)
}

// Sections CloudFormation (and, for Globals, SAM) knows at a template's top level.
var sections = []string{"AWSTemplateFormatVersion", "Description", "Metadata", "Parameters", "Rules",
	"Mappings", "Conditions", "Transform", "Globals", "Resources", "Outputs"}

// Attributes a resource may have beside Type and Properties.
var attributes = []string{"Type", "Properties", "DependsOn", "Condition", "Metadata", "DeletionPolicy",
	"UpdateReplacePolicy", "CreationPolicy", "UpdatePolicy"}

// The values CloudFormation takes for the two policy attributes.
var (
	deletionPolicies      = []string{"Delete", "Retain", "RetainExceptOnCreate", "Snapshot"}
	updateReplacePolicies = []string{"Delete", "Retain", "Snapshot"}
)

// SAM's Globals sections, each for the AWS::Serverless::<section> resources.
var globalsSections = []string{"Api", "Function", "HttpApi", "LayerVersion", "SimpleTable", "StateMachine"}

// Intrinsic functions: long form "Fn::<name>" (or "Ref"), short form "!<name>".
var intrinsics = []string{"Base64", "Cidr", "FindInMap", "GetAtt", "GetAZs", "ImportValue", "Join",
	"Select", "Split", "Sub", "Transform", "If", "Equals", "And", "Or", "Not", "ToJsonString", "Length"}

// customResource is the specification's type for every Custom::<name> resource.
const customResource = "AWS::CloudFormation::CustomResource"

// Check parses a template (YAML, short-form intrinsic tags included, or JSON) and returns what
// departs from the specification, in the order of the template's lines. The error is for a
// template that is not YAML at all.
func (s *Spec) Check(template []byte) ([]Problem, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(template, &doc); err != nil {
		return nil, fmt.Errorf("parse the template: %w", err)
	}
	c := &checker{spec: s}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		c.add(&yaml.Node{Line: 1, Column: 1}, "", "the template is not an object")
		return c.problems, nil
	}
	c.template(doc.Content[0])
	sort.SliceStable(c.problems, func(i, j int) bool {
		a, b := c.problems[i], c.problems[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return c.problems, nil
}

type checker struct {
	spec     *Spec
	problems []Problem
	// fromGlobals: nodes of the Globals section. They are checked there, once; merged into a
	// resource they only count towards its required properties.
	fromGlobals map[*yaml.Node]bool
}

func (c *checker) add(n *yaml.Node, path, format string, args ...any) {
	if c.fromGlobals[n] {
		return
	}
	c.problems = append(c.problems, Problem{Line: n.Line, Column: n.Column, Path: path,
		Message: fmt.Sprintf(format, args...)})
}

// pairs calls f for each key and value of a mapping, after reporting a key seen before.
func (c *checker) pairs(n *yaml.Node, path string, f func(key, value *yaml.Node, path string)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		p := join(path, k.Value)
		if seen[k.Value] {
			c.add(k, p, "duplicate key %s", k.Value)
			continue
		}
		seen[k.Value] = true
		f(k, v, p)
	}
}

func (c *checker) template(root *yaml.Node) {
	var resources, globals *yaml.Node
	transforms := map[string]bool{}
	c.pairs(root, "", func(k, v *yaml.Node, path string) {
		switch k.Value {
		case "Resources":
			resources = v
		case "Globals":
			globals = v
		case "Transform":
			for _, t := range append([]*yaml.Node{v}, v.Content...) {
				if t.Kind == yaml.ScalarNode {
					transforms[t.Value] = true
				}
			}
		default:
			if !slices.Contains(sections, k.Value) {
				c.add(k, path, "unknown template section %s (known: %s)", k.Value, strings.Join(sections, ", "))
			}
		}
	})
	globalsByType := c.globals(globals)
	if resources == nil || resources.Kind != yaml.MappingNode || len(resources.Content) == 0 {
		c.add(root, "Resources", "the template has no resources")
		return
	}
	c.pairs(resources, "Resources", func(k, v *yaml.Node, path string) {
		c.resource(v, path, transforms, globalsByType)
	})
}

// globals checks the Globals section (no required properties: a resource may supply them) and
// returns each section by the resource type it applies to.
func (c *checker) globals(g *yaml.Node) map[string]*yaml.Node {
	byType := map[string]*yaml.Node{}
	if g == nil {
		return byType
	}
	if g.Kind != yaml.MappingNode {
		c.add(g, "Globals", "Globals is not an object")
		return byType
	}
	c.pairs(g, "Globals", func(k, v *yaml.Node, path string) {
		typ := "AWS::Serverless::" + k.Value
		ts := c.spec.ResourceTypes[typ]
		if !slices.Contains(globalsSections, k.Value) || ts == nil {
			c.add(k, path, "unknown Globals section %s (known: %s)", k.Value, strings.Join(globalsSections, ", "))
			return
		}
		if v.Kind != yaml.MappingNode {
			c.add(v, path, "a Globals section is an object of %s properties", typ)
			return
		}
		c.properties(v, path, ts, typ, typ, false)
		byType[typ] = v
	})
	c.fromGlobals = map[*yaml.Node]bool{}
	var mark func(n *yaml.Node)
	mark = func(n *yaml.Node) {
		c.fromGlobals[n] = true
		for _, x := range n.Content {
			mark(x)
		}
	}
	mark(g)
	return byType
}

func (c *checker) resource(r *yaml.Node, path string, transforms map[string]bool, globals map[string]*yaml.Node) {
	if r.Kind != yaml.MappingNode {
		c.add(r, path, "a resource is an object with a Type")
		return
	}
	var typeNode, props *yaml.Node
	c.pairs(r, path, func(k, v *yaml.Node, p string) {
		switch k.Value {
		case "Type":
			typeNode = v
		case "Properties":
			props = v
		case "DeletionPolicy":
			c.oneOf(v, p, deletionPolicies)
		case "UpdateReplacePolicy":
			c.oneOf(v, p, updateReplacePolicies)
		default:
			if !slices.Contains(attributes, k.Value) {
				c.add(k, p, "unknown resource attribute %s (known: %s)", k.Value, strings.Join(attributes, ", "))
			}
		}
	})
	if typeNode == nil || typeNode.Kind != yaml.ScalarNode || typeNode.Value == "" {
		c.add(r, path, "the resource has no Type")
		return
	}
	typ := typeNode.Value
	if strings.HasPrefix(typ, "Custom::") {
		typ = customResource
	}
	ts := c.spec.ResourceTypes[typ]
	if ts == nil {
		c.add(typeNode, path+".Type", "unknown resource type %s (not in the specification)", typ)
		return
	}
	if ts.RequiredTransform != "" && !transforms[ts.RequiredTransform] {
		c.add(typeNode, path+".Type", "%s needs Transform: %s", typ, ts.RequiredTransform)
	}
	if props == nil {
		props = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: r.Line, Column: r.Column}
	}
	if props.Kind != yaml.MappingNode {
		c.add(props, path+".Properties", "Properties is not an object")
		return
	}
	if g := globals[typ]; g != nil {
		props = merge(g, props)
	}
	c.properties(props, path+".Properties", ts, typ, typ, true)
}

func (c *checker) oneOf(v *yaml.Node, path string, values []string) {
	if _, ok := intrinsicName(v); ok {
		return
	}
	if v.Kind != yaml.ScalarNode || !slices.Contains(values, v.Value) {
		c.add(v, path, "%q is none of %s", v.Value, strings.Join(values, ", "))
	}
}

// properties checks an object against a resource or property type (label names it in
// messages; owner is the resource type its property types belong to).
func (c *checker) properties(n *yaml.Node, path string, ts *TypeSpec, label, owner string, required bool) {
	// SAM's event sources: a union of event types, told apart by the sibling Type.
	var eventType *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if v := n.Content[i+1]; n.Content[i].Value == "Type" && v.Kind == yaml.ScalarNode && !isShortForm(v) {
			eventType = v
		}
	}
	seen := map[string]bool{}
	c.pairs(n, path, func(k, v *yaml.Node, p string) {
		seen[k.Value] = true
		prop := ts.Properties[k.Value]
		if prop == nil {
			if !ts.AdditionalProperties {
				c.add(k, p, "unknown property %s of %s (known: %s)", k.Value, label, strings.Join(names(ts.Properties), ", "))
			}
			return
		}
		var discriminator *yaml.Node
		if len(prop.Types) > 1 {
			discriminator = eventType
		}
		c.value(v, p, shapeOf(prop), owner, discriminator)
	})
	if !required {
		return
	}
	for _, name := range names(ts.Properties) {
		if ts.Properties[name].Required && !seen[name] {
			c.add(n, path, "missing required property %s of %s", name, label)
		}
	}
}

// value checks one value against the shapes the specification allows for it.
func (c *checker) value(n *yaml.Node, path string, sh shape, owner string, discriminator *yaml.Node) {
	n = deref(n)
	if c.intrinsic(n, path) {
		return
	}
	if slices.Contains(sh.primitives, "Json") {
		c.intrinsicsWithin(n, path)
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			c.add(n, path, "no value; expected %s", c.describe(sh, owner))
			return
		}
		if len(sh.primitives) == 0 {
			c.add(n, path, "%q is a scalar; expected %s", n.Value, c.describe(sh, owner))
			return
		}
		for _, p := range sh.primitives {
			if fits(n, p) {
				return
			}
		}
		c.add(n, path, "%q is not %s", n.Value, c.describe(sh, owner))
	case yaml.SequenceNode:
		if sh.list == nil {
			c.add(n, path, "a list; expected %s", c.describe(sh, owner))
			return
		}
		for i, item := range n.Content {
			c.value(item, fmt.Sprintf("%s[%d]", path, i), *sh.list, owner, nil)
		}
	case yaml.MappingNode:
		switch {
		case len(sh.structs) > 0:
			c.object(n, path, sh.structs, owner, discriminator)
		case sh.mapOf != nil:
			c.pairs(n, path, func(_, v *yaml.Node, p string) { c.value(v, p, *sh.mapOf, owner, nil) })
		default:
			c.add(n, path, "an object; expected %s", c.describe(sh, owner))
		}
	}
}

// object checks an object against one of the property types it may be.
func (c *checker) object(n *yaml.Node, path string, types []string, owner string, discriminator *yaml.Node) {
	if len(types) == 1 {
		c.propertyType(n, path, types[0], owner)
		return
	}
	if discriminator != nil {
		if want := discriminator.Value + "Event"; slices.Contains(types, want) {
			c.propertyType(n, path, want, owner)
			return
		}
		known := make([]string, len(types))
		for i, t := range types {
			known[i] = strings.TrimSuffix(t, "Event")
		}
		c.add(discriminator, strings.TrimSuffix(path, ".Properties")+".Type",
			"event type %s is not in the specification (known: %s)", discriminator.Value, strings.Join(known, ", "))
		return
	}
	// No discriminator: the value is whichever type it fits; if none, the problems of the type
	// that knows most of its keys (then the one with fewest problems).
	var closest []Problem
	bestKnown := -1
	for _, t := range types {
		try := &checker{spec: c.spec, fromGlobals: c.fromGlobals}
		try.propertyType(n, path, t, owner)
		if len(try.problems) == 0 {
			return
		}
		known := 0
		if ts, _ := c.spec.propertyType(owner, t); ts != nil {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if ts.Properties[n.Content[i].Value] != nil {
					known++
				}
			}
		}
		if known > bestKnown || known == bestKnown && len(try.problems) < len(closest) {
			closest, bestKnown = try.problems, known
		}
	}
	c.problems = append(c.problems, closest...)
}

func (c *checker) propertyType(n *yaml.Node, path, name, owner string) {
	ts, full := c.spec.propertyType(owner, name)
	switch {
	case ts == nil:
		c.add(n, path, "the specification has no property type %s", full)
	case ts.Properties == nil && (ts.PrimitiveType != "" || ts.Type != ""):
		c.value(n, path, shapeOf(&ts.Property), owner, nil)
	default:
		c.properties(n, path, ts, full, owner, true)
	}
}

// intrinsic reports whether n is an intrinsic function call, and reports an unknown one.
func (c *checker) intrinsic(n *yaml.Node, path string) bool {
	name, ok := intrinsicName(n)
	if ok && name != "Ref" && name != "Condition" && !slices.Contains(intrinsics, name) {
		if isShortForm(n) {
			c.add(n, path, "unknown tag !%s", name)
		} else {
			c.add(n, path, "unknown intrinsic function Fn::%s", name)
		}
	}
	return ok
}

// intrinsicsWithin reports unknown intrinsic functions anywhere in a free-form (Json) value.
func (c *checker) intrinsicsWithin(n *yaml.Node, path string) {
	c.intrinsic(n, path)
	for i, x := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		if n.Kind == yaml.MappingNode {
			if i%2 == 0 {
				continue
			}
			p = join(path, n.Content[i-1].Value)
		}
		c.intrinsicsWithin(deref(x), p)
	}
}

// intrinsicName is the function n calls (GetAtt, Ref, ...), if it is a call: a short-form tag,
// or an object whose one key is Ref, Condition or Fn::<name>.
func intrinsicName(n *yaml.Node) (string, bool) {
	if isShortForm(n) {
		return strings.TrimPrefix(n.Tag, "!"), true
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return "", false
	}
	switch k := n.Content[0].Value; {
	case k == "Ref":
		return k, true
	case strings.HasPrefix(k, "Fn::"):
		return strings.TrimPrefix(k, "Fn::"), true
	}
	return "", false
}

// isShortForm: a local tag (!Ref), not one of YAML's own (!!str).
func isShortForm(n *yaml.Node) bool {
	return strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!")
}

// fits reports whether a literal scalar is of a primitive type as CloudFormation reads it
// (numbers and booleans may be quoted; anything scalar is a string).
func fits(n *yaml.Node, primitive string) bool {
	v := strings.TrimSpace(n.Value)
	switch primitive {
	case "String", "Timestamp", "Json":
		return true
	case "Integer", "Long":
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil
	case "Double":
		_, err := strconv.ParseFloat(v, 64)
		return err == nil
	case "Boolean":
		return strings.EqualFold(v, "true") || strings.EqualFold(v, "false")
	}
	return false
}

// merge is SAM's merge of a Globals section (g) into a resource's own value (r): objects merge
// key by key with the resource's value winning, lists concatenate, anything else is the
// resource's. Intrinsic calls are values, not objects to merge.
func merge(g, r *yaml.Node) *yaml.Node {
	g, r = deref(g), deref(r)
	_, gCall := intrinsicName(g)
	_, rCall := intrinsicName(r)
	switch {
	case g.Kind == yaml.MappingNode && r.Kind == yaml.MappingNode && !gCall && !rCall:
		out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: r.Line, Column: r.Column}
		own := map[string]*yaml.Node{}
		for i := 0; i+1 < len(r.Content); i += 2 {
			if _, dup := own[r.Content[i].Value]; !dup {
				own[r.Content[i].Value] = r.Content[i+1]
			}
		}
		inGlobals := map[string]bool{}
		for i := 0; i+1 < len(g.Content); i += 2 {
			k, v := g.Content[i], g.Content[i+1]
			inGlobals[k.Value] = true
			if rv, ok := own[k.Value]; ok {
				v = merge(v, rv)
			}
			out.Content = append(out.Content, k, v)
		}
		for i := 0; i+1 < len(r.Content); i += 2 {
			if !inGlobals[r.Content[i].Value] {
				out.Content = append(out.Content, r.Content[i], r.Content[i+1])
			}
		}
		return out
	case g.Kind == yaml.SequenceNode && r.Kind == yaml.SequenceNode && !isShortForm(g) && !isShortForm(r):
		out := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: r.Line, Column: r.Column}
		out.Content = append(append(out.Content, g.Content...), r.Content...)
		return out
	}
	return r
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// shape is what a value may be: a scalar of one of the primitives, an object of one of the
// property types, a list of items of one shape, a map (any keys) of values of one shape.
type shape struct {
	primitives []string
	structs    []string
	list       *shape
	mapOf      *shape
}

func shapeOf(p *Property) shape {
	var s shape
	item := shape{}
	if p.ItemType != "" {
		item.structs = []string{p.ItemType}
	}
	if p.PrimitiveItemType != "" {
		item.primitives = []string{p.PrimitiveItemType}
	}
	switch p.Type {
	case "":
	case "List":
		s.list = &item
	case "Map":
		s.mapOf = &item
	default:
		s.structs = []string{p.Type}
	}
	if p.PrimitiveType != "" {
		s.primitives = append(s.primitives, p.PrimitiveType)
	}
	s.primitives = append(s.primitives, p.PrimitiveTypes...)
	s.structs = append(s.structs, p.Types...)
	if len(p.PrimitiveItemTypes) > 0 {
		s.list = &shape{primitives: p.PrimitiveItemTypes}
	}
	if len(p.InclusiveItemTypes)+len(p.InclusivePrimitiveItemTypes) > 0 {
		inclusive := shape{primitives: p.InclusivePrimitiveItemTypes}
		if p.InclusiveItemPattern {
			inclusive.mapOf = &shape{structs: p.InclusiveItemTypes}
		} else {
			inclusive.structs = p.InclusiveItemTypes
		}
		s.list = &inclusive
	}
	return s
}

// describe says what a shape is for messages: "an Integer", "a list of (an object (X))", with
// property types by their full names.
func (c *checker) describe(s shape, owner string) string {
	var parts []string
	for _, p := range s.primitives {
		parts = append(parts, article(p)+" "+p)
	}
	for _, t := range s.structs {
		_, full := c.spec.propertyType(owner, t)
		parts = append(parts, "an object ("+full+")")
	}
	if s.list != nil {
		parts = append(parts, "a list of ("+c.describe(*s.list, owner)+")")
	}
	if s.mapOf != nil {
		parts = append(parts, "a map of ("+c.describe(*s.mapOf, owner)+")")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " or ")
}

func article(word string) string {
	if strings.ContainsRune("AEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}
