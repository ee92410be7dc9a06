// Package backends holds the five backend families: where an edge or route sends its traffic.
//
//   - tunnel group (/backends/tunnel_group, bkdtg): the online tunnels matching a label selector;
//   - static (/backends/static, bkdsc): a TCP address host:port, optionally dialled with TLS;
//   - HTTP response (/backends/http_response, bkdhr): a fixed status, headers and body;
//   - failover (/backends/failover, bkdfo): an ordered list of other backends, tried in order;
//   - weighted (/backends/weighted, bkdwd): other backends with weights 0–10000.
//
// Every kind shares one shape (Backends: create, get, list, update, delete with the family's
// generic rules), the platform's description and metadata codes (6503, 6504) and its delete
// refusal: a backend referenced by another backend, an edge or a route is not deleted (400
// ERR_NGROK_6502), decided in the delete's own transaction through the reference count every
// referrer keeps on it (resource.Mutation.Reference). Other families reference a backend of any
// kind with Reference and Release, check an id with CheckID and render it with Ref.
//
// A kind is one row of the kind table (its id prefix and names, from which its path, event
// kind, folder and Lambda function follow alike for every kind), its item, body and wire types,
// and the item's apply and wire methods. The shared hooks read bodies with
// resource.Described.DecodeCreate and DecodePatch (a PATCH supplies at least one of the body's
// pointer members) and open every wire form with resource.Head.
//
// # Codes
//
// 6501 a referenced backend does not exist in the account; 6502 a referenced backend cannot be
// deleted; 6503/6504 description/metadata too long; 6505 a static address not of the form
// host:port; 6506 a static address whose port or host is invalid; 6507 a static address without
// a host; 6508 more than MaxLabels tunnel group labels; 6509/6510 a label name/value empty or
// longer than MaxLabelBytes; 6531 '=' in a label; 6511 more than MaxWeightedBackends children of
// a weighted backend; 6512 a weight outside 0–10000; 6513 more than MaxFailoverBackends children
// of a failover backend; 6516 an HTTP response body longer than MaxResponseBodyBytes; 6517 a
// status code outside 100–599; 6522/6523 a response header name/value longer than
// MaxHeaderNameBytes/MaxHeaderValueBytes; 6524/6525 a weighted/failover backend naming a child
// it may not reference (a backend of its own kind, itself, or one whose children lead back to
// it); 6526 a referenced id that is no backend id at all; 6527 one with a backend kind's prefix
// that is not a well-formed id of that kind. A well-formed id of another backend kind in a path
// (GET /backends/static/bkdtg_…) is a 404 like any id of another kind. 6514 (no such backend) is
// left to the edges' backend modules. 6500, 6529 (plans), 6515 and 6528
// (online tunnels) and 6530 (header removal modules) name nothing this API decides.
//
// # References between backends
//
// A failover backend may reference tunnel group, static, HTTP response and weighted backends; a
// weighted backend tunnel group, static, HTTP response and failover backends. Nesting a kind in
// itself adds nothing the outer one cannot say (a list of lists is one list, weights of weights
// are products) and is refused (6525, 6524), as is a backend naming itself. Failover and
// weighted backends can still nest in each other, so references could form a cycle
// (F1 → W1 → F1), which the platform could never route: no write may create one.
//
// A create cannot close a cycle (nothing references a new id yet). An update that adds children
// walks the composite backends reachable from the added ones (one consistent batch read per
// level) and refuses the update (6525/6524) if it reaches the backend being updated. The walk is
// then made part of the update's transaction: it conditions on the version of every composite
// backend it read, and a backend's children change only with its version. So when the update
// commits, every backend it walked still has the children it read, the walk's answer is the
// truth at the commit, and the only edges that can close a cycle through the updated backend
// (the ones it adds) do not. Two concurrent updates that together would close a cycle each
// walked the other's backend; the first to commit changes that backend's version, so the
// second's transaction fails, is read and built again, walks again and is refused. The walk is
// bounded: an update whose added children reach more composite backends than fit in one
// transaction beside its own writes is refused (400, naming backends) rather than committed
// without the check. The walk costs one batch read per level of failover and weighted backends
// below the added ones; an update adding only tunnel group, static or HTTP response backends
// costs what any update does (a read and a transaction).
package backends
