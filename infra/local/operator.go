package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"

	"tunnelapi/shared/app"
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
Requests are signed with the AWS credentials of the environment (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION); -url is the deployment's ApiUrl
(default: the local server on PORT).`

// localVerifier checks operator requests against the local credentials c is configured with,
// as API Gateway's IAM authorization checks them in AWS.
func localVerifier(c config.Common) operator.Authorize {
	v := &operator.Verifier{Region: c.AWS.Region, Credentials: aws.Credentials{
		AccessKeyID: c.AWS.AccessKeyID, SecretAccessKey: c.AWS.SecretAccessKey, SessionToken: c.AWS.SessionToken}}
	return v.Verify
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
	return operator.Import(ctx, c, t, os.Stdin, os.Stdout)
}

// newOperatorClient signs with the environment's AWS credentials for requests to base (the
// local server on PORT when empty).
func newOperatorClient(base string) (*operatorClient, error) {
	c, err := config.LoadLocal(localEnv)
	if err != nil {
		return nil, err
	}
	if base == "" {
		base = "http://127.0.0.1:" + c.Port
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
