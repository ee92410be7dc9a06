package celcheck

import "strings"

type kind uint8

const (
	kindDyn kind = iota
	kindError
	kindNull
	kindBool
	kindInt
	kindUint
	kindDouble
	kindString
	kindBytes
	kindTimestamp
	kindDuration
	kindList
	kindMap
	kindType
	kindParam
	kindFunction
)

// Type is a CEL type as the checker sees it: a primitive, list(E), map(K, V), type(T), or a
// type parameter.
type Type struct {
	kind   kind
	name   string // a type parameter's name
	params []*Type
}

var (
	dynType       = &Type{kind: kindDyn}
	errorType     = &Type{kind: kindError}
	nullType      = &Type{kind: kindNull}
	boolType      = &Type{kind: kindBool}
	intType       = &Type{kind: kindInt}
	uintType      = &Type{kind: kindUint}
	doubleType    = &Type{kind: kindDouble}
	stringType    = &Type{kind: kindString}
	bytesType     = &Type{kind: kindBytes}
	timestampType = &Type{kind: kindTimestamp}
	durationType  = &Type{kind: kindDuration}
)

// Types of the values the platform's declarations use.
var (
	Dyn       = dynType
	Bool      = boolType
	Int       = intType
	Double    = doubleType
	String    = stringType
	Bytes     = bytesType
	Timestamp = timestampType
	Duration  = durationType
)

// ListOf is list(e).
func ListOf(e *Type) *Type { return &Type{kind: kindList, params: []*Type{e}} }

// MapOf is map(k, v).
func MapOf(k, v *Type) *Type { return &Type{kind: kindMap, params: []*Type{k, v}} }

func typeOf(t *Type) *Type { return &Type{kind: kindType, params: []*Type{t}} }

func param(name string) *Type { return &Type{kind: kindParam, name: name} }

var primitiveNames = map[kind]string{kindDyn: "dyn", kindError: "*error*", kindNull: "null_type", kindBool: "bool",
	kindInt: "int", kindUint: "uint", kindDouble: "double", kindString: "string", kindBytes: "bytes",
	kindTimestamp: "google.protobuf.Timestamp", kindDuration: "google.protobuf.Duration"}

// String is the type as CEL writes it, such as list(string).
func (t *Type) String() string {
	switch t.kind {
	case kindList:
		return "list(" + t.params[0].String() + ")"
	case kindMap:
		return "map(" + t.params[0].String() + ", " + t.params[1].String() + ")"
	case kindType:
		if len(t.params) == 0 {
			return "type"
		}
		return "type(" + t.params[0].String() + ")"
	case kindParam:
		return t.name
	case kindFunction:
		return "function"
	}
	return primitiveNames[t.kind]
}

// IsBool says whether t is bool, and IsDyn whether it is dyn.
func (t *Type) IsBool() bool { return t.kind == kindBool }

// IsDyn says whether t is dyn.
func (t *Type) IsDyn() bool { return t.kind == kindDyn }

// same is exact equality (type parameters by name).
func (t *Type) same(u *Type) bool {
	if t == u {
		return true
	}
	if t.kind != u.kind || t.name != u.name || len(t.params) != len(u.params) {
		return false
	}
	for i := range t.params {
		if !t.params[i].same(u.params[i]) {
			return false
		}
	}
	return true
}

// parseType reads the notation of the generated declarations: int, list(<A>), map(<A>, <B>).
func parseType(s string) *Type {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "<") {
		return param(strings.Trim(s, "<>"))
	}
	name, rest, composite := strings.Cut(s, "(")
	if !composite {
		for k, n := range primitiveNames {
			if n == s {
				return &Type{kind: k}
			}
		}
		if s == "type" {
			return &Type{kind: kindType}
		}
		panic("celcheck: unknown type " + s)
	}
	args := splitTop(strings.TrimSuffix(rest, ")"))
	switch name {
	case "list":
		return ListOf(parseType(args[0]))
	case "map":
		return MapOf(parseType(args[0]), parseType(args[1]))
	case "type":
		return typeOf(parseType(args[0]))
	}
	panic("celcheck: unknown type " + s)
}

// splitTop splits s at the commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// mapping holds the substitutions of type parameters found while checking.
type mapping map[string]*Type

func (m mapping) copy() mapping {
	c := make(mapping, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (m mapping) find(t *Type) (*Type, bool) {
	s, ok := m[t.String()]
	return s, ok
}

func isDyn(t *Type) bool { return t.kind == kindDyn }

func isDynOrError(t *Type) bool { return t.kind == kindDyn || t.kind == kindError }

// isEqualOrLessSpecific says whether t1 is t2 or matches it through dyn.
func isEqualOrLessSpecific(t1, t2 *Type) bool {
	if isDyn(t1) || t1.kind == kindParam {
		return true
	}
	if isDyn(t2) || t2.kind == kindParam {
		return false
	}
	if t1.kind != t2.kind {
		return false
	}
	switch t1.kind {
	case kindList:
		return isEqualOrLessSpecific(t1.params[0], t2.params[0])
	case kindMap:
		return isEqualOrLessSpecific(t1.params[0], t2.params[0]) && isEqualOrLessSpecific(t1.params[1], t2.params[1])
	case kindType:
		return true
	}
	return t1.same(t2)
}

// assignable says whether a value of t1 may be given where t2 is wanted, recording in m the
// substitutions of type parameters that makes it so (CEL's unification).
func assignable(m mapping, t1, t2 *Type) bool {
	if t2.kind == kindParam {
		valid, hasSub := validSubstitution(m, t1, t2)
		if valid {
			return true
		}
		if hasSub {
			return false
		}
	}
	if t1.kind == kindParam {
		valid, _ := validSubstitution(m, t2, t1)
		return valid
	}
	if isDynOrError(t1) || isDynOrError(t2) {
		return true
	}
	if t1.kind == kindNull {
		return nullable(t2)
	}
	if t2.kind == kindNull {
		return nullable(t1)
	}
	switch t1.kind {
	case kindType:
		return t2.kind == kindType
	case kindList, kindMap, kindFunction:
		return t1.kind == t2.kind && assignableList(m, t1.params, t2.params)
	}
	return t1.kind == t2.kind
}

func nullable(t *Type) bool {
	switch t.kind {
	case kindNull, kindTimestamp, kindDuration, kindFunction:
		return true
	}
	return false
}

func validSubstitution(m mapping, t1, t2 *Type) (valid, hasSub bool) {
	if t1.same(t2) {
		return true, true
	}
	if sub, found := m.find(t2); found {
		if t1.same(sub) {
			return true, true
		}
		if assignable(m, t1, sub) {
			general := mostGeneral(t1, sub)
			if notReferencedIn(m, t2, general) {
				m[t2.String()] = general
			}
			return true, true
		}
		return false, true
	}
	if notReferencedIn(m, t2, t1) {
		m[t2.String()] = t1
		return true, false
	}
	return false, false
}

func assignableList(m mapping, l1, l2 []*Type) bool {
	if len(l1) != len(l2) {
		return false
	}
	for i := range l1 {
		if !assignable(m, l1[i], l2[i]) {
			return false
		}
	}
	return true
}

func mostGeneral(t1, t2 *Type) *Type {
	if isEqualOrLessSpecific(t1, t2) {
		return t1
	}
	return t2
}

// notReferencedIn is the occurs check of unification.
func notReferencedIn(m mapping, t, within *Type) bool {
	if t.same(within) {
		return false
	}
	switch within.kind {
	case kindParam:
		sub, found := m.find(within)
		if !found {
			return true
		}
		return notReferencedIn(m, t, sub)
	case kindList, kindMap, kindType, kindFunction:
		for _, p := range within.params {
			if !notReferencedIn(m, t, p) {
				return false
			}
		}
	}
	return true
}

// substitute replaces bound type parameters; unbound ones become dyn when toDyn is set.
func substitute(m mapping, t *Type, toDyn bool) *Type {
	if sub, found := m.find(t); found {
		return substitute(m, sub, toDyn)
	}
	if toDyn && t.kind == kindParam {
		return dynType
	}
	if len(t.params) == 0 {
		return t
	}
	ps := make([]*Type, len(t.params))
	for i, p := range t.params {
		ps[i] = substitute(m, p, toDyn)
	}
	return &Type{kind: t.kind, name: t.name, params: ps}
}
