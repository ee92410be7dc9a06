// Package celcheck parses, type-checks and estimates the cost of Common Expression Language
// (CEL) expressions without evaluating them, as cel-go's parser, checker and cost estimator
// do for an environment of its standard library and its strings, lists and encoders
// extensions (Standard), extended with variables and functions (Env.Extend). It links no
// protocol buffers, no ANTLR runtime and no interpreter: a validator that only needs to know
// whether an expression is well formed, of which type, and how costly, stays small and quick
// to start.
//
// It agrees with cel-go on what it accepts and refuses, on the type of what it accepts and on
// its estimated cost (TestAgreesWithCelGo compares them over a corpus, limits included);
// standard.txt is cel-go's declarations (TestStandardIsCelGos). Messages differ from cel-go's.
// What it does not have: protocol buffer types, which cel-go's type registry declares (so
// google.protobuf.Int64Value{value: 1}, google.protobuf.Any as a type name and
// google.protobuf.NullValue.NULL_VALUE are refused here and accepted there; the timestamp and
// duration types are here), optional syntax (refused as cel-go refuses it without
// cel.OptionalTypes), and the cost estimates of the lists extension's sort, sortBy and
// distinct and of json.encode, which the caller supplies (Costs.Overloads).
package celcheck
