// Package domains holds the families of names and addresses the service hands out: reserved
// addresses (/reserved_addrs), reserved domains (/reserved_domains) and agent ingresses
// (/agent_ingresses).
//
// The conventions it implements:
//   - Configuration is package config's Domains (BASE_DOMAIN, DNS_ZONE, NAME_SERVERS, REGIONS,
//     ADDR_POOLS; their defaults and meanings are config.Vars), parsed once when the function
//     starts: an invalid configuration stops it there. Pools of different regions may not share
//     an address.
//   - A reserved address's addr is host:port allocated from its region's pool. A guard item per
//     address (U#tcp_addr#<host:port>), written in the reservation's own transaction with the
//     condition that it does not exist, makes every address held by at most one reservation;
//     deleting the reservation deletes the guard in the same transaction. A reservation first
//     tries a few random addresses (one transaction each, the first almost always wins), then
//     reads the guards of consecutive addresses a batch at a time to find free ones.
//   - An address a TCP edge has among its hostports is referenced by the edge and cannot be
//     deleted: 400 ERR_NGROK_446, the platform's code for a reserved name an edge still uses.
//     Holders tells edges who holds a hostport as a domain and as an address; PoolHost whether a
//     host serves addresses.
//   - A cloud endpoint whose URL is tcp://<addr> of a reserved address of its account references
//     the reservation in its own transaction (the endpoint shows it as tcp_addr), so it cannot
//     be deleted either (446). Another account's address is the endpoint's 309, and a public tcp
//     endpoint on an address its account has not reserved is 307 (see the endpoints package).
//   - The reserved address schema has no endpoint configuration or edge member (older versions
//     of the platform's API had them), so the codes about those (507, 1619, 7019) have nothing
//     to apply to: endpoints and edges point at addresses, never the reverse.
//   - region not configured is 400 ERR_NGROK_500 naming the region; a region whose pool has no
//     free address is 400 ERR_NGROK_503 (a client error, like every refusal of this API:
//     nothing a client sends may produce a 5xx). Over-long description and metadata are
//     504 and 505; a PATCH supplying neither is 506. The addr and region never change.
//   - Audit events are of kind tcp_address for addresses, domain for domains and agent_ingress
//     (this service's addition) for agent ingresses.
//
// Reserved domains:
//   - A name is lowercased and checked by ParseName with the platform's codes: invalid character
//     406 (underscore 438), '..' 409, label starting badly 407 or ending badly (or a trailing
//     dot) 408, '--' at positions 3-4 outside xn-- 410, invalid punycode 429, over 253 bytes
//     or a label over 63 423, one label or a bare public suffix 448, a top-level domain not on
//     the public suffix list 411; '*' only as the whole leftmost label (402, 403), never over a
//     whole public suffix (416).
//   - A name exactly one label under BASE_DOMAIN is the deployment's own: no cname_target, no
//     certificate_id (440), no certificate_management_policy (439). Deeper names under it are
//     450; BASE_DOMAIN itself and names in DNS_ZONE are 404. Any other name is a custom domain:
//     cname_target is <label>.<DNS_ZONE> and acme_challenge_cname_target (shown while a policy
//     is set) <label>.acme.<DNS_ZONE>, label being the id's KSUID in lowercase base32.
//   - A name is held by one reservation across all accounts: two guards written in the
//     reservation's transaction with the condition that they do not exist, one per account and
//     name (written first: 413) and one per name (414). An endpoint finds the reservation of its
//     host through the name guard (Lookup), and its reserved address through the address guard.
//   - A wildcard *.P covers the names exactly one label under P (as a certificate's wildcard
//     does, and as endpoints are matched): not P itself, nor deeper names, nor *.x.P. A wildcard
//     and the names it covers are held by one account (the same account may hold both): a
//     wildcard covering another account's name, and a name covered by another account's
//     wildcard, are 417. It is decided in the reservation's transaction by a cover guard per
//     parent (U#domain_cover#P: the wildcard's account, the number of names under P and each
//     account's number), which every reservation of a wildcard or of a name under P writes with
//     its condition, so two conflicting reservations never both commit. Names under which no
//     wildcard can be reserved (a public suffix, the base domain) have no cover guard, so their
//     reservations never meet on one item; the parent is stored with the reservation
//     (cover_parent) so its deletion releases what it claimed.
//   - certificate_id names an uploaded TLS certificate of the account (1965 missing); the domain
//     references it in its transaction, so the certificate cannot be deleted while used. Whether
//     its names cover the domain is not checked, as the platform does not check it (its recorded
//     create attaches a certificate for example.com alone to myapp.mydomain.com, 201). TLS for
//     a name the certificate does not cover: whatever terminates TLS for the domain presents
//     that certificate as it is, so a client that verifies names (browsers, HTTP libraries by
//     default) refuses the connection; nothing falls back to another certificate, and no
//     renewal concerns it (only a policy's certificates are renewed). The domain's cname_target
//     and its DNS are the same whatever certificate it names. A body may not carry
//     both it and certificate_management_policy, nor a certificate_id while a policy manages
//     the domain (434); a policy set on a domain with an uploaded certificate takes its place
//     (the certificate is detached and released), as the platform's recorded update of a domain
//     created with a certificate_id answers 200 with certificate null. The policy's authority is only letsencrypt (435, default), its
//     private_key_type rsa or ecdsa (default ecdsa). DELETE …/certificate detaches an uploaded
//     certificate; while a policy manages the domain it is refused with 436, as the platform
//     does ("detach the policy, not the certificate"), and the policy stays. DELETE
//     …/certificate_management_policy stops management and the certificate already issued stays
//     attached (the domain keeps serving it); DELETE …/certificate then detaches and deletes it,
//     and attaching an uploaded certificate in its place deletes it too. Both routes are updates
//     of the domain.
//   - A PATCH of certificate_management_policy to null (OpenAPI: "null if automatic management
//     is disabled") stops management exactly as DELETE …/certificate_management_policy does, and
//     may attach an uploaded certificate in the same body; an empty object {} is a policy with
//     every default (letsencrypt, the default key type), as on create. Stopping removes the
//     policy, the pending job (a queued job finds itself superseded and does nothing), the job's
//     state and the scheduler's due entry in one transaction.
//   - Certificate automation state lives on the item (CertManagement): setting or changing a
//     policy records the job the certificate worker is to run (Pending: names, authority, key
//     type, reason, time) in the same write; certificate_management_status shows renews_at and
//     provisioning_job, both null until the worker has run. Deleting the domain (or ingress)
//     deletes the certificate the worker issued for it.
//   - A managed certificate (a TLS certificate of the account with issued_at set) is held by
//     exactly one domain or ingress (managed_certificate_id) and counts that as its one
//     reference, so DELETE /tls_certificates/{id} refuses it as it refuses an uploaded
//     certificate a domain uses (1966). Whatever deletes it (the worker replacing it, a detach,
//     the holder's deletion) does so in the holder's own transaction, with the certificate's
//     tls_certificate_deleted event beside the holder's event (DropCertificate); the worker's
//     store records the new certificate's created event and the holder's updated event too,
//     for the caller who set the policy (the principal and base URL kept with the policy,
//     audit.OnBehalf), with the objects as GET returns them. So no managed certificate is ever
//     left without its holder, and a job that finishes after its resource was deleted or its
//     policy removed or changed stores nothing.
//   - A domain an endpoint or an edge references cannot be deleted (446). region (deprecated) and
//     resolves_to values must be configured regions (400; resolves_to also "global", a value
//     twice 456). Over-long description and metadata are 420 and 421, an empty PATCH 422.
//
// Agent ingresses:
//   - domain is a name the account owns: any name ParseName refuses (wildcards included) is
//     6704; BASE_DOMAIN, DNS_ZONE and names under them are 6705; one ingress per name across all
//     accounts, by a guard in the ingress's transaction (6706).
//   - ns_targets are NAME_SERVERS and region_domains tunnel.<region>.<domain> for every configured
//     region, both from the configuration when rendered.
//   - certificate_management_policy is optional: authority letsencrypt (435), private_key_type
//     rsa (default) or ecdsa (215); setting or changing it records the job for every region
//     domain, as for reserved domains; a PATCH to null stops management as for reserved domains
//     (there is no DELETE route for it here) and the certificate already issued stays held by
//     the ingress (in use) until a new policy's certificate replaces it or the ingress is
//     deleted. Over-long description and metadata are 6700 and 6701; an empty PATCH 606.
//   - Deleting an ingress also writes a job of kind JobDeleteZone (its id and domain) in the
//     deletion's transaction: the certificate worker deletes the domain's DNS zone (a Route 53
//     hosted zone in AWS, made by its first certificate job) off the request path.
//
// # Differences from the platform's recorded responses
//
// The platform's recorded examples of reserved addresses and reserved domains replay here
// (TestRecordedAddrExamplesReplay, TestRecordedDomainExamplesReplay) without difference but
// these, by design:
//   - The retired endpoint configurations and error redirect (a reserved address's
//     endpoint_configuration, a reserved domain's http_endpoint_configuration,
//     https_endpoint_configuration and error_redirect_url) are not sent, and their request
//     members (endpoint_configuration_id, …) are unknown members (214): the platform's OpenAPI
//     description, which the clients follow, no longer has them, and no family here serves
//     endpoint configurations.
//   - A reserved domain's region is answered as sent (none is ""), where the platform answers
//     "" for the deprecated member whatever was sent: the Terraform provider's region is
//     optional and computed, so a configured region answered as "" fails its apply.
//   - acme_challenge_cname_target is shown for every custom domain with a policy, where the
//     platform shows it for wildcard names only: without a data plane to answer HTTP-01 or
//     TLS-ALPN-01 challenges on the domain itself, every certificate here is validated by
//     DNS-01 through that CNAME.
//   - certificate_management_status is {"renews_at":null,"provisioning_job":null} from the
//     moment a policy is set until the certificate worker has run, where the platform's
//     recordings show null or a job already started, as its own worker had or had not begun.
package domains
