package main

import (
	"bytes"
	"fmt"
	"go/format"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"tunnelapi/shared/platform/resource"
)

// decodersFile is the file of each family package holding its item types' decoders.
const decodersFile = "items_decode.go"

// module is the import path every package of the repository starts with.
const module = "tunnelapi/"

// decoders returns, by path, the decoders of the item types of families (store.Decoder): for
// each package of shared/families declaring one, a file with a DecodeAttrs per item type,
// which reads each attribute as Unmarshal does (a string, number, boolean or list of strings
// with store.Attrs' readers, any other field through attributevalue.Unmarshal of its attribute
// alone), so that a GET or a list page decodes its items without reflection over the whole type.
// A type whose attribute names the generator cannot resolve as attributevalue does (an embedded
// pointer, one name at one depth twice) gets none, and is decoded by Unmarshal.
func decoders(families []*resource.Descriptor) (map[string][]byte, error) {
	byPkg := map[string][]reflect.Type{}
	for _, d := range families {
		t := d.Binding().ItemType()
		if t == nil || reflect.PointerTo(t).Implements(unmarshaler) || !strings.HasPrefix(t.PkgPath(), module+"shared/families/") || slices.Contains(byPkg[t.PkgPath()], t) {
			continue
		}
		byPkg[t.PkgPath()] = append(byPkg[t.PkgPath()], t)
	}
	out := map[string][]byte{}
	for pkg, types := range byPkg {
		slices.SortFunc(types, func(a, b reflect.Type) int { return strings.Compare(a.Name(), b.Name()) })
		var b bytes.Buffer
		fmt.Fprintf(&b, "// %s\n\npackage %s\n\nimport \"tunnelapi/shared/platform/store\"\n", header, path.Base(pkg))
		n := 0
		for _, t := range types {
			fields, ok := attributes(t, "it", 0)
			if !ok || !distinct(fields) {
				continue
			}
			n++
			fmt.Fprintf(&b, "\n// DecodeAttrs reads the item as store.Unmarshal does into a zero %s (store.Decoder).\n", t.Name())
			fmt.Fprintf(&b, "func (it *%s) DecodeAttrs(item store.Item) error {\n\ta := store.Attrs{Item: item}\n", t.Name())
			for _, f := range fields {
				b.WriteString("\t" + f.code() + "\n")
			}
			b.WriteString("\treturn a.Err()\n}\n")
		}
		if n == 0 {
			continue
		}
		src, err := format.Source(b.Bytes())
		if err != nil {
			return nil, fmt.Errorf("the decoders of %s: %w", pkg, err)
		}
		out[path.Join(strings.TrimPrefix(pkg, module), decodersFile)] = src
	}
	return out, nil
}

// unmarshaler is the interface of a type that decodes itself for attributevalue, which
// Unmarshal calls and a generated decoder would not.
var unmarshaler = reflect.TypeFor[attributevalue.Unmarshaler]()

// attribute is one attribute of an item type: its name, the Go expression of its field and the
// field's type, and its depth in embedded structs.
type attribute struct {
	name, expr string
	typ        reflect.Type
	depth      int
}

// code is the statement that reads a into its field.
func (a attribute) code() string {
	reader := ""
	if a.typ.PkgPath() == "" && a.typ.Name() != "" {
		reader = map[string]string{"string": "String", "int64": "Int", "bool": "Bool"}[a.typ.Name()]
	}
	switch {
	case reader != "":
		return fmt.Sprintf("%s = a.%s(%q)", a.expr, reader, a.name)
	case a.typ == reflect.TypeFor[int]():
		return fmt.Sprintf("%s = int(a.Int(%q))", a.expr, a.name)
	case a.typ == reflect.TypeFor[[]string]():
		return fmt.Sprintf("%s = a.Strings(%q)", a.expr, a.name)
	}
	return fmt.Sprintf("a.Value(%q, &%s)", a.name, a.expr)
}

// attributes lists the attributes of struct t, reached from expr, as attributevalue names them:
// a field's dynamodbav tag name, else its Go name; "-" and unexported fields skipped; an
// embedded struct without a tag name contributes its own fields. ok is false for what the
// generator does not resolve (an embedded pointer).
func attributes(t reflect.Type, expr string, depth int) (out []attribute, ok bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("dynamodbav")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct {
				return nil, false
			}
			inner, ok := attributes(f.Type, expr+"."+f.Name, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, inner...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, attribute{name: name, expr: expr + "." + f.Name, typ: f.Type, depth: depth})
	}
	return out, true
}

// distinct reports whether every attribute name is one field's: where Go's rules would pick
// the shallower of two, or none of two at one depth, the type is left to Unmarshal.
func distinct(fields []attribute) bool {
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.name] {
			return false
		}
		seen[f.name] = true
	}
	return true
}
