package domains

import (
	"context"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Error codes of agent ingresses.
const (
	CodeIngressInvalidDomain = "ERR_NGROK_6704"
	CodeIngressServiceDomain = "ERR_NGROK_6705"
	CodeIngressTaken         = "ERR_NGROK_6706"
)

var ingressTextCodes = api.TextCodes{Description: "ERR_NGROK_6700", Metadata: "ERR_NGROK_6701"}

// AgentIngressItem is a stored agent ingress.
type AgentIngressItem struct {
	store.Meta
	resource.Described
	Domain string `dynamodbav:"domain"`
	CertManagement
}

// AgentIngressJSON is the wire form of an agent ingress.
type AgentIngressJSON struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
	resource.DescribedJSON
	Domain                      string          `json:"domain"`
	NSTargets                   []string        `json:"ns_targets"`
	RegionDomains               []string        `json:"region_domains"`
	CreatedAt                   string          `json:"created_at"`
	CertificateManagementPolicy *CertPolicyJSON `json:"certificate_management_policy"`
	CertificateManagementStatus *CertStatusJSON `json:"certificate_management_status"`
}

type ingressUpdate struct {
	api.Text
	// Policy null stops automatic management (the platform has no DELETE route for it here).
	Policy api.Nullable[CertPolicyJSON] `json:"certificate_management_policy"`
}

// ingressCreate is a POST body: the domain, which cannot change, and what an update may send.
type ingressCreate struct {
	ingressUpdate
	Domain *string `json:"domain"`
}

// AgentIngressesDescriptor is the /agent_ingresses family.
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
var AgentIngressesDescriptor = &resource.Descriptor{
	Path: "/agent_ingresses", Prefix: ids.AgentIngress, ListKey: "ingresses", EventKind: "agent_ingress", Filter: true,
	Reads:   []config.Section{config.DomainSettings},
	Binding: func() resource.Binding { return resource.Bind(newAgentIngresses) },
	Release: IngressRelease{},
}

// AgentIngresses is the agent ingress family's rules.
type AgentIngresses struct {
	*resource.Family[AgentIngressItem, *AgentIngressItem]
	Config *Config
}

// newAgentIngresses makes the family's hooks with the configuration of its kit (ConfigOf).
func newAgentIngresses(f *resource.Family[AgentIngressItem, *AgentIngressItem]) AgentIngresses {
	return AgentIngresses{Family: f, Config: ConfigOf(f.Kit)}
}

// Render returns an agent ingress as GET returns it; its name servers and region domains come
// from the configuration, so they follow it as regions are added.
func (f AgentIngresses) Render(r *api.Request, it *AgentIngressItem) any {
	out := AgentIngressJSON{ID: it.ID, URI: resource.URI(r, f.Path, it.ID), DescribedJSON: it.Described.Rendered(),
		Domain: it.Domain, NSTargets: append([]string{}, f.Config.NameServers...), RegionDomains: f.Config.regionDomains(it.Domain),
		CreatedAt: api.Timestamp(it.CreatedAt)}
	out.CertificateManagementPolicy, out.CertificateManagementStatus = it.CertManagement.render()
	return out
}

// regionDomains are the names agents connect to for domain: tunnel.<region>.<domain> per region.
func (c *Config) regionDomains(domain string) []string {
	out := make([]string, 0, len(c.Regions))
	for _, r := range c.Regions {
		out = append(out, "tunnel."+r+"."+domain)
	}
	return out
}

// Create checks the body and claims the domain with a guard across all accounts (6706).
func (f AgentIngresses) Create(ctx context.Context, r *api.Request, it *AgentIngressItem, m *resource.Mutation) (any, error) {
	var in ingressCreate
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	if in.Domain == nil {
		return nil, api.BadRequest(CodeIngressInvalidDomain, "domain", "domain is required: a domain you own, such as agents.example.com")
	}
	name, err := ParseName("domain", *in.Domain, false)
	if err != nil {
		e, _ := api.AsError(err)
		return nil, api.BadRequest(CodeIngressInvalidDomain, "domain", "%s", e.Msg)
	}
	if name.Under(f.Config.BaseDomain) || name.Under(f.Config.DNSZone) {
		return nil, api.BadRequest(CodeIngressServiceDomain, "domain", "%s is the service's own; an agent ingress needs a domain you own", name)
	}
	if err := it.SetText(ingressTextCodes, in.Text); err != nil {
		return nil, err
	}
	it.Domain = string(name)
	if err := f.setPolicy(r, it, in.Policy.Value, m); err != nil {
		return nil, err
	}
	m.Put(labelIngress, guard{Key: ingressGuardKey(it.Domain), AccountID: it.AccountID, ID: it.ID}, store.Absent())
	m.Refuse(labelIngress, api.BadRequest(CodeIngressTaken, "domain", "an agent ingress for %s already exists", it.Domain))
	return nil, nil
}

// Update applies a PATCH body; a policy given records a new job, null stops management.
func (f AgentIngresses) Update(ctx context.Context, r *api.Request, it *AgentIngressItem, m *resource.Mutation) error {
	var in ingressUpdate
	if err := it.DecodePatch(r, ingressTextCodes, &in); err != nil {
		return err
	}
	if in.Policy.Null() {
		it.CertManagement.stop(m.Tx)
		return nil
	}
	return f.setPolicy(r, it, in.Policy.Value, m)
}

// Delete releases the domain's guard, deletes the managed certificate (with its deleted event)
// and requests the deletion of the domain's DNS zone (the certificate worker's, through the job
// queue: a hosted zone is deleted record by record, too slow for a request).
func (f AgentIngresses) Delete(ctx context.Context, r *api.Request, it *AgentIngressItem, m *resource.Mutation) error {
	m.Delete("ingress.release", ingressGuardKey(it.Domain))
	if err := it.release(ctx, f.Kit, r, m, it.AccountID); err != nil {
		return err
	}
	now := time.Now()
	EnqueueCertJob(m.Tx, CertJobMessage{JobID: ids.NewAt(ids.CertJob, now), AccountID: it.AccountID, ResourceID: it.ID,
		Kind: JobDeleteZone, Domain: it.Domain}, now)
	return nil
}

// setPolicy checks a supplied policy (private key type rsa by default), set by r's caller, and
// records the job for every region domain, writing the job's item in m's transaction.
func (f AgentIngresses) setPolicy(r *api.Request, it *AgentIngressItem, in *CertPolicyJSON, m *resource.Mutation) error {
	if in == nil {
		return nil
	}
	p, err := in.check("certificate_management_policy", KeyTypeRSA)
	if err != nil {
		return err
	}
	if now := time.Now(); it.CertManagement.setPolicy(r, p, ReasonPolicy, f.Config.regionDomains(it.Domain), now) {
		it.enqueue(m.Tx, it.AccountID, it.ID, now)
	}
	return nil
}

const labelIngress = "ingress"

func ingressGuardKey(domain string) store.Key { return store.GuardKey("agent_ingress", domain) }

// IngressRelease frees the guard of a stored ingress's domain and its certificate due entry
// (resource.Descriptor.Release).
type IngressRelease struct{}

// Release implements resource.Releaser.
func (IngressRelease) Release(_ context.Context, _ *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	resource.Free(tx, a.String("account"), append(dueKeys(&a), ingressGuardKey(a.String("domain")))...)
	return a.Err()
}
