package edges_test

import (
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/testing/testkit"
)

func TestTCPEdgeBadInput(t *testing.T) {
	s, a, other := testkit.AppTwoAccounts(t)
	mine, _ := a.ReserveAddr(t)
	theirs, _ := other.ReserveAddr(t)
	domain, _ := a.ReserveDomain(t)
	edge, _ := tcp.full(t, a)
	id := edge["id"].(string)
	host := mine[:strings.LastIndexByte(mine, ':')]
	// released is an address of region's pool that was reserved and is free again.
	released := func(region string) string {
		got := a.Do(t, "POST", "/reserved_addrs", map[string]any{"region": region}).Expect(t, http.StatusCreated)
		a.Do(t, "DELETE", "/reserved_addrs/"+got["id"].(string), nil).Expect(t, http.StatusNoContent)
		return got["addr"].(string)
	}
	usFree, euFree := released("us"), released("eu")
	hostports := func(hp ...string) map[string]any { return map[string]any{"hostports": hp} }
	post := func(name string, body map[string]any, code, field string) badCase {
		return badCase{"POST " + name, "POST", "/edges/tcp", body, code, field}
	}
	refuse(t, s, a, []badCase{
		post("long description", map[string]any{"description": strings.Repeat("x", 256)}, "ERR_NGROK_7073", "description"),
		post("hostport without port", hostports(host), "ERR_NGROK_7104", "hostports[0]"),
		post("hostport port 65536", hostports(host+":65536"), "ERR_NGROK_7112", "hostports[0]"),
		post("a reserved domain", hostports(domain+":443"), "ERR_NGROK_7120", "hostports[0]"),
		post("a name", hostports("db.example.com:5432"), "ERR_NGROK_7120", "hostports[0]"),
		post("a pool host on a port outside the pool", hostports(host+":443"), "ERR_NGROK_7113", "hostports[0]"),
		post("an address of the pool nobody reserved", hostports(mine, usFree), "ERR_NGROK_7113", "hostports[1]"),
		post("an address of another region's pool nobody reserved", hostports(euFree), "ERR_NGROK_7113", "hostports[0]"),
		post("an address of another account", hostports(theirs), "ERR_NGROK_7114", "hostports[0]"),
		post("an address twice", hostports(mine, strings.ToUpper(mine)), "ERR_NGROK_215", "hostports[1]"),
		post("tls_termination", map[string]any{"tls_termination": map[string]any{"terminate_at": "edge"}}, "ERR_NGROK_214", "tls_termination"),
		post("mutual_tls", map[string]any{"mutual_tls": map[string]any{}}, "ERR_NGROK_214", "mutual_tls"),
		post("backend missing", map[string]any{"backend": map[string]any{"backend_id": ids.New(ids.TunnelGroupBackend)}}, "ERR_NGROK_6501", "backend.backend_id"),
		{"PATCH nothing", "PATCH", "/edges/tcp/" + id, map[string]any{}, "ERR_NGROK_606", "body"},
		{"PATCH an address of another account", "PATCH", "/edges/tcp/" + id, hostports(theirs), "ERR_NGROK_7114", "hostports[0]"},
		{"PATCH an address nobody reserved", "PATCH", "/edges/tcp/" + id, hostports(usFree), "ERR_NGROK_7113", "hostports[0]"},
		{"PUT ip_restriction empty", "PUT", "/edges/tcp/" + id + "/ip_restriction", map[string]any{"ip_policy_ids": []string{}}, "ERR_NGROK_7025", "ip_policy_ids"},
	})
	for _, mod := range []string{"mutual_tls", "tls_termination"} {
		a.Do(t, "PUT", "/edges/tcp/"+id+"/"+mod, map[string]any{}).ExpectError(t, http.StatusNotFound, "", "")
	}
}
