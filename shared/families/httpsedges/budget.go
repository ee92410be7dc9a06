package httpsedges

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"tunnelapi/shared/families/edges"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/store"
)

// Limits of one HTTPS edge. Its routes live in its item, and deleting it is one transaction
// that deletes the item, releases its hostports and drops every reference it holds: both must
// stay within DynamoDB's limits (400 KB an item, 100 writes a transaction) whatever the edge
// holds, so every write that grows the edge is refused (7128) when the result would not fit.
const (
	// MaxRoutes is the most routes an edge holds.
	MaxRoutes = 50
	// MaxItemBytes bounds the edge's stored item, below DynamoDB's 400 KB.
	MaxItemBytes = 380 << 10
	// MaxRenderedBytes bounds the edge as its events carry it (JSON, on the longest host a URI
	// can have): each event's outbox and log items hold it whole and are items of at most
	// 400 KB too, with the envelope beside it.
	MaxRenderedBytes = 360 << 10
	// maxTransactWrites is DynamoDB's limit on one transaction's writes.
	maxTransactWrites = 100
	// deleteOverhead is what an edge's delete writes besides its references and hostport
	// guards: the item, the event (outbox and log items) and the caller's two guards.
	deleteOverhead = 1 + 2 + 2
)

// checkBudget refuses an edge whose deletion would not fit one transaction or whose item would
// not fit DynamoDB's item size; field names what grew it.
func checkBudget(modules *edges.Set[HTTPSEdgeItem], it *HTTPSEdgeItem, field string) (err error) {
	defer derrors.Wrap(&err, "httpsedges.checkBudget")
	if n := len(it.Routes); n > MaxRoutes {
		return api.BadRequest(CodeEdgeFull, field, "an HTTPS edge has at most %d routes", MaxRoutes)
	}
	if w := deleteWrites(modules, it); w > maxTransactWrites {
		return api.BadRequest(CodeEdgeFull, field, "the edge's hostports, modules and routes would reference %d distinct resources; "+
			"deleting an edge is one transaction of at most %d writes, so an edge holds at most %d hostports and references together",
			w-deleteOverhead, maxTransactWrites, maxTransactWrites-deleteOverhead)
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return fmt.Errorf("marshal the edge: %w", err)
	}
	if n := store.ItemSize(av); n > MaxItemBytes {
		return api.BadRequest(CodeEdgeFull, field, "the edge's routes and modules would take %d bytes; an HTTPS edge holds at most %d", n, MaxItemBytes)
	}
	common := edges.EdgeJSON{ID: it.ID, DescribedJSON: it.Described.Rendered(), CreatedAt: api.Timestamp(it.CreatedAt),
		URI: sizing.URI(edgesPath + "/" + it.ID), Hostports: it.Hostports}
	b, err := json.Marshal(renderEdge(sizing, it, common))
	if err != nil {
		return fmt.Errorf("render the edge: %w", err)
	}
	if len(b) > MaxRenderedBytes {
		return api.BadRequest(CodeEdgeFull, field, "the edge with its routes and modules would render as %d bytes of JSON; an HTTPS edge renders as at most %d (its events carry it whole)", len(b), MaxRenderedBytes)
	}
	return nil
}

// sizing is a request on the longest host a URI can have (a 253-byte name and a port), so that
// the size of an edge rendered for it bounds every rendering of the edge.
var sizing = &api.Request{HTTP: &http.Request{Host: strings.Repeat("h", 253) + ":65535", Header: http.Header{}}}

// deleteWrites is the number of writes deleting it takes: one per distinct reference (the
// reserved domains of its hostports, its modules' and its routes' modules' referenced
// resources, modules being the edge's module set), one per hostport guard, and deleteOverhead.
func deleteWrites(modules *edges.Set[HTTPSEdgeItem], it *HTTPSEdgeItem) int {
	var c edges.Claim
	for _, hp := range it.Hostports {
		if id := it.Reservations[hp]; id != "" {
			c.Reference(id, nil)
		}
	}
	modules.Claim(&c, it)
	for _, rt := range it.Routes {
		routeModules.Claim(&c, rt)
	}
	return len(c.Refs) + len(it.Hostports) + deleteOverhead
}
