package certs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
)

// Route53API is the part of the Route 53 client the worker calls. template.yaml grants the
// certificate worker's role exactly these actions (a test in infra/samtemplate holds them equal).
type Route53API interface {
	CreateHostedZone(ctx context.Context, in *route53.CreateHostedZoneInput, opts ...func(*route53.Options)) (*route53.CreateHostedZoneOutput, error)
	ListHostedZonesByName(ctx context.Context, in *route53.ListHostedZonesByNameInput, opts ...func(*route53.Options)) (*route53.ListHostedZonesByNameOutput, error)
	ChangeResourceRecordSets(ctx context.Context, in *route53.ChangeResourceRecordSetsInput, opts ...func(*route53.Options)) (*route53.ChangeResourceRecordSetsOutput, error)
	ListResourceRecordSets(ctx context.Context, in *route53.ListResourceRecordSetsInput, opts ...func(*route53.Options)) (*route53.ListResourceRecordSetsOutput, error)
	DeleteHostedZone(ctx context.Context, in *route53.DeleteHostedZoneInput, opts ...func(*route53.Options)) (*route53.DeleteHostedZoneOutput, error)
	route53.GetChangeAPIClient
}

// Route53 publishes challenge records in Route 53. A custom domain's record goes in the
// service's hosted zone (ZoneID, template.yaml's HostedZone): its acme_challenge_cname_target is
// a name there. An agent ingress domain is delegated to the name servers of the reusable
// delegation set DelegationSetID (its ns_targets), so it gets a hosted zone of its own on that
// set, created by its first job (CallerReference: the ingress id, so a retried or concurrent
// creation finds the zone instead of making a second) and deleted after the ingress is.
// Challenge records are short-lived: TTL 60.
//
// Records are written with UPSERT (TXT values quoted), waited for until INSYNC once every
// challenge of the order is presented (acmez's Waiter), and deleted exactly as listed back. A
// zone Route 53 refuses because another ingress's domain is its parent or child
// (ConflictingDomainExists; the same name servers cannot serve both) is DNS_ERROR naming the
// domain; the same name left by a deleted ingress whose zone is not deleted yet, throttling and
// every other Route 53 error are INTERNAL_ERROR.
type Route53 struct {
	Client          Route53API
	ZoneID          string
	DelegationSetID string
	// SyncTimeout bounds the wait for a record to be served by every name server (default 2
	// minutes).
	SyncTimeout time.Duration

	zones   sync.Map // ingress id → its hosted zone's id, once found or created
	pending sync.Map // zone, name and value of a record written → its change's id
}

// r53Zone is one hosted zone of a Route53.
type r53Zone struct {
	r  *Route53
	id string
}

// ServiceZone is the service's hosted zone.
func (r *Route53) ServiceZone() Records { return r53Zone{r, r.ZoneID} }

// SetTXT upserts the TXT record name with value, quoted as Route 53 wants TXT values; WaitTXT
// waits for it to be served.
func (z r53Zone) SetTXT(ctx context.Context, name, value string) error {
	out, err := z.r.Client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(z.id),
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: r53types.ChangeActionUpsert, ResourceRecordSet: &r53types.ResourceRecordSet{
			Name: aws.String(fqdn(name)), Type: r53types.RRTypeTxt, TTL: aws.Int64(60),
			ResourceRecords: []r53types.ResourceRecord{{Value: aws.String(`"` + value + `"`)}},
		}}}},
	})
	if err != nil {
		return fmt.Errorf("route53: setting TXT %s in zone %s: %w", name, z.id, err)
	}
	z.r.pending.Store(z.id+" "+name+" "+value, aws.ToString(out.ChangeInfo.Id))
	return nil
}

// WaitTXT waits until the change that wrote value at name is served by all of the zone's name
// servers (INSYNC), so the authority never looks before the record is there.
func (z r53Zone) WaitTXT(ctx context.Context, name, value string) error {
	key := z.id + " " + name + " " + value
	id, ok := z.r.pending.LoadAndDelete(key)
	if !ok {
		return nil
	}
	timeout := z.r.SyncTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	w := route53.NewResourceRecordSetsChangedWaiter(z.r.Client)
	if err := w.Wait(ctx, &route53.GetChangeInput{Id: aws.String(id.(string))}, timeout); err != nil {
		return fmt.Errorf("route53: waiting for TXT %s to be served: %w", name, err)
	}
	return nil
}

// ClearTXT deletes the TXT record set at name, whatever its values: Route 53 deletes only an
// exact record set, so it is read first. No record there is success.
func (z r53Zone) ClearTXT(ctx context.Context, name string) error {
	// A record never waited for (its order failed first) is waited for no more.
	z.r.pending.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), z.id+" "+name+" ") {
			z.r.pending.Delete(k)
		}
		return true
	})
	out, err := z.r.Client.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(z.id),
		StartRecordName: aws.String(fqdn(name)), StartRecordType: r53types.RRTypeTxt, MaxItems: aws.Int32(1)})
	if err != nil {
		return fmt.Errorf("route53: reading TXT %s in zone %s: %w", name, z.id, err)
	}
	if len(out.ResourceRecordSets) == 0 {
		return nil
	}
	rs := out.ResourceRecordSets[0]
	if !strings.EqualFold(aws.ToString(rs.Name), fqdn(name)) || rs.Type != r53types.RRTypeTxt {
		return nil
	}
	return z.delete(ctx, []r53types.ResourceRecordSet{rs})
}

// delete deletes record sets exactly as listed, in batches within Route 53's limit of 1000
// changes.
func (z r53Zone) delete(ctx context.Context, sets []r53types.ResourceRecordSet) error {
	for len(sets) > 0 {
		n := min(len(sets), 500)
		changes := make([]r53types.Change, n)
		for i := range n {
			changes[i] = r53types.Change{Action: r53types.ChangeActionDelete, ResourceRecordSet: &sets[i]}
		}
		if _, err := z.r.Client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(z.id),
			ChangeBatch: &r53types.ChangeBatch{Changes: changes}}); err != nil {
			return fmt.Errorf("route53: deleting %d record sets in zone %s: %w", n, z.id, err)
		}
		sets = sets[n:]
	}
	return nil
}

// errNoDelegationSet is an ingress job's failure in a deployment without DELEGATION_SET_ID.
var errNoDelegationSet = errors.New("route53: DELEGATION_SET_ID is not set: agent ingress domains need hosted zones on the reusable delegation set their ns_targets name (README, Deploying to AWS)")

// IngressZone returns the hosted zone of the agent ingress id's domain, on the delegation set,
// creating it when there is none. Concurrent jobs of one ingress create it once: the second
// creation with the same CallerReference fails with HostedZoneAlreadyExists and finds the
// first's.
func (r *Route53) IngressZone(ctx context.Context, id, domain string) (Records, error) {
	if r.DelegationSetID == "" {
		return nil, errNoDelegationSet
	}
	if zoneID, ok := r.zones.Load(id); ok {
		return r53Zone{r, zoneID.(string)}, nil
	}
	zoneID, _, err := r.findZone(ctx, id, domain)
	if err == nil && zoneID == "" {
		zoneID, err = r.createZone(ctx, id, domain)
	}
	if err != nil {
		return nil, err
	}
	r.zones.Store(id, zoneID)
	return r53Zone{r, zoneID}, nil
}

// findZone returns the id of the hosted zone named domain created for the ingress id ("" when
// there is none) and how many other zones have that name.
func (r *Route53) findZone(ctx context.Context, id, domain string) (zoneID string, others int, err error) {
	in := &route53.ListHostedZonesByNameInput{DNSName: aws.String(domain)}
	for {
		out, err := r.Client.ListHostedZonesByName(ctx, in)
		if err != nil {
			return "", 0, fmt.Errorf("route53: listing hosted zones named %s: %w", domain, err)
		}
		for _, z := range out.HostedZones {
			if !strings.EqualFold(aws.ToString(z.Name), fqdn(domain)) {
				return zoneID, others, nil // listed by name: the rest have other names
			}
			if aws.ToString(z.CallerReference) == id {
				zoneID = strings.TrimPrefix(aws.ToString(z.Id), "/hostedzone/")
			} else {
				others++
			}
		}
		if !out.IsTruncated || !strings.EqualFold(aws.ToString(out.NextDNSName), fqdn(domain)) {
			return zoneID, others, nil
		}
		in.DNSName, in.HostedZoneId = out.NextDNSName, out.NextHostedZoneId
	}
}

func (r *Route53) createZone(ctx context.Context, id, domain string) (string, error) {
	out, err := r.Client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String(domain), CallerReference: aws.String(id),
		DelegationSetId:  aws.String(r.DelegationSetID),
		HostedZoneConfig: &r53types.HostedZoneConfig{Comment: aws.String("agent ingress " + id)}})
	if err == nil {
		return strings.TrimPrefix(aws.ToString(out.HostedZone.Id), "/hostedzone/"), nil
	}
	var exists *r53types.HostedZoneAlreadyExists
	var conflict *r53types.ConflictingDomainExists
	switch {
	case errors.As(err, &exists):
		// Another job of this ingress created it a moment ago.
		zoneID, _, ferr := r.findZone(ctx, id, domain)
		if ferr == nil && zoneID == "" {
			ferr = fmt.Errorf("route53: the caller reference %s is taken but no zone named %s has it: %w", id, domain, err)
		}
		return zoneID, ferr
	case errors.As(err, &conflict):
		// A zone of the same name on these name servers is a deleted ingress's, about to be
		// deleted by its cleanup job: temporary. A parent or child domain's is the owner's to
		// resolve.
		_, others, ferr := r.findZone(ctx, id, domain)
		if ferr != nil || others > 0 {
			return "", fmt.Errorf("route53: the hosted zone of a deleted agent ingress for %s still exists: %w", domain, err)
		}
		return "", &dnsProblem{fmt.Sprintf("%s cannot be served by its ns_targets: another agent ingress's domain is a parent or a subdomain of it "+
			"(both cannot be delegated to the same name servers); delete one of them", domain)}
	}
	return "", fmt.Errorf("route53: creating the hosted zone %s: %w", domain, err)
}

// DeleteIngressZone deletes the hosted zone of the agent ingress id, its records (other than
// the zone's own SOA and NS) first, as Route 53 requires. No zone is success.
func (r *Route53) DeleteIngressZone(ctx context.Context, id, domain string) error {
	zoneID, _, err := r.findZone(ctx, id, domain)
	if err != nil || zoneID == "" {
		return err
	}
	z := r53Zone{r, zoneID}
	var sets []r53types.ResourceRecordSet
	in := &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zoneID)}
	for {
		out, err := r.Client.ListResourceRecordSets(ctx, in)
		if err != nil {
			return fmt.Errorf("route53: listing the records of zone %s: %w", zoneID, err)
		}
		for _, rs := range out.ResourceRecordSets {
			apex := strings.EqualFold(aws.ToString(rs.Name), fqdn(domain))
			if !apex || rs.Type != r53types.RRTypeSoa && rs.Type != r53types.RRTypeNs {
				sets = append(sets, rs)
			}
		}
		if !out.IsTruncated {
			break
		}
		in.StartRecordName, in.StartRecordType, in.StartRecordIdentifier = out.NextRecordName, out.NextRecordType, out.NextRecordIdentifier
	}
	if err := z.delete(ctx, sets); err != nil {
		return err
	}
	_, err = r.Client.DeleteHostedZone(ctx, &route53.DeleteHostedZoneInput{Id: aws.String(zoneID)})
	var gone *r53types.NoSuchHostedZone
	if err != nil && !errors.As(err, &gone) {
		return fmt.Errorf("route53: deleting the hosted zone %s of %s: %w", zoneID, domain, err)
	}
	r.zones.Delete(id)
	return nil
}
