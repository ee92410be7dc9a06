package domains

import (
	"context"

	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// LabelDropCert labels the deletion of a managed certificate (DropCertificate): its condition
// fails when the certificate changed after it was read, and the whole change is read again.
const LabelDropCert = "cert.managed"

// DropCertificate adds to tx the deletion of the item's managed certificate, with the
// tls_certificate_deleted event an HTTP delete of it records (for r), and returns whether there
// was one to delete. It leaves ManagedCertificateID as it is (a deleted resource's event shows
// it as it was); a caller detaching it clears it. The deletion is conditioned on the version
// read (LabelDropCert), so the event shows the certificate exactly as it is deleted. The
// certificate is the holder's alone (its reference count is the holder's reference), so the
// holder deletes it whatever that count.
//
// A managed certificate (a TLS certificate of the account with issued_at set) is held by exactly
// one domain or ingress (managed_certificate_id) and counts that as its one reference, so DELETE
// /tls_certificates/{id} refuses it as it refuses an uploaded certificate a domain uses (1966).
// Whatever deletes it (the worker replacing it, a detach, the holder's deletion) does so here, in
// the holder's own transaction, beside the holder's event; the worker's store records the new
// certificate's created event and the holder's updated event too, for the caller who set the
// policy (the principal and base URL kept with the policy, audit.OnBehalf), with the objects as
// GET returns them. So no managed certificate is ever left without its holder, and a job that
// finishes after its resource was deleted or its policy removed or changed stores nothing.
func (c *CertManagement) DropCertificate(ctx context.Context, db *store.DB, tx *store.Tx, r *api.Request, account string) (dropped bool, err error) {
	defer derrors.Wrap(&err, "domains.DropCertificate(%s)", c.ManagedCertificateID)
	if c.ManagedCertificateID == "" {
		return false, nil
	}
	var cert tlscerts.TLSCertificateItem
	err = db.Get(ctx, store.ResourceKey(account, c.ManagedCertificateID), &cert)
	if store.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	tx.Delete(LabelDropCert, cert.Key, store.AtVersion(cert.Version))
	if _, err := audit.Record(tx, r, audit.Type(tlscerts.TLSCertificateEventKind, "deleted"), tlscerts.Render(r, &cert)); err != nil {
		return false, err
	}
	return true, nil
}

// dropCertificate is DropCertificate in an HTTP mutation: a certificate changed meanwhile reads
// and builds the whole operation again.
func (c *CertManagement) dropCertificate(ctx context.Context, kit *resource.Kit, r *api.Request, m *resource.Mutation, account string) (bool, error) {
	dropped, err := c.DropCertificate(ctx, kit.DB, m.Tx, r, account)
	if dropped {
		m.RetryOn(LabelDropCert)
	}
	return dropped, err
}

// Managed is a reserved domain or an agent ingress as the certificate worker reads and changes
// it: the whole item, so that the worker records the updated event an HTTP update of it
// records, with the resource as GET returns it.
type Managed struct {
	// Item is the stored item (*ReservedDomainItem or *AgentIngressItem); Cert its automation state.
	Item store.Resource
	Cert *CertManagement
	// Domain is its name; ACMETarget the name a custom domain's _acme-challenge CNAME must
	// point to ("" for names the service's zone answers for).
	Domain, ACMETarget string
	kind               string
	render             func(r *api.Request) any
}

// LoadManaged reads the reserved domain or agent ingress id of account, its kind told by the
// id's prefix, to be rendered with cfg; nil when there is none.
func LoadManaged(ctx context.Context, db *store.DB, cfg *Config, account, id string) (_ *Managed, err error) {
	defer derrors.Wrap(&err, "domains.LoadManaged(%s)", id)
	key := store.ResourceKey(account, id)
	switch {
	case ids.Is(id, ids.ReservedDomain):
		var it ReservedDomainItem
		if err := db.Get(ctx, key, &it); err != nil {
			return nil, notFoundIsNil(err)
		}
		f := ReservedDomains{&resource.Family[ReservedDomainItem, *ReservedDomainItem]{Descriptor: ReservedDomainsDescriptor}, cfg}
		return &Managed{Item: &it, Cert: &it.CertManagement, Domain: it.Domain, ACMETarget: it.ACMETarget,
			kind: ReservedDomainsDescriptor.EventKind, render: func(r *api.Request) any { return f.Render(r, &it) }}, nil
	case ids.Is(id, ids.AgentIngress):
		var it AgentIngressItem
		if err := db.Get(ctx, key, &it); err != nil {
			return nil, notFoundIsNil(err)
		}
		f := AgentIngresses{&resource.Family[AgentIngressItem, *AgentIngressItem]{Descriptor: AgentIngressesDescriptor}, cfg}
		return &Managed{Item: &it, Cert: &it.CertManagement, Domain: it.Domain,
			kind: AgentIngressesDescriptor.EventKind, render: func(r *api.Request) any { return f.Render(r, &it) }}, nil
	}
	return nil, nil
}

func notFoundIsNil(err error) error {
	if store.IsNotFound(err) {
		return nil
	}
	return err
}

// Request is the request the worker's changes of m are recorded for: the caller who set its
// policy (audit.OnBehalf).
func (m *Managed) Request() *api.Request {
	return m.Cert.Requester.Request(m.Item.Base().AccountID)
}

// RecordUpdated adds to tx the updated event of m as it is now, recorded for r.
func (m *Managed) RecordUpdated(tx *store.Tx, r *api.Request) error {
	_, err := audit.Record(tx, r, audit.Type(m.kind, "updated"), m.render(r))
	return err
}
