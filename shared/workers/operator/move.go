package operator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/resource"
)

// TenantAPI is the tenants' API of a deployment as one tenant calls it: Export reads through it
// and Import creates through it, so both see exactly what the API renders and accepts.
type TenantAPI struct {
	Base  string // the deployment's base URL
	Token string // an admin API key of the tenant (the operator's route POST …/keys issues one)
	HTTP  *http.Client
}

// Line is one line of an export (JSON lines): the first names the tenant, each other holds one
// object as the API renders it under its family's path.
type Line struct {
	Tenant *Exported      `json:"tenant,omitempty"`
	Path   string         `json:"path,omitempty"`
	Object map[string]any `json:"object,omitempty"`
	// Supply are the write-only members the object's create needs (a secret's value, a
	// certificate's private key): null in an export; Import needs them filled in.
	Supply map[string]any `json:"supply,omitempty"`
}

// Exported is the tenant an export was read from: ids its objects may name that no exported
// object has (the tenant's own and its first admin's), which Import maps to its tenant's.
type Exported struct {
	ID          string `json:"id"`
	AdminUserID string `json:"admin_user_id"`
}

// writeOnly are, by family path, the members (dotted paths) a create needs that no read
// renders; one is asked for when the object has its parent.
var writeOnly = map[string][]string{
	"/vault_secrets":    {"value"},
	"/tls_certificates": {"private_key_pem"},
	"/event_destinations": {"target.kinesis.auth.creds.aws_secret_access_key",
		"target.firehose.auth.creds.aws_secret_access_key", "target.cloudwatch_logs.auth.creds.aws_secret_access_key",
		"target.datadog.api_key", "target.azure_logs_ingestion.client_secret"},
	// A binding's certificate is signed for a request made in the cluster: a new one is.
	"/kubernetes_operators": {"binding.csr"},
}

// reported are, by family path, the members whose value marks an object a tunnel server reported
// rather than the API created (a live tunnel's ephemeral endpoint): it cannot be imported, and
// comes back when its agent reconnects.
var reported = map[string]map[string]string{"/endpoints": {"type": "ephemeral"}}

// isReported reports whether obj, listed at path, is an object a tunnel server reported.
func isReported(path string, obj map[string]any) bool {
	for m, v := range reported[path] {
		if obj[m] == v {
			return true
		}
	}
	return false
}

// renderedOnly are the members every rendered object has that no create takes.
var renderedOnly = []string{"id", "uri", "created_at", "updated_at"}

// exportPage is the page size an export asks for.
const exportPage = 100

// Export writes everything of tenant t that families list, as the API renders it, one Line per
// object, each family's objects oldest first; the object with id skip (the operator's own key
// for the export) is left out.
func Export(ctx context.Context, c *TenantAPI, families []*resource.Descriptor, t Exported, skip string, w io.Writer) (err error) {
	defer derrors.Wrap(&err, "operator.Export(%s)", t.ID)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Line{Tenant: &t}); err != nil {
		return err
	}
	for _, d := range families {
		// What a family lists but never creates (tunnel sessions and tunnels, which tunnel
		// servers report) cannot be imported: it comes back when its agents reconnect.
		if !d.Offers(resource.OpList) || !d.Offers(resource.OpCreate) {
			continue
		}
		var objs []map[string]any
		for next := fmt.Sprintf("%s?limit=%d", d.Path, exportPage); next != ""; {
			status, body, err := c.Do(ctx, http.MethodGet, next, nil)
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return fmt.Errorf("GET %s: %d %v", next, status, body)
			}
			list, _ := body[d.ListKey].([]any)
			for _, o := range list {
				if obj, ok := o.(map[string]any); ok && obj["id"] != skip && !isReported(d.Path, obj) {
					objs = append(objs, obj)
				}
			}
			next, _ = body["next_page_uri"].(string)
		}
		slices.Reverse(objs)
		for _, obj := range objs {
			l := Line{Path: d.Path, Object: obj}
			for _, m := range writeOnly[d.Path] {
				if _, ok := at(obj, m[:max(strings.LastIndex(m, "."), 0)]).(map[string]any); !ok {
					continue
				}
				if l.Supply == nil {
					l.Supply = map[string]any{}
				}
				l.Supply[m] = nil
			}
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// Imported is one object Import created: its exported id and its new one, and the token of a
// key or credential, shown only now.
type Imported struct {
	Path  string `json:"path"`
	From  string `json:"from"`
	ID    string `json:"id"`
	Token string `json:"token,omitempty"`
}

// Import creates the objects of an export (read from r) in tenant into through its create
// routes, each after the objects it names, every exported id it names replaced by the new one
// (and every other value an object was given anew, such as a reserved address). A member its
// create refuses as unknown is one no create takes and is left out. It writes one Imported line
// per object created to out.
//
// Every line is read and checked before anything is sent: a line whose path is not the
// collection path of one of families that creates (Descriptor.Path, as Export writes it) is
// refused, naming the line, so that the tenant's admin key goes only to the creates of the
// tenant's API, never to a URL or a route a file names.
func Import(ctx context.Context, c *TenantAPI, families []*resource.Descriptor, into Exported, r io.Reader, out io.Writer) (err error) {
	defer derrors.Wrap(&err, "operator.Import(%s)", into.ID)
	creates := map[string]bool{}
	for _, d := range families {
		if d.Offers(resource.OpCreate) {
			creates[d.Path] = true
		}
	}
	var lines []Line
	remap := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 4*api.MaxBodyBytes)
	for n := 1; sc.Scan(); n++ {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		switch {
		case l.Tenant != nil:
			remap[l.Tenant.ID], remap[l.Tenant.AdminUserID] = into.ID, into.AdminUserID
		case l.Path != "" && !creates[l.Path]:
			return fmt.Errorf("line %d: path %q is not the collection of a family that creates (as /api_keys is): nothing was sent", n, l.Path)
		case l.Path != "" && l.Object != nil:
			for m, v := range l.Supply {
				if v == nil {
					return fmt.Errorf("line %d: %s %v needs its %s supplied (write-only, never exported)", n, l.Path, l.Object["id"], m)
				}
			}
			lines = append(lines, l)
		default:
			return fmt.Errorf("line %d: neither a tenant nor an object", n)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	exported := map[string]bool{}
	for _, l := range lines {
		if id, ok := l.Object["id"].(string); ok {
			exported[id] = true
		}
	}
	enc := json.NewEncoder(out)
	for len(lines) > 0 {
		i := slices.IndexFunc(lines, func(l Line) bool {
			for id := range names(l.Object) {
				if exported[id] && id != l.Object["id"] && remap[id] == "" {
					return false
				}
			}
			return true
		})
		if i < 0 {
			return fmt.Errorf("%s %v and the exported objects it names name each other: none can be created first", lines[0].Path, lines[0].Object["id"])
		}
		l := lines[i]
		lines = slices.Delete(lines, i, i+1)
		made, err := create(ctx, c, l, remap)
		if err != nil {
			return err
		}
		from, _ := l.Object["id"].(string)
		for _, k := range anew {
			old, _ := l.Object[k].(string)
			if s, ok := made[k].(string); ok && old != "" && s != old {
				remap[old] = s
			}
		}
		id, _ := made["id"].(string)
		token, _ := made["token"].(string)
		if err := enc.Encode(Imported{Path: l.Path, From: from, ID: id, Token: token}); err != nil {
			return err
		}
		if ch, ok := children[l.Path]; ok {
			list, _ := l.Object[ch.member].([]any)
			for _, o := range list {
				obj, _ := o.(map[string]any)
				cl := Line{Path: fmt.Sprintf(ch.path, url.PathEscape(id)), Object: obj}
				made, err := create(ctx, c, cl, remap)
				if err != nil {
					return err
				}
				from, _ := obj["id"].(string)
				if err := enc.Encode(Imported{Path: cl.Path, From: from, ID: fmt.Sprint(made["id"])}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// children are the members of an object that its create does not take and a route under the
// new object creates, one each: an HTTPS edge's routes.
var children = map[string]struct{ member, path string }{
	"/edges/https": {"routes", "/edges/https/%s/routes"},
}

// create makes l's object: its rendering turned into a create body, retried without each member
// the create refuses as unknown.
func create(ctx context.Context, c *TenantAPI, l Line, remap map[string]string) (map[string]any, error) {
	body := createBody(l.Object, remap).(map[string]any)
	if f := asCreated[l.Path]; f != nil {
		f(body)
	}
	if ch, ok := children[l.Path]; ok {
		delete(body, ch.member)
	}
	for _, m := range renderedOnly {
		delete(body, m)
	}
	for m, v := range l.Supply {
		parent, _ := at(body, m[:max(strings.LastIndex(m, "."), 0)]).(map[string]any)
		if parent == nil {
			return nil, fmt.Errorf("%s %v: the object has no member %s", l.Path, l.Object["id"], m)
		}
		parent[m[strings.LastIndex(m, ".")+1:]] = v
	}
	for {
		status, out, err := c.Do(ctx, http.MethodPost, l.Path, body)
		if err != nil {
			return nil, err
		}
		if status == http.StatusCreated || status == http.StatusOK {
			return out, nil
		}
		details, _ := out["details"].(map[string]any)
		field, _ := details["field"].(string)
		if status != http.StatusBadRequest || out["error_code"] != api.CodeUnknownField || !drop(body, field) {
			return nil, fmt.Errorf("create %s from %v: %d %v", l.Path, l.Object["id"], status, out)
		}
	}
}

// anew are the members a create gives an object anew that other objects name: its id and a
// reserved address (which TCP edges name as hostports).
var anew = []string{"id", "addr"}

// asCreated turns, by family path, what a read renders into what the create takes where the two
// differ other than by references and members no create takes: an SSH CA is rendered with key_type and created with
// private_key_type (and, for ECDSA, elliptic_curve, which its public key names).
var asCreated = map[string]func(obj map[string]any){
	// An HTTPS edge renders where it terminates TLS, which is not configurable.
	"/edges/https": func(obj map[string]any) { drop(obj, "tls_termination.terminate_at") },
	"/ssh_certificate_authorities": func(obj map[string]any) {
		obj["private_key_type"] = obj["key_type"]
		pk, _ := obj["public_key"].(string)
		if curve, ok := strings.CutPrefix(pk, "ecdsa-sha2-nist"); ok {
			obj["elliptic_curve"], _, _ = strings.Cut(curve, " ")
		}
	},
}

// createBody is a rendered value as a create takes it: each exported id (and other value given
// anew) replaced by the new one, wherever it is (weighted backends key their weights by id), and
// each reference ({"id", "uri"}) to another object by its id, its member named <name>_id (a
// list of them <singular>_ids).
func createBody(v any, remap map[string]string) any {
	switch v := v.(type) {
	case string:
		if n, ok := remap[v]; ok {
			return n
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = createBody(x, remap)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			name := createBody(k, remap).(string)
			switch ref, refs := refID(x), refIDs(x); {
			case ref != "":
				out[name+"_id"] = createBody(ref, remap)
			case refs != nil:
				out[singular(name)+"_ids"] = createBody(refs, remap)
			default:
				out[name] = createBody(x, remap)
			}
		}
		return out
	}
	return v
}

// refID is the id of a reference ({"id": …, "uri": …}), "" for anything else.
func refID(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 || m["uri"] == nil {
		return ""
	}
	id, _ := m["id"].(string)
	return id
}

// refIDs are the ids of a non-empty list of references, nil for anything else.
func refIDs(v any) []any {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return nil
	}
	var out []any
	for _, x := range l {
		id := refID(x)
		if id == "" {
			return nil
		}
		out = append(out, id)
	}
	return out
}

// singular is the singular of a member's plural name (ip_policies: ip_policy).
func singular(s string) string {
	if b, ok := strings.CutSuffix(s, "ies"); ok {
		return b + "y"
	}
	return strings.TrimSuffix(s, "s")
}

// drop deletes the member at a path of body as the API names it in an error (a.b[2].c),
// reporting whether there was one.
func drop(body map[string]any, path string) bool {
	parts := strings.Split(strings.NewReplacer("[", ".", "]", "").Replace(path), ".")
	var v any = body
	for _, p := range parts[:len(parts)-1] {
		switch o := v.(type) {
		case map[string]any:
			v = o[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(o) {
				return false
			}
			v = o[i]
		default:
			return false
		}
	}
	m, ok := v.(map[string]any)
	last := parts[len(parts)-1]
	if _, has := m[last]; !ok || !has || path == "" {
		return false
	}
	delete(m, last)
	return true
}

// at is the value at a dotted path of m (m itself for ""), nil when there is none.
func at(m map[string]any, path string) any {
	var v any = m
	if path == "" {
		return v
	}
	for _, p := range strings.Split(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[p]
	}
	return v
}

// names are the strings v holds anywhere, keys included.
func names(v any) map[string]bool {
	out := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out[v] = true
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				out[k] = true
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// Do sends one request to the tenants' API (path relative to Base, or a next_page_uri) and
// returns its status and JSON body.
func (c *TenantAPI) Do(ctx context.Context, method, path string, body any) (int, map[string]any, error) {
	cl := Client{Base: c.Base, HTTP: c.HTTP, Authorize: func(r *http.Request, _ []byte) error {
		r.Header.Set("Authorization", "Bearer "+c.Token)
		r.Header.Set("Ngrok-Version", "2")
		return nil
	}}
	status, b, err := cl.Do(ctx, method, path, body)
	if err != nil {
		return 0, nil, err
	}
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			return status, nil, fmt.Errorf("%s %s: %d %s", method, path, status, b)
		}
	}
	return status, out, nil
}
