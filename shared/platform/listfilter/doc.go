// Package listfilter evaluates the list `filter` parameter: a restricted CEL dialect over
// `obj`, the resource as its GET returns it. It supports && || !, comparisons, `in`, size(),
// == null, timestamp("…"), timestamp(time.now) and .add("7d") / .subtract("24h") on
// timestamps — and nothing else: no indexing, arithmetic, ternaries or regular expressions. An
// invalid filter is the caller's 400 ERR_NGROK_250. A text member the wire form omits when it is
// empty (description, metadata) is "" to a filter, as the platform's filters see it, so
// `obj.description == ""` matches a resource without a description.
//
// The full cel-go library would add several megabytes and its package initialisation to every
// function that lists, against the 5 MB zip budget and the cold-start budget; this dialect is
// small enough to parse here.
package listfilter
