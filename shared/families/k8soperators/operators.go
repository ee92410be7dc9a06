package k8soperators

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/listfilter"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Features an operator may enable, and the region it defaults to.
var features = []string{"bindings", "ingress", "gateway"}

const defaultRegion = "global"

// Limits of the operator's own strings, which the platform does not document beyond
// description and metadata: a Kubernetes name is at most 253 bytes.
const (
	maxStringBytes   = 255
	maxSelectors     = 64
	maxSelectorBytes = 1024
)

// textCodes: the platform documents no codes of its own for this family's text.
var textCodes = api.TextCodes{Description: api.CodeBadFieldValue, Metadata: api.CodeBadFieldValue}

// OperatorItem is a stored Kubernetes operator.
type OperatorItem struct {
	store.Meta
	resource.Described
	UpdatedAt   int64      `dynamodbav:"updated"`
	PrincipalID string     `dynamodbav:"principal"`
	Features    []string   `dynamodbav:"features"`
	Region      string     `dynamodbav:"region"`
	Deployment  Deployment `dynamodbav:"deployment"`
	Binding     Binding    `dynamodbav:"binding"`
}

// Deployment is where the operator runs, as it reports it.
type Deployment struct {
	Name        string `dynamodbav:"name" json:"name"`
	Namespace   string `dynamodbav:"namespace" json:"namespace"`
	Version     string `dynamodbav:"version" json:"version"`
	ClusterName string `dynamodbav:"cluster_name" json:"cluster_name"`
}

// Binding is the operator's bindings configuration and its signed client certificate (PEM;
// "" until a CSR is signed), valid from NotBefore to NotAfter (Unix seconds).
type Binding struct {
	Selectors       []string `dynamodbav:"selectors,omitempty"`
	IngressEndpoint string   `dynamodbav:"ingress_endpoint,omitempty"`
	Cert            string   `dynamodbav:"cert,omitempty"`
	NotBefore       int64    `dynamodbav:"not_before,omitempty"`
	NotAfter        int64    `dynamodbav:"not_after,omitempty"`
}

// OperatorJSON is the wire form of a Kubernetes operator.
type OperatorJSON struct {
	resource.UpdatedHead
	Principal       api.Ref     `json:"principal"`
	EnabledFeatures []string    `json:"enabled_features"`
	Region          string      `json:"region"`
	Deployment      Deployment  `json:"deployment"`
	Binding         BindingJSON `json:"binding"`
}

// BindingJSON is the wire form of an operator's binding: always present, its cert empty (with
// zero timestamps) until a CSR is signed; ingress_endpoint omitted until set.
type BindingJSON struct {
	EndpointSelectors []string `json:"endpoint_selectors"`
	Cert              CertJSON `json:"cert"`
	IngressEndpoint   string   `json:"ingress_endpoint,omitempty"`
}

// CertJSON is the wire form of a binding's certificate.
type CertJSON struct {
	Cert      string `json:"cert"`
	NotBefore string `json:"not_before"`
	NotAfter  string `json:"not_after"`
}

type bindingBody struct {
	EndpointSelectors *[]string `json:"endpoint_selectors"`
	CSR               *string   `json:"csr"`
	IngressEndpoint   *string   `json:"ingress_endpoint"`
}

type createBody struct {
	api.Text
	EnabledFeatures *[]string `json:"enabled_features"`
	Region          *string   `json:"region"`
	Deployment      *struct {
		Name        *string `json:"name"`
		Namespace   *string `json:"namespace"`
		Version     *string `json:"version"`
		ClusterName *string `json:"cluster_name"`
	} `json:"deployment"`
	Binding *bindingBody `json:"binding"`
}

type updateBody struct {
	api.Text
	EnabledFeatures *[]string    `json:"enabled_features"`
	Region          *string      `json:"region"`
	Binding         *bindingBody `json:"binding"`
	Deployment      *struct {
		Name    *string `json:"name"`
		Version *string `json:"version"`
	} `json:"deployment"`
}

// Path is the family's collection path.
const Path = "/kubernetes_operators"

// KubernetesOperatorsDescriptor is the /kubernetes_operators family. Its rules:
//   - enabled_features is a subset of bindings, ingress and gateway, matched without regard to
//     case and stored in lower case (the platform answers ["ingress"] to ["Ingress"]); repeats
//     are kept once. Anything else is ERR_NGROK_215 naming enabled_features. region is global
//     (the default) or one of the deployment's regions (REGIONS).
//   - A binding's csr (PEM, "CERTIFICATE REQUEST") is signed into binding.cert: a client
//     certificate for the operator's mutual TLS connection, its subject the operator's id,
//     valid from the signing for certValidity. A CSR that does not parse, whose signature does
//     not verify, or whose key is weak (RSA under 2048 bits, an elliptic curve other than P-256,
//     P-384 or P-521) is ERR_NGROK_215 naming binding.csr. Without one, cert is "" with zero
//     timestamps, as the platform renders it; a later csr (PATCH) replaces the certificate.
//   - Each account has its own certificate authority, made the first time one of its operators
//     sends a CSR: an ECDSA P-256 key, sealed like every private key (package seal) and kept
//     with its self-signed certificate in one item (store.OperatorCAKey). Per account rather
//     than per deployment, so that a certificate binds an operator to its account alone (a
//     verifier trusting one account's CA trusts no other account's operators), and a
//     compromised or rotated CA key concerns one account.
//   - binding.endpoint_selectors are filter expressions (package listfilter's dialect) over
//     obj, an endpoint as GET /endpoints/{id} returns it; one that does not compile is
//     ERR_NGROK_215 naming it. endpoint_selectors is null when there are none.
//   - GET /kubernetes_operators/{id}/bound_endpoints lists, newest first and paged like every
//     list, the account's endpoints bound to the operator: with the bindings feature enabled,
//     the endpoints with the kubernetes binding that one of its selectors matches. Without a
//     data plane, agent endpoints never exist here, so these are cloud endpoints made with
//     bindings ["kubernetes"]; an operator without the feature or a selector has none.
//   - A create or update with a CSR reads the account's CA (one GetItem, and the key unsealed:
//     a KMS Decrypt in AWS) before its transaction; the account's first also generates the CA
//     and puts it, conditioned on its absence (a concurrent first loses and reads the winner's).
//     Every create first reads the caller's items, so that nothing is signed, unsealed or
//     generated for a refused caller (package resource: a Prepare that keeps secrets runs
//     after verification); otherwise, without a CSR, the operations cost what every family's do.
//   - binding.ingress_endpoint is the operator's when it sends one; an update of an operator
//     without one gives it the deployment's (IngressEndpoint: connect.endpoints.<BASE_DOMAIN>:443),
//     as the platform's recorded update answers its own (connect.ngrok-endpoints.com:443) for
//     an operator registered without one; a create leaves it out, as the platform's does.
//   - principal is the principal that created the operator, its uri "" as the platform
//     renders it. Free text over its limits is ERR_NGROK_215, as are deployment strings and
//     ingress_endpoint (host:port) over 255 bytes or malformed.
var KubernetesOperatorsDescriptor = &resource.Descriptor{
	Path: Path, Prefix: ids.KubernetesOperator, ListKey: "operators", EventKind: "kubernetes_operator", Filter: true,
	Reads: []config.Section{config.DomainSettings},
	Binding: func() resource.Binding {
		return resource.Bind(newOperators, resource.Route[Operators]{
			Method: http.MethodGet, Pattern: "/{id}/bound_endpoints", Status: http.StatusOK, Handle: Operators.boundEndpoints},
		).Keeping(resource.Seals | resource.Opens)
	},
}

// Operators is the Kubernetes operator family's rules.
type Operators struct {
	*resource.Family[OperatorItem, *OperatorItem]
	resource.Prepared[*OperatorItem]
	// regions are the regions an operator may name besides global.
	regions []string
	// ingress is the deployment's ingress endpoint an update gives an operator that has none
	// (IngressEndpoint).
	ingress string
}

// newOperators makes the family's hooks with the regions and the ingress endpoint of the
// deployment's configuration.
func newOperators(f *resource.Family[OperatorItem, *OperatorItem]) Operators {
	c := domains.ConfigOf(f.Kit)
	return Operators{Family: f, regions: c.Regions, ingress: IngressEndpoint(c.BaseDomain)}
}

// IngressEndpoint is the ingress endpoint of a deployment whose BASE_DOMAIN is base, as the
// platform's connect.ngrok-endpoints.com:443 is its own: connect.endpoints.<base>:443, a name
// two labels under the base domain, which no reservation can take ("" for no base domain).
func IngressEndpoint(base string) string {
	if base == "" {
		return ""
	}
	return "connect.endpoints." + base + ":443"
}

// zeroTime is how the platform renders the timestamps of a certificate not yet signed.
const zeroTime = "0001-01-01T00:00:00Z"

// Render returns an operator as GET returns it.
func (f Operators) Render(r *api.Request, it *OperatorItem) any {
	cert := CertJSON{Cert: it.Binding.Cert, NotBefore: zeroTime, NotAfter: zeroTime}
	if it.Binding.Cert != "" {
		cert.NotBefore, cert.NotAfter = api.Timestamp(it.Binding.NotBefore), api.Timestamp(it.Binding.NotAfter)
	}
	var selectors []string
	if it.Binding.Selectors != nil {
		selectors = slices.Clone(it.Binding.Selectors)
	}
	return OperatorJSON{UpdatedHead: resource.NewHead(r, f.Path, &it.Meta, it.Described).Updated(it.UpdatedAt),
		Principal:       api.Ref{ID: it.PrincipalID},
		EnabledFeatures: api.Slice(slices.Clone(it.Features)), Region: it.Region, Deployment: it.Deployment,
		Binding: BindingJSON{EndpointSelectors: selectors, Cert: cert, IngressEndpoint: it.Binding.IngressEndpoint}}
}

// Prepare validates the body and signs the binding's CSR, once per request, before the
// transaction.
func (f Operators) Prepare(ctx context.Context, r *api.Request, it *OperatorItem) error {
	var in createBody
	if err := it.DecodeCreate(r, textCodes, &in); err != nil {
		return err
	}
	it.Region, it.Features, it.PrincipalID, it.UpdatedAt = defaultRegion, []string{}, r.Caller().PrincipalID, it.CreatedAt
	if err := f.setCommon(in.EnabledFeatures, in.Region, it); err != nil {
		return err
	}
	if d := in.Deployment; d != nil {
		for _, s := range []struct {
			field string
			in    *string
			dst   *string
		}{{"deployment.name", d.Name, &it.Deployment.Name}, {"deployment.namespace", d.Namespace, &it.Deployment.Namespace},
			{"deployment.version", d.Version, &it.Deployment.Version}, {"deployment.cluster_name", d.ClusterName, &it.Deployment.ClusterName}} {
			if err := setString(s.field, s.in, s.dst); err != nil {
				return err
			}
		}
	}
	return f.setBinding(ctx, r, in.Binding, it)
}

// Update applies a PATCH body: the members it supplies replace the stored ones; a csr is
// signed into a new certificate; an operator without an ingress endpoint gets the deployment's.
func (f Operators) Update(ctx context.Context, r *api.Request, it *OperatorItem, m *resource.Mutation) error {
	var in updateBody
	if err := it.DecodePatch(r, textCodes, &in); err != nil {
		return err
	}
	if err := f.setCommon(in.EnabledFeatures, in.Region, it); err != nil {
		return err
	}
	if d := in.Deployment; d != nil {
		if err := setString("deployment.name", d.Name, &it.Deployment.Name); err != nil {
			return err
		}
		if err := setString("deployment.version", d.Version, &it.Deployment.Version); err != nil {
			return err
		}
	}
	if err := f.setBinding(ctx, r, in.Binding, it); err != nil {
		return err
	}
	// The platform's update answers its ingress endpoint for an operator registered without
	// one (its recorded PATCH of metadata alone does), and reads show it from then on.
	if it.Binding.IngressEndpoint == "" {
		it.Binding.IngressEndpoint = f.ingress
	}
	it.UpdatedAt = time.Now().Unix()
	return nil
}

// setCommon sets the enabled features and the region when supplied.
func (f Operators) setCommon(enabled *[]string, region *string, it *OperatorItem) error {
	if enabled != nil {
		out := []string{}
		for _, s := range *enabled {
			feature := strings.ToLower(s)
			if !slices.Contains(features, feature) {
				return api.Invalid("enabled_features", "enabled_features: %s is not one of bindings, ingress or gateway", api.Describe(s))
			}
			if !slices.Contains(out, feature) {
				out = append(out, feature)
			}
		}
		it.Features = out
	}
	if region != nil {
		if *region != defaultRegion && !slices.Contains(f.regions, *region) {
			return api.Invalid("region", "region %s is not global or one of %s", api.Describe(*region), strings.Join(f.regions, ", "))
		}
		it.Region = *region
	}
	return nil
}

// setBinding applies a binding body: selectors and ingress endpoint when supplied, and a CSR
// signed into the binding's certificate.
func (f Operators) setBinding(ctx context.Context, r *api.Request, in *bindingBody, it *OperatorItem) error {
	if in == nil {
		return nil
	}
	if in.EndpointSelectors != nil {
		sel, err := checkSelectors(*in.EndpointSelectors)
		if err != nil {
			return err
		}
		it.Binding.Selectors = sel
	}
	if in.IngressEndpoint != nil {
		if err := checkHostPort(*in.IngressEndpoint); err != nil {
			return err
		}
		it.Binding.IngressEndpoint = *in.IngressEndpoint
	}
	if in.CSR != nil && *in.CSR != "" {
		csr, err := ParseCSR(*in.CSR)
		if err != nil {
			return err
		}
		ca, err := loadCA(ctx, f.Kit, it.AccountID)
		if err != nil {
			return err
		}
		now := time.Now()
		cert, err := ca.sign(csr, it.ID, now)
		if err != nil {
			return err
		}
		it.Binding.Cert, it.Binding.NotBefore, it.Binding.NotAfter = cert, now.Unix(), now.Add(certValidity).Unix()
	}
	return nil
}

// checkSelectors compiles each selector as a filter over an endpoint.
func checkSelectors(in []string) ([]string, error) {
	const field = "binding.endpoint_selectors"
	if len(in) > maxSelectors {
		return nil, api.Invalid(field, "%s has %d selectors, more than %d", field, len(in), maxSelectors)
	}
	for i, s := range in {
		if len(s) > maxSelectorBytes {
			return nil, api.Invalid(field, "%s[%d] is %d bytes, more than %d", field, i, len(s), maxSelectorBytes)
		}
		if _, err := listfilter.Compile(s); err != nil {
			return nil, api.Invalid(field, "%s[%d] is not a valid selector: %s", field, i, err.Error())
		}
	}
	return slices.Clone(in), nil
}

// checkHostPort accepts a binding's ingress endpoint: host:port.
func checkHostPort(s string) error {
	const field = "binding.ingress_endpoint"
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	if err != nil || host == "" || perr != nil || n < 1 || n > 65535 || len(s) > maxStringBytes || strings.ContainsAny(host, "/ \t\r\n") {
		return api.Invalid(field, "%s %s is not host:port, such as connect.example.com:443", field, api.Describe(s))
	}
	return nil
}

// setString sets *dst to a supplied string of at most maxStringBytes.
func setString(field string, in *string, dst *string) error {
	if in == nil {
		return nil
	}
	if len(*in) > maxStringBytes {
		return api.Invalid(field, "%s is %d bytes, more than %d", field, len(*in), maxStringBytes)
	}
	*dst = *in
	return nil
}
