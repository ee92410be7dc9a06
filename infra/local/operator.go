package main

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/workers/operator"
	"tunnelapi/shared/workers/usage"
)

// operatorUsage is the operator command's synopsis.
const operatorUsage = `usage: local operator [-url URL] COMMAND
  create [EMAIL]                 a tenant with its first admin key (the token is printed once)
  list [LIMIT [BEFORE_ID]]       tenants, newest first
  get ID | suspend ID | resume ID
  usage ID [FROM [TO]]           the tenant's usage by UTC day (YYYY-MM-DD) as CSV, for billing
  delete ID                      erases everything of the tenant (resumed until done)
  export ID > FILE               what the tenant's API reads, as JSON lines (no secret values)
  import ID < FILE               an export recreated in tenant ID, ids remapped; new tokens printed
  tunnel-server create NAME REGION | list | delete ID
                                 tunnel-server keys: the frp plugin's callers
-url is the deployment's ApiUrl, and requests are signed with the AWS credentials of the
environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION).
Without -url, they go to the local server on PORT, signed with the operator credentials it
wrote at start (STATE_DIR/operator.credentials).`

// operatorCreds are the local server's operator credentials as its state directory keeps them.
type operatorCreds struct {
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
	Region          string `json:"region"`
}

// operatorCredsFile is where the local server writes the operator credentials it made at start
// and `local operator` reads them.
func operatorCredsFile(stateDir string) string {
	return filepath.Join(stateDir, "operator.credentials")
}

// newOperatorCreds makes random operator credentials for region: every start of the local
// server has its own, so only a process that can read its state directory (the developer's)
// signs for the operator's routes, and no fixed pair works anywhere.
func newOperatorCreds(region string) operatorCreds {
	id := make([]byte, 10)
	secret := make([]byte, 30)
	_, _ = rand.Read(id)
	_, _ = rand.Read(secret)
	return operatorCreds{AccessKeyID: "LOCALOP" + base32.StdEncoding.EncodeToString(id)[:13],
		SecretAccessKey: base64.RawURLEncoding.EncodeToString(secret), Region: region}
}

// writeOperatorCreds writes c to path, readable by its owner only.
func writeOperatorCreds(path string, c operatorCreds) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(c)
	_ = os.Remove(path) // a file left by an earlier start may have other permissions
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// readOperatorCreds reads the credentials writeOperatorCreds wrote to path.
func readOperatorCreds(path string) (operatorCreds, error) {
	var c operatorCreds
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err == nil && (c.AccessKeyID == "" || c.SecretAccessKey == "" || c.Region == "") {
		err = errors.New("incomplete")
	}
	if err != nil {
		return c, fmt.Errorf("the local server's operator credentials (%s, written when it starts: is it running?): %w", path, err)
	}
	return c, nil
}

func (c operatorCreds) aws() aws.Credentials {
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey}
}

// errNotLoopback is the 403 for an operator request whose Host is not this machine's loopback.
var errNotLoopback = api.Forbidden(api.CodeUnknownKey,
	"the local server serves the operator's routes only to requests for a loopback host (127.0.0.1, [::1], localhost)")

// localVerifier checks operator requests as API Gateway's IAM authorization does in AWS, against
// the local server's operator credentials c, and admits only requests whose Host is a loopback
// one (loopbackHost): a web page whose name was rebound to 127.0.0.1 sends its own name.
func localVerifier(c operatorCreds) operator.Authorize {
	v := &operator.Verifier{Region: c.Region, Credentials: c.aws()}
	return func(r *http.Request, body []byte) error {
		if !loopbackHost(r.Host) {
			return errNotLoopback
		}
		return v.Verify(r, body)
	}
}

// loopbackHost reports whether host, a Host header (a name or an address, with or without a
// port), names this machine's loopback interface: an address of 127.0.0.0/8, [::1], or
// localhost.
func loopbackHost(host string) bool {
	name := host
	if h, port, err := net.SplitHostPort(host); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return false
		}
		name = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// runOperator is `local operator …`: one signed request to the operator's interface per
// command, its answer printed as JSON.
func runOperator(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	base := fs.String("url", "", "the deployment's base URL (default: the local server on PORT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	op, err := newOperatorClient(*base)
	if err != nil {
		return err
	}
	args = fs.Args()
	if len(args) == 0 {
		return fmt.Errorf("%s", operatorUsage)
	}
	cmd, rest := args[0], args[1:]
	arg := func(i int) string {
		if i < len(rest) {
			return rest[i]
		}
		return ""
	}
	id := url.PathEscape(arg(0))
	switch {
	case cmd == "tunnel-server":
		return runTunnelServer(ctx, op, rest)
	case cmd == "create" && len(rest) <= 1:
		body := map[string]string{}
		if arg(0) != "" {
			body["email"] = arg(0)
		}
		return op.print(ctx, http.MethodPost, "/operator/tenants", body)
	case cmd == "list" && len(rest) <= 2:
		q := url.Values{}
		if arg(0) != "" {
			q.Set("limit", arg(0))
		}
		if arg(1) != "" {
			q.Set("before_id", arg(1))
		}
		return op.print(ctx, http.MethodGet, "/operator/tenants?"+q.Encode(), nil)
	case cmd == "usage" && len(rest) >= 1 && len(rest) <= 3:
		q := url.Values{}
		if arg(1) != "" {
			q.Set("from", arg(1))
		}
		if arg(2) != "" {
			q.Set("to", arg(2))
		}
		_, out, err := op.send(ctx, http.MethodGet, "/operator/tenants/"+id+"/usage?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		var u operator.Usage
		if err := json.Unmarshal(out, &u); err != nil {
			return err
		}
		return usage.WriteCSV(os.Stdout, u.TenantID, u.Days, true)
	case cmd == "get" && len(rest) == 1:
		return op.print(ctx, http.MethodGet, "/operator/tenants/"+id, nil)
	case (cmd == "suspend" || cmd == "resume") && len(rest) == 1:
		return op.print(ctx, http.MethodPost, "/operator/tenants/"+id+"/"+cmd, nil)
	case (cmd == "export" || cmd == "import") && len(rest) == 1:
		return op.move(ctx, cmd, arg(0))
	case cmd == "delete" && len(rest) == 1:
		for {
			status, _, err := op.send(ctx, http.MethodDelete, "/operator/tenants/"+id, nil)
			if err != nil || status == http.StatusNoContent {
				if err == nil {
					fmt.Println("deleted", arg(0))
				}
				return err
			}
			fmt.Fprintln(os.Stderr, "still deleting", arg(0))
		}
	}
	return fmt.Errorf("%s", operatorUsage)
}

// move exports tenant id to standard output or imports standard input into it, through the
// tenants' API with an admin key the operator's interface issues for it, deleted at the end.
func (o *operatorClient) move(ctx context.Context, cmd, id string) (err error) {
	_, out, err := o.send(ctx, http.MethodPost, "/operator/tenants/"+url.PathEscape(id)+"/keys", nil)
	if err != nil {
		return err
	}
	var k operator.Created
	if err := json.Unmarshal(out, &k); err != nil {
		return err
	}
	c := &operator.TenantAPI{Base: o.Base, Token: k.Token, HTTP: o.HTTP}
	defer func() {
		if status, _, derr := c.Do(context.WithoutCancel(ctx), http.MethodDelete, "/api_keys/"+k.APIKeyID, nil); err == nil && (derr != nil || status != http.StatusNoContent) {
			err = fmt.Errorf("deleting the session key %s: %d %v", k.APIKeyID, status, derr)
		}
	}()
	t := operator.Exported{ID: id, AdminUserID: k.AdminUserID}
	if cmd == "export" {
		return operator.Export(ctx, c, app.Families, t, k.APIKeyID, os.Stdout)
	}
	return operator.Import(ctx, c, app.Families, t, os.Stdin, os.Stdout)
}

// newOperatorClient signs requests to base with the environment's AWS credentials or, when base
// is empty, requests to the local server on PORT with the operator credentials it wrote.
func newOperatorClient(base string) (*operatorClient, error) {
	c, err := config.LoadLocal(localEnv)
	if err != nil {
		return nil, err
	}
	if base == "" {
		oc, err := readOperatorCreds(operatorCredsFile(c.StateDir))
		if err != nil {
			return nil, err
		}
		return &operatorClient{operator.Client{Base: "http://127.0.0.1:" + c.Port, Authorize: operator.SignedBy(oc.aws(), oc.Region)}}, nil
	}
	a := c.HTTP.AWS
	creds := aws.Credentials{AccessKeyID: a.AccessKeyID, SecretAccessKey: a.SecretAccessKey, SessionToken: a.SessionToken}
	return &operatorClient{operator.Client{Base: base, Authorize: operator.SignedBy(creds, a.Region)}}, nil
}

// operatorClient sends requests to the operator's interface.
type operatorClient struct{ operator.Client }

// send sends one request (body as JSON when not nil) and returns its status and body; an answer
// other than 2xx is an error quoting the body.
func (o *operatorClient) send(ctx context.Context, method, path string, body any) (int, []byte, error) {
	status, out, err := o.Do(ctx, method, path, body)
	if err == nil && status/100 != 2 {
		err = fmt.Errorf("%s %s: %d %s", method, path, status, out)
	}
	return status, out, err
}

// print sends one request and prints its answer.
func (o *operatorClient) print(ctx context.Context, method, path string, body any) error {
	_, out, err := o.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	var v any
	if json.Unmarshal(out, &v) == nil {
		out, _ = json.MarshalIndent(v, "", "  ")
	}
	fmt.Println(string(out))
	return nil
}
