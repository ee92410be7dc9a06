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
// kind with Reference and Release, check an id with CheckID and render it with Ref. A kind is
// one row of the kind table (kind), its item, body and wire types, and the item's apply and
// wire methods; failover and weighted backends never reference one another in a cycle
// (the walk in Composite.link).
package backends
