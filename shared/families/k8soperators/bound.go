package k8soperators

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"tunnelapi/shared/families/endpoints/view"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/listfilter"
	"tunnelapi/shared/platform/store"
)

// maxBoundScan bounds how many endpoints one page of bound endpoints examines, as a filtered
// list's page does: the page then ends early with a next_page_uri resuming after the last
// endpoint examined.
const maxBoundScan = 1000

// boundEndpoints answers GET /kubernetes_operators/{id}/bound_endpoints: the account's
// endpoints bound to the operator (see the package doc), newest first, paged like every list
// (before_id is an endpoint id).
func (f Operators) boundEndpoints(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "k8soperators.boundEndpoints(%s)", r.PathValue("id"))
	p, err := api.ParsePage(r, ids.Endpoint, false)
	if err != nil {
		return nil, err
	}
	var op OperatorItem
	if err := f.Kit.Get(ctx, r, ids.KubernetesOperator, r.PathValue("id"), &op); err != nil {
		return nil, err
	}
	path := f.Path + "/" + op.ID + "/bound_endpoints"
	out := []any{}
	selectors, err := op.selectors()
	if err != nil || len(selectors) == 0 {
		return api.List{Key: "endpoints", Items: out, URI: r.URI(path), NextPage: nil}, err
	}
	last, examined, size, more, full, before := "", 0, 0, true, false, p.BeforeID
	for more && !full && len(out) < p.Limit && examined < maxBoundScan {
		var items []store.Item
		if items, more, err = f.Kit.DB.PageQueryStart(ctx, store.Collection(op.AccountID, ids.Endpoint), before, p.Limit); err != nil {
			return nil, err
		}
		for i, raw := range items {
			var ep view.EndpointItem
			if err := store.Unmarshal(raw, &ep); err != nil {
				return nil, err
			}
			v := view.Render(r, &ep)
			ok, err := bound(selectors, v)
			if err != nil {
				return nil, err
			}
			if ok {
				b, err := json.Marshal(v)
				if err != nil {
					return nil, fmt.Errorf("measure a bound endpoint: %w", err)
				}
				if len(out) > 0 && size+len(b) > api.MaxPageBytes {
					more, full = true, true // the next page starts at this endpoint
					break
				}
				size += len(b)
				out = append(out, v)
			}
			last, before = ep.ID, ep.ID
			examined++
			if len(out) == p.Limit {
				more = more || i < len(items)-1
				break
			}
		}
	}
	return api.List{Key: "endpoints", Items: out, URI: r.URI(path), NextPage: api.NextPageURI(r, path, p, last, more)}, nil
}

// selectors are the operator's compiled endpoint selectors; none without the bindings feature.
func (op *OperatorItem) selectors() ([]*listfilter.Filter, error) {
	if !slices.Contains(op.Features, "bindings") {
		return nil, nil
	}
	out := make([]*listfilter.Filter, 0, len(op.Binding.Selectors))
	for _, s := range op.Binding.Selectors {
		flt, err := listfilter.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("stored selector %q: %w", s, err)
		}
		out = append(out, flt)
	}
	return out, nil
}

// bound reports whether the endpoint v has the kubernetes binding and a selector matches it.
func bound(selectors []*listfilter.Filter, v view.EndpointJSON) (bool, error) {
	if !slices.Contains(v.Bindings, view.BindingKubernetes) {
		return false, nil
	}
	for _, s := range selectors {
		if ok, err := s.Match(v); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}
