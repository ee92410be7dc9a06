package edges_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// FuzzEdgeBodies sends arbitrary bodies to every body-taking route of both edge families (create,
// update, each module's PUT) on the real stack, against an edge holding every module: no body
// may produce a 5xx, every refusal is a well-formed envelope, and the package's invariants
// (references counted, hostport guards) hold afterwards.
func FuzzEdgeBodies(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `[`, `{"hostports":["a.example.com:443"]}`, `{"hostports":["a:1","a:1"]}`,
		`{"backend":{"backend_id":"bkdtg_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc","enabled":false}}`,
		`{"module":{"backend_id":null}}`, `{"id":null,"module":null}`, `{"module":[]}`,
		`{"ip_restriction":{"ip_policy_ids":["ipp_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc","ipp_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"]}}`,
		`{"tls_termination":{"terminate_at":"upstream","min_version":null},"mutual_tls":{"certificate_authority_ids":[]}}`,
		`{"traffic_policy":{"value":"on_tcp_connect: [{actions: [{type: deny}]}]"}}`, `{"value":"{{{"}`,
		`{"terminate_at":"edge","min_version":"1.2"}`, `{"ip_policy_ids":[]}`, `{"certificate_authority_ids":[7]}`,
		`{"description":"\u0000"}`, `{"backend":{"backend_id":"bkdtg_x"},"backend":{}}`,
	} {
		for route := range 10 {
			f.Add(uint8(route), seed)
		}
	}
	var s *testkit.Stack
	var a *testkit.Account
	var routes [][2]string
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		if s == nil {
			s = testkit.App(t)
			a = s.NewAccount(t)
			for _, fam := range families {
				edge, _ := fam.full(t, a)
				path := fam.d.Path + "/" + edge["id"].(string)
				routes = append(routes, [2]string{"POST", fam.d.Path}, [2]string{"PATCH", path})
				for _, name := range fam.names {
					routes = append(routes, [2]string{"PUT", path + "/" + name})
				}
			}
		}
		r := routes[int(route)%len(routes)]
		res := a.Do(t, r[0], r[1], body)
		if res.Status >= 500 {
			t.Fatalf("%s %s %q: %d %s", r[0], r[1], body, res.Status, res.Body)
		}
		if res.Status >= 400 {
			var env struct {
				StatusCode int               `json:"status_code"`
				Msg        *string           `json:"msg"`
				Details    map[string]string `json:"details"`
			}
			if err := json.Unmarshal(res.Body, &env); err != nil || env.StatusCode != res.Status || env.Msg == nil || env.Details["operation_id"] == "" {
				t.Fatalf("malformed error envelope for %s %s: %s", r[0], r[1], res.Body)
			}
		} else if r[0] == "POST" && res.Status != http.StatusCreated {
			t.Fatalf("%s %s: %d", r[0], r[1], res.Status)
		}
	})
}
