package domains

import (
	"context"
	"encoding/base32"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/segmentio/ksuid"

	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Error codes of reserved domains besides the name rules (names.go).
const (
	CodeDomainBadRegion    = "ERR_NGROK_400"
	CodeDomainMine         = "ERR_NGROK_413"
	CodeDomainTaken        = "ERR_NGROK_414"
	CodeCertAndPolicy      = "ERR_NGROK_434"
	CodeBadAuthority       = "ERR_NGROK_435"
	CodeDetachPolicy       = "ERR_NGROK_436"
	CodePolicyOnBase       = "ERR_NGROK_439"
	CodeCertOnBase         = "ERR_NGROK_440"
	CodeDomainInUse        = "ERR_NGROK_446"
	CodeSubdomainOfBase    = "ERR_NGROK_450"
	CodeDuplicateResolveTo = "ERR_NGROK_456"
	CodeCertMissing        = "ERR_NGROK_1965"
)

var domainTextCodes = api.TextCodes{Description: "ERR_NGROK_420", Metadata: "ERR_NGROK_421", Empty: "ERR_NGROK_422"}

// ReservedDomainItem is a stored reserved domain.
type ReservedDomainItem struct {
	store.Meta
	resource.Described
	Domain     string   `dynamodbav:"domain"`
	Region     string   `dynamodbav:"region,omitempty"`
	ResolvesTo []string `dynamodbav:"resolves_to"`
	// CNAMETarget and ACMETarget are set for custom domains only: the name in the service's
	// zone the domain is a CNAME to, and the one its _acme-challenge name is a CNAME to.
	CNAMETarget string `dynamodbav:"cname_target,omitempty"`
	ACMETarget  string `dynamodbav:"acme_target,omitempty"`
	// CertificateID is an uploaded TLS certificate of the account the domain references.
	CertificateID string `dynamodbav:"certificate_id,omitempty"`
	// CoverParent is the parent whose cover guard the reservation counts in (coverParent),
	// kept so the deletion releases what the creation claimed whatever the configuration then.
	CoverParent string `dynamodbav:"cover_parent,omitempty"`
	CertManagement
}

// ReservedDomainJSON is the wire form of a reserved domain.
type ReservedDomainJSON struct {
	resource.Head
	Domain string `json:"domain"`
	// Region is "" when the domain has none, as in the platform's recorded responses.
	Region                      string          `json:"region"`
	CNAMETarget                 *string         `json:"cname_target"`
	Certificate                 *api.Ref        `json:"certificate"`
	CertificateManagementPolicy *CertPolicyJSON `json:"certificate_management_policy"`
	CertificateManagementStatus *CertStatusJSON `json:"certificate_management_status"`
	ACMEChallengeCNAMETarget    *string         `json:"acme_challenge_cname_target"`
	// ResolvesTo is absent when the domain has none, as in the platform's responses: the
	// official Terraform provider reads [] as an empty list and absent as null, so answering
	// [] made its next update of the domain inconsistent.
	ResolvesTo []ResolvesToJSON `json:"resolves_to,omitempty"`
}

// ResolvesToJSON is one entry of a domain's resolves_to.
type ResolvesToJSON struct {
	Value string `json:"value"`
}

type domainUpdate struct {
	api.Text
	CertificateID *string `json:"certificate_id"`
	// Policy null stops automatic management, as DELETE …/certificate_management_policy does.
	Policy     api.Nullable[CertPolicyJSON] `json:"certificate_management_policy"`
	ResolvesTo *[]ResolvesToJSON            `json:"resolves_to"`
}

// domainCreate is a POST body: the name and region, which cannot change, and what an update may
// send.
type domainCreate struct {
	Domain *string `json:"domain"`
	Region *string `json:"region"`
	domainUpdate
}

// ReservedDomainsPath is the reserved domains' collection path, for references to them.
const ReservedDomainsPath = "/reserved_domains"

// ReservedDomainsDescriptor is the /reserved_domains family.
//   - A name is lowercased and checked by ParseName with the platform's codes.
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
//     wildcard, are 417, decided by the cover guard of P (cover.go). The parent is stored with
//     the reservation (cover_parent) so its deletion releases what it claimed.
//   - certificate_id names an uploaded TLS certificate of the account (1965 missing); the domain
//     references it in its transaction, so the certificate cannot be deleted while used. Whether
//     its names cover the domain is not checked, as the platform does not check it (its recorded
//     create attaches a certificate for example.com alone to myapp.mydomain.com, 201). TLS for
//     a name the certificate does not cover: whatever terminates TLS for the domain presents
//     that certificate as it is, so a client that verifies names refuses the connection;
//     nothing falls back to another certificate, and no renewal concerns it (only a policy's
//     certificates are renewed). The domain's cname_target and its DNS are the same whatever
//     certificate it names. A body may not carry both it and certificate_management_policy,
//     nor a certificate_id while a policy manages the domain (434); a policy set on a domain
//     with an uploaded certificate takes its place (the certificate is detached and released),
//     as the platform's recorded update answers. The policy's authority is only letsencrypt (435, default), its
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
//   - A domain an endpoint or an edge references cannot be deleted (446). region (deprecated) and
//     resolves_to values must be configured regions (400; resolves_to also "global", a value
//     twice 456). Over-long description and metadata are 420 and 421, an empty PATCH 422.
//
// The platform's recorded examples of reserved addresses and domains replay without difference
// (TestRecordedAddrExamplesReplay, TestRecordedDomainExamplesReplay) but these, by design: the
// retired endpoint configurations and error_redirect_url are not sent, and their request members
// are unknown (214), as the OpenAPI description no longer has them; a domain's region is
// answered as sent (the Terraform provider's region is optional and computed, so "" would fail
// its apply); acme_challenge_cname_target is shown for every custom domain with a policy, as
// every certificate here is validated by DNS-01 through it; certificate_management_status is
// {"renews_at":null,"provisioning_job":null} until the certificate worker has run.
var ReservedDomainsDescriptor = &resource.Descriptor{
	Path: ReservedDomainsPath, Prefix: ids.ReservedDomain, ListKey: "reserved_domains", EventKind: "domain", Filter: true,
	Reads: []config.Section{config.DomainSettings},
	Binding: func() resource.Binding {
		return resource.Bind(newReservedDomains,
			resource.Route[ReservedDomains]{Method: http.MethodDelete, Pattern: "/{id}/certificate",
				Status: http.StatusNoContent, Handle: ReservedDomains.detachCertificate},
			resource.Route[ReservedDomains]{Method: http.MethodDelete, Pattern: "/{id}/certificate_management_policy",
				Status: http.StatusNoContent, Handle: ReservedDomains.detachPolicy})
	},
	Release: DomainRelease{},
}

// ReservedDomains is the reserved domain family's rules.
type ReservedDomains struct {
	*resource.Family[ReservedDomainItem, *ReservedDomainItem]
	Config *Config
}

// newReservedDomains makes the family's hooks with the configuration of its kit (ConfigOf).
func newReservedDomains(f *resource.Family[ReservedDomainItem, *ReservedDomainItem]) ReservedDomains {
	return ReservedDomains{Family: f, Config: ConfigOf(f.Kit)}
}

// Render returns a reserved domain as GET returns it.
func (f ReservedDomains) Render(r *api.Request, it *ReservedDomainItem) any {
	out := ReservedDomainJSON{Head: resource.NewHead(r, f.Path, &it.Meta, it.Described), Domain: it.Domain,
		Region: it.Region, CNAMETarget: optional(it.CNAMETarget)}
	for _, v := range it.ResolvesTo {
		out.ResolvesTo = append(out.ResolvesTo, ResolvesToJSON{Value: v})
	}
	if cert := it.shownCertificate(); cert != "" {
		out.Certificate = resource.Ref(r, tlscerts.TLSCertificatesPath, cert)
	}
	out.CertificateManagementPolicy, out.CertificateManagementStatus = it.CertManagement.render()
	if it.Policy != nil {
		out.ACMEChallengeCNAMETarget = optional(it.ACMETarget)
	}
	return out
}

// shownCertificate is the id of the certificate the domain serves and reads show: the uploaded
// one, else the managed one ("" when it has neither).
func (it *ReservedDomainItem) shownCertificate() string {
	if it.CertificateID != "" {
		return it.CertificateID
	}
	return it.ManagedCertificateID
}

// InUse is the refusal to delete a domain an endpoint or an edge still references.
func (ReservedDomains) InUse() *api.Error {
	return api.BadRequest(CodeDomainInUse, "id", "the domain is still used by a cloud endpoint or an edge's hostports; delete or move them first")
}

// Prepare checks the body and the certificate it names, once per request.
func (f ReservedDomains) Prepare(ctx context.Context, r *api.Request, it *ReservedDomainItem) error {
	var in domainCreate
	if err := api.Decode(r, &in); err != nil {
		return err
	}
	if in.Domain == nil {
		return nameError(CodeNotFullyQualified, "domain", "domain is required, such as app.example.com or myapp.%s", f.Config.BaseDomain)
	}
	name, err := ParseName("domain", *in.Domain, true)
	if err != nil {
		return err
	}
	custom, err := f.classify(name)
	if err != nil {
		return err
	}
	if in.Region != nil && *in.Region != "" {
		if !slices.Contains(f.Config.Regions, *in.Region) {
			return api.BadRequest(CodeDomainBadRegion, "region", "region %s is not one of %s", api.Describe(*in.Region), strings.Join(f.Config.Regions, ", "))
		}
		it.Region = *in.Region
	}
	if err := it.SetText(domainTextCodes, in.Text); err != nil {
		return err
	}
	it.Domain, it.ResolvesTo, it.CoverParent = string(name), []string{}, f.coverParent(name)
	if err := it.setResolvesTo(f.Config, in.ResolvesTo); err != nil {
		return err
	}
	if custom {
		label := targetLabel(it.ID)
		it.CNAMETarget = label + "." + f.Config.DNSZone
		it.ACMETarget = label + ".acme." + f.Config.DNSZone
	}
	policy, err := f.checkCertificates(it, in.CertificateID, in.Policy.Value)
	if err != nil {
		return err
	}
	if in.CertificateID != nil {
		it.CertificateID = *in.CertificateID
	}
	if policy != nil {
		it.setPolicy(r, *policy, ReasonPolicy, []string{it.Domain}, time.Now())
	}
	return nil
}

// Create claims the name for this account with two guards in the reservation's transaction:
// one per account and name (its failed condition is 413) and one per name across all accounts
// (414), then its parent's cover guard (417, claimCover). The account's guard is written first,
// so an account reserving its own name again gets 413 even though both conditions fail.
func (ReservedDomains) Create(ctx context.Context, r *api.Request, it *ReservedDomainItem, m *resource.Mutation) (any, error) {
	m.Put(labelMine, guard{Key: accountGuardKey(it.AccountID, it.Domain), AccountID: it.AccountID, ID: it.ID}, store.Absent())
	m.Refuse(labelMine, api.BadRequest(CodeDomainMine, "domain", "%s is already reserved by this account", it.Domain))
	m.Put(labelName, guard{Key: nameGuardKey(it.Domain), AccountID: it.AccountID, ID: it.ID}, store.Absent())
	m.Refuse(labelName, api.BadRequest(CodeDomainTaken, "domain", "%s is already reserved by another account", it.Domain))
	claimCover(m, it)
	if it.CertificateID != "" {
		m.Reference(it.CertificateID, 1, certMissing(it.CertificateID))
	}
	it.enqueue(m.Tx, it.AccountID, it.ID, time.Now())
	return nil, nil
}

// Update applies a PATCH body; at least one member must be given. A certificate_id equal to the
// certificate the domain shows ("" when it shows none) is no change: infrastructure-as-code
// tools send back every member they read, the managed certificate's id beside its policy
// included.
func (f ReservedDomains) Update(ctx context.Context, r *api.Request, it *ReservedDomainItem, m *resource.Mutation) error {
	var in domainUpdate
	if err := it.DecodePatch(r, domainTextCodes, &in); err != nil {
		return err
	}
	if in.CertificateID != nil && *in.CertificateID == it.shownCertificate() {
		if it.CertificateID != "" && in.Policy.Value != nil {
			// The uploaded certificate beside a policy is both, not an echo.
			return certAndPolicy()
		}
		in.CertificateID = nil
	}
	if err := it.setResolvesTo(f.Config, in.ResolvesTo); err != nil {
		return err
	}
	if in.Policy.Null() {
		// Stopped first, so the same PATCH may attach an uploaded certificate instead.
		it.CertManagement.stop(m.Tx)
	}
	policy, err := f.checkCertificates(it, in.CertificateID, in.Policy.Value)
	if err != nil {
		return err
	}
	if in.CertificateID != nil && *in.CertificateID != it.CertificateID {
		if it.CertificateID != "" {
			m.Reference(it.CertificateID, -1, nil)
		}
		it.CertificateID = *in.CertificateID
		m.Reference(it.CertificateID, 1, certMissing(it.CertificateID))
		// The uploaded certificate takes the place of a managed one kept after its policy
		// stopped: nothing else holds that one, so it goes.
		if _, err := it.dropCertificate(ctx, f.Kit, r, m, it.AccountID); err != nil {
			return err
		}
		it.ManagedCertificateID = ""
	}
	if policy != nil && it.CertificateID != "" {
		// A policy takes the place of an uploaded certificate, as the platform's recorded
		// update (a policy for a domain created with a certificate_id) answers 200 with
		// certificate null: the certificate is detached and its reference released.
		m.Reference(it.CertificateID, -1, nil)
		it.CertificateID = ""
	}
	if now := time.Now(); policy != nil && it.setPolicy(r, *policy, ReasonPolicy, []string{it.Domain}, now) {
		it.enqueue(m.Tx, it.AccountID, it.ID, now)
	}
	return nil
}

// Delete releases the name's guards and the certificate reference, and deletes the managed
// certificate (with its deleted event).
func (f ReservedDomains) Delete(ctx context.Context, r *api.Request, it *ReservedDomainItem, m *resource.Mutation) error {
	m.Delete("domain.release", nameGuardKey(it.Domain))
	m.Delete("domain.release.account", accountGuardKey(it.AccountID, it.Domain))
	releaseCover(m, it)
	if it.CertificateID != "" {
		m.Reference(it.CertificateID, -1, nil)
	}
	return it.release(ctx, f.Kit, r, m, it.AccountID)
}

// detachCertificate serves DELETE /reserved_domains/{id}/certificate: an uploaded certificate
// is detached (its reference released); a managed one is refused while a policy manages it
// (436, as the platform does: detach the policy), and once the policy is detached it is
// detached and deleted, with its deleted event, since nothing else holds it.
func (f ReservedDomains) detachCertificate(ctx context.Context, r *api.Request) (any, error) {
	_, err := f.Modify(ctx, r, r.PathValue("id"), nil, func(it *ReservedDomainItem, m *resource.Mutation) error {
		if it.Policy != nil {
			return api.BadRequest(CodeDetachPolicy, "id", "the certificate is managed by the domain's certificate_management_policy; detach the policy instead")
		}
		if it.CertificateID != "" {
			m.Reference(it.CertificateID, -1, nil)
		}
		if _, err := it.dropCertificate(ctx, f.Kit, r, m, it.AccountID); err != nil {
			return err
		}
		it.CertificateID, it.ManagedCertificateID = "", ""
		return nil
	})
	return nil, err
}

// detachPolicy serves DELETE /reserved_domains/{id}/certificate_management_policy, the same as a
// PATCH of the policy to null: automatic management stops (no pending job, no status); a
// certificate already issued stays attached.
func (f ReservedDomains) detachPolicy(ctx context.Context, r *api.Request) (any, error) {
	_, err := f.Modify(ctx, r, r.PathValue("id"), nil, func(it *ReservedDomainItem, m *resource.Mutation) error {
		it.CertManagement.stop(m.Tx)
		return nil
	})
	return nil, err
}

// classify tells a name under the deployment's base domain (false: exactly one label below it)
// from a custom domain (true), refusing names in the service's own zone (404) and deeper names
// under the base domain (450).
func (f ReservedDomains) classify(name Name) (custom bool, err error) {
	base := f.Config.BaseDomain
	if name.Under(f.Config.DNSZone) || string(name) == base {
		return false, nameError(CodeServiceZone, "domain", "%s belongs to the service itself and cannot be reserved", name)
	}
	if !name.Under(base) {
		return true, nil
	}
	if label := strings.TrimSuffix(string(name), "."+base); strings.ContainsAny(label, ".*") {
		return false, nameError(CodeSubdomainOfBase, "domain", "only names of one label under %s may be reserved, such as myapp.%s", base, base)
	}
	return false, nil
}

// checkCertificates checks a supplied certificate_id and certificate_management_policy against
// each other, the domain's kind and what the item already has: not both in one body, and no
// certificate_id while a policy manages the domain (434; a policy may take the place of an
// uploaded certificate, see Update), neither on a name under the base domain (439, 440), an authority of letsencrypt (435), and a
// certificate of the account (1965 missing). Whether its names cover the domain is not checked,
// as the platform does not (see the package doc).
// It returns the supplied policy with its defaults filled (private key type ecdsa).
func (f ReservedDomains) checkCertificates(it *ReservedDomainItem, certID *string, policy *CertPolicyJSON) (*CertPolicy, error) {
	base := it.CNAMETarget == ""
	switch {
	case certID != nil && policy != nil,
		certID != nil && it.Policy != nil:
		return nil, certAndPolicy()
	case base && policy != nil:
		return nil, api.BadRequest(CodePolicyOnBase, "certificate_management_policy", "certificate_management_policy must be null for names under %s, which the service's own certificate covers", f.Config.BaseDomain)
	case base && certID != nil:
		return nil, api.BadRequest(CodeCertOnBase, "certificate_id", "uploaded certificates are not allowed on names under %s, which the service's own certificate covers", f.Config.BaseDomain)
	}
	var checked *CertPolicy
	if policy != nil {
		p, err := policy.check("certificate_management_policy", KeyTypeECDSA)
		if err != nil {
			return nil, err
		}
		checked = &p
	}
	if certID == nil {
		return checked, nil
	}
	if !ids.Is(*certID, ids.TLSCertificate) {
		return nil, api.Invalid("certificate_id", "certificate_id %s is not a TLS certificate id (cert_…)", api.Describe(*certID))
	}
	// Its existence in the account is the condition of the reference the transaction adds
	// (certMissing).
	return checked, nil
}

func certAndPolicy() error {
	return api.BadRequest(CodeCertAndPolicy, "certificate_id", "certificate_id and certificate_management_policy are mutually exclusive; detach one first")
}

func certMissing(id string) error {
	return api.BadRequest(CodeCertMissing, "certificate_id", "TLS certificate %s does not exist in this account", id)
}

// setResolvesTo replaces resolves_to with a supplied list of configured regions or "global".
func (it *ReservedDomainItem) setResolvesTo(c *Config, in *[]ResolvesToJSON) error {
	if in == nil {
		return nil
	}
	out := make([]string, 0, len(*in))
	for i, e := range *in {
		field := "resolves_to[" + strconv.Itoa(i) + "].value"
		if e.Value != "global" && !slices.Contains(c.Regions, e.Value) {
			return api.BadRequest(CodeDomainBadRegion, field, "%s %s is not global or one of %s", field, api.Describe(e.Value), strings.Join(c.Regions, ", "))
		}
		if slices.Contains(out, e.Value) {
			return api.BadRequest(CodeDuplicateResolveTo, field, "%s is listed twice", e.Value)
		}
		out = append(out, e.Value)
	}
	it.ResolvesTo = out
	return nil
}

// The name guards of reserved domains. The name guard is read by other families (an endpoint
// finds the reservation of its host through it, Lookup).
const (
	labelMine = "domain.account"
	labelName = "domain"
)

func nameGuardKey(domain string) store.Key { return store.GuardKey("domain", domain) }

func accountGuardKey(account, domain string) store.Key {
	return store.GuardKey("domain_account", account+"|"+domain)
}

// targetLabel is the label of a custom domain's names in the service's zone: the id's KSUID in
// lowercase base32, unique because the id is.
func targetLabel(id string) string {
	_, k, err := ids.Parse(id)
	if err != nil {
		k = ksuid.New()
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(k.Bytes()))
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// DomainRelease frees the guards of a stored reservation's name, its share of its cover guard
// and its certificate due entry (resource.Descriptor.Release).
type DomainRelease struct{}

// Release implements resource.Releaser.
func (DomainRelease) Release(ctx context.Context, db *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	account, domain, parent := a.String("account"), a.String("domain"), a.String("cover_parent")
	if err := a.Err(); err != nil {
		return err
	}
	resource.Free(tx, account, append(dueKeys(&a), nameGuardKey(domain), accountGuardKey(account, domain))...)
	if parent == "" {
		return nil
	}
	// The cover guard is shared with other accounts: the reservation's part of it is taken
	// back, and the account's own count goes with its last name, so nothing names it.
	k := coverKey(parent)
	if Name(domain).Wildcard() {
		wild := expression.Name(attrCoverWild)
		tx.Update("release.cover", k, expression.Remove(wild),
			expression.Or(expression.AttributeNotExists(wild), wild.Equal(expression.Value(account))))
		return nil
	}
	cover, err := db.GetMany(ctx, k)
	if err != nil {
		return err
	}
	mine := coverCount(account)
	n := (&store.Attrs{Item: cover[0]}).Int("n_" + account)
	upd := expression.Add(expression.Name(attrCoverN), expression.Value(-1)).Add(mine, expression.Value(-1))
	if n <= 1 {
		upd = expression.Add(expression.Name(attrCoverN), expression.Value(-1)).Remove(mine)
	}
	tx.Update("release.cover", k, upd, expression.Or(expression.AttributeNotExists(mine), mine.Equal(expression.Value(n))))
	return nil
}

// dueKeys is the certificate due entry a stored item with certificate management holds, if any.
func dueKeys(a *store.Attrs) []store.Key {
	if due := a.String("cert_due"); due != "" {
		return []store.Key{{PK: store.CertDuePartition, SK: due}}
	}
	return nil
}
