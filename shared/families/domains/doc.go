// Package domains holds the families of names and addresses the service hands out: reserved
// addresses (/reserved_addrs).
//
// The conventions it implements:
//   - Configuration comes from the environment when the routes are registered (FromEnv):
//     BASE_DOMAIN (default tunnels.example.com), REGIONS (comma-separated, the first is the
//     default region; default us,eu,ap,au,sa,jp,in) and ADDR_POOLS
//     ("<region>=<host>[,<host>…]:<low>-<high>" separated by ';'; by default every region r has
//     tcp.<r>.<BASE_DOMAIN> with ports 10000-19999). Pools of different regions may not share
//     an address. An invalid configuration stops the function at start.
//   - A reserved address's addr is host:port allocated from its region's pool. A guard item per
//     address (U#tcp_addr#<host:port>), written in the reservation's own transaction with the
//     condition that it does not exist, makes every address held by at most one reservation;
//     deleting the reservation deletes the guard in the same transaction. A reservation first
//     tries a few random addresses (one transaction each, the first almost always wins), then
//     reads the guards of consecutive addresses a batch at a time to find free ones.
//   - region not configured is 400 ERR_NGROK_500 naming the region; a region whose pool has no
//     free address is 400 ERR_NGROK_503 (a client error, like every refusal of this API:
//     nothing a client sends may produce a 5xx). Over-long description and metadata are
//     504 and 505; a PATCH supplying neither is 506. The addr and region never change.
//   - Audit events are of kind tcp_address.
package domains
