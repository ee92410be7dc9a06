package operator

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/workers/usage"
)

// Tenant is a tenant (an account) as the operator's routes render it.
type Tenant struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	// Status is active, suspended or deleting.
	Status    string `json:"status"`
	CreatedAt string `json:"created_at"`
	// UsageToday is what it used today so far (UTC; package usage): shown by get, not by list.
	UsageToday *usage.Day `json:"usage_today,omitempty"`
}

// Created is the answer to a tenant's creation: the tenant, its first admin and that admin's
// API key, whose token is shown only here.
type Created struct {
	Tenant      Tenant `json:"tenant"`
	AdminUserID string `json:"admin_user_id"`
	APIKeyID    string `json:"api_key_id"`
	Token       string `json:"token"`
}

// TenantList is a page of tenants, newest first.
type TenantList struct {
	Tenants     []Tenant `json:"tenants"`
	NextPageURI *string  `json:"next_page_uri"`
}

// StatusActive is the status of a tenant neither suspended nor being deleted.
const StatusActive = "active"

// tenantCreate is the body of a creation.
type tenantCreate struct {
	Email *string `json:"email"`
}

// errNoTenant is the 404 for an id that names no tenant.
var errNoTenant = &api.Error{Status: http.StatusNotFound, Code: "ERR_NGROK_404", Field: "id", Msg: "no tenant has this id"}

// errDeleting is the 409 for a change of a tenant being deleted.
var errDeleting = &api.Error{Status: http.StatusConflict, Code: api.CodeBadFieldValue, Field: "id",
	Msg: "the tenant is being deleted: only DELETE, which resumes the deletion, applies to it"}

func render(it principals.TenantItem) Tenant {
	status := it.Status
	if status == "" {
		status = StatusActive
	}
	return Tenant{ID: it.ID, Email: it.Email, Status: status, CreatedAt: api.Timestamp(it.Created)}
}

// create makes a tenant with its first admin key (principals.Bootstrap).
func (o *Operator) create(ctx context.Context, r *api.Request) (any, error) {
	var in tenantCreate
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	email := "admin@" + time.Now().UTC().Format("20060102150405") + ".tenant"
	if in.Email != nil {
		if *in.Email == "" || len(*in.Email) > 254 {
			return nil, api.Invalid("email", "email must be 1 to 254 characters")
		}
		email = *in.Email
	}
	b, err := principals.Bootstrap(ctx, o.DB, email, "first admin key")
	if err != nil {
		return nil, err
	}
	t, err := o.tenant(ctx, b.AccountID)
	if err != nil {
		return nil, err
	}
	return Created{Tenant: render(t), AdminUserID: b.UserID, APIKeyID: b.APIKeyID, Token: b.Token}, nil
}

// tenant reads the tenant id's entry.
func (o *Operator) tenant(ctx context.Context, id string) (principals.TenantItem, error) {
	var t principals.TenantItem
	if _, _, err := ids.Parse(id); err != nil {
		return t, errNoTenant
	}
	err := o.DB.Get(ctx, store.TenantKey(id), &t)
	if store.IsNotFound(err) {
		return t, errNoTenant
	}
	return t, err
}

// list is a page of tenants (limit, before_id), newest first.
func (o *Operator) list(ctx context.Context, r *api.Request) (any, error) {
	p, err := api.ParsePage(r, ids.Account, false)
	if err != nil {
		return nil, err
	}
	items, more, err := o.DB.PageQuery(ctx, store.TenantsPartition, p.BeforeID, p.Limit)
	if err != nil {
		return nil, err
	}
	out := TenantList{Tenants: []Tenant{}}
	for _, it := range items {
		var t principals.TenantItem
		if err := store.Unmarshal(it, &t); err != nil {
			return nil, err
		}
		out.Tenants = append(out.Tenants, render(t))
	}
	if more && len(out.Tenants) > 0 {
		next := r.URI("/operator/tenants") + "?limit=" + strconv.Itoa(p.Limit) + "&before_id=" + out.Tenants[len(out.Tenants)-1].ID
		out.NextPageURI = &next
	}
	return out, nil
}

// get is one tenant, with its usage today.
func (o *Operator) get(ctx context.Context, r *api.Request) (any, error) {
	t, err := o.tenant(ctx, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	day, err := usage.On(ctx, o.DB, t.ID, time.Now().UTC().Format(usage.DayFormat))
	if err != nil {
		return nil, err
	}
	out := render(t)
	out.UsageToday = &day
	return out, nil
}

// suspend refuses every key of the tenant (auth.ErrSuspended) and pauses its deliveries and
// certificate renewals; nothing is deleted.
func (o *Operator) suspend(ctx context.Context, r *api.Request) (any, error) {
	return o.SetStatus(ctx, r.PathValue("id"), auth.StatusSuspended)
}

// resume undoes suspend.
func (o *Operator) resume(ctx context.Context, r *api.Request) (any, error) {
	return o.SetStatus(ctx, r.PathValue("id"), "")
}

// SetStatus sets the status of tenant id (auth.StatusSuspended, or "" to resume it) on its
// account item and its tenant entry in one transaction, on the condition that the tenant is not
// being deleted. A suspension then marks the account's tunnel sessions revoked; when that fails
// the suspension stands, the error is returned (suspending again marks them), and a session
// left unmarked ends when its lease is next renewed.
func (o *Operator) SetStatus(ctx context.Context, id, status string) (Tenant, error) {
	t, err := o.tenant(ctx, id)
	if err != nil {
		return Tenant{}, err
	}
	name := expression.Name("status")
	upd := expression.Remove(name)
	if status != "" {
		upd = expression.Set(name, expression.Value(status))
	}
	cond := store.Exists().And(expression.Or(expression.AttributeNotExists(name), name.NotEqual(expression.Value(auth.StatusDeleting))))
	tx := &store.Tx{}
	tx.Update("account", store.AccountKey(id), upd, cond)
	tx.Update("tenant", store.TenantKey(id), upd, cond)
	tx.Refuse("account", errDeleting)
	tx.Refuse("tenant", errDeleting)
	if err := o.DB.Commit(ctx, tx); err != nil {
		return Tenant{}, err
	}
	if status == auth.StatusSuspended {
		// After the commit, so that a login committing before it is found (tunnels.Start).
		if err := tunnels.Revoke(ctx, o.DB, id, "", "the account of this tunnel session is suspended"); err != nil {
			return Tenant{}, err
		}
	}
	t.Status = status
	return render(t), nil
}

// remove erases the tenant (erase): 204 once nothing of it is left, 202 with the tenant when the
// request's time ran out first (DELETE again resumes).
func (o *Operator) remove(ctx context.Context, r *api.Request) (any, error) {
	id := r.PathValue("id")
	t, err := o.tenant(ctx, id)
	if err != nil {
		return nil, err
	}
	err = o.Erase(ctx, id)
	if errors.Is(err, ErrUnfinished) {
		t.Status = auth.StatusDeleting
		return accepted{render(t)}, nil
	}
	return nil, err
}

// accepted is a response answered with 202 and Retry-After rather than the route's status.
type accepted struct{ Tenant }

// issueKey gives the operator an admin API key of the tenant (principals.IssueAdminKey), for an
// export or an import through the tenant's own API; its token is shown only here.
func (o *Operator) issueKey(ctx context.Context, r *api.Request) (any, error) {
	t, err := o.tenant(ctx, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if t.Status != "" {
		return nil, errNotActive
	}
	b, err := principals.IssueAdminKey(ctx, o.DB, t.ID, "operator session")
	if err != nil {
		return nil, err
	}
	return Created{Tenant: render(t), AdminUserID: b.UserID, APIKeyID: b.APIKeyID, Token: b.Token}, nil
}

// errNotActive is the 409 for a key asked of a tenant that is suspended or being deleted.
var errNotActive = &api.Error{Status: http.StatusConflict, Code: api.CodeBadFieldValue, Field: "id",
	Msg: "the tenant is suspended or being deleted: its keys are refused, resume it first"}
