package operator

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// TunnelServer is a tunnel-server key as the operator's routes render it; Secret only in the
// answer to its creation.
type TunnelServer struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Region    string `json:"region"`
	CreatedAt string `json:"created_at"`
	Secret    string `json:"secret,omitempty"`
}

// TunnelServerList is every tunnel-server key, newest first.
type TunnelServerList struct {
	TunnelServers []TunnelServer `json:"tunnel_servers"`
}

// tunnelServerCreate is the body of a key's creation.
type tunnelServerCreate struct {
	Name   *string `json:"name"`
	Region *string `json:"region"`
}

// errNoTunnelServer is the 404 for an id that names no tunnel-server key.
var errNoTunnelServer = &api.Error{Status: http.StatusNotFound, Code: "ERR_NGROK_404", Field: "id", Msg: "no tunnel-server key has this id"}

// regions are the regions a key may name: o.Regions, else REGIONS' default.
func (o *Operator) regions() []string {
	if len(o.Regions) > 0 {
		return o.Regions
	}
	return strings.Split(config.Default("REGIONS"), ",")
}

// createTunnelServer mints a tunnel-server key: its secret is shown once and stored only as a
// hash (its token item, which the plugin reads).
func (o *Operator) createTunnelServer(ctx context.Context, r *api.Request) (any, error) {
	var in tunnelServerCreate
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	if in.Name == nil || !tunnels.ValidServerName(*in.Name) {
		return nil, api.Invalid("name", "name is required: 1 to 63 lowercase letters, digits and '-', not starting or ending with '-'")
	}
	if in.Region == nil || !slices.Contains(o.regions(), *in.Region) {
		return nil, api.Invalid("region", "region must be one of the deployment's regions (%s)", strings.Join(o.regions(), ", "))
	}
	return MintTunnelServer(ctx, o.DB, *in.Name, *in.Region)
}

// MintTunnelServer stores a new tunnel-server key for the server name in region (both already
// checked) and returns it with its secret, which only its hash outlives.
func MintTunnelServer(ctx context.Context, db *store.DB, name, region string) (TunnelServer, error) {
	now := time.Now().UTC()
	id := ids.NewAt(ids.TunnelServerKey, now)
	secret := ids.NewToken(id)
	hash := store.TokenHash(secret)
	tx := &store.Tx{}
	tx.Put("server", tunnels.ServerKeyItem{Key: store.TunnelServerKey(id), ID: id, Name: name, Region: region,
		CreatedAt: now.Unix(), TokenHash: hash}, store.Absent())
	tx.Put("token", tunnels.ServerTokenItem{Key: store.TokenKey(hash), Kind: tunnels.KindTunnelServer, ID: id,
		Name: name, Region: region}, store.Absent())
	if err := db.Commit(ctx, tx); err != nil {
		return TunnelServer{}, err
	}
	return TunnelServer{ID: id, Name: name, Region: region, CreatedAt: api.Timestamp(now.Unix()), Secret: secret}, nil
}

// listTunnelServers lists every tunnel-server key, newest first, without secrets.
func (o *Operator) listTunnelServers(ctx context.Context, r *api.Request) (any, error) {
	if err := api.Decode(r, &struct{}{}); err != nil {
		return nil, err
	}
	items, err := o.DB.QueryAll(ctx, store.TunnelServersPartition)
	if err != nil {
		return nil, err
	}
	out := TunnelServerList{TunnelServers: []TunnelServer{}}
	for i := len(items) - 1; i >= 0; i-- {
		var k tunnels.ServerKeyItem
		if err := store.Unmarshal(items[i], &k); err != nil {
			return nil, err
		}
		out.TunnelServers = append(out.TunnelServers, TunnelServer{ID: k.ID, Name: k.Name, Region: k.Region, CreatedAt: api.Timestamp(k.CreatedAt)})
	}
	return out, nil
}

// deleteTunnelServer revokes a tunnel-server key: its next plugin request is refused, its
// sessions' heartbeats too (tunnels.ForgetServer).
func (o *Operator) deleteTunnelServer(ctx context.Context, r *api.Request) (any, error) {
	id := r.PathValue("id")
	if !ids.Is(id, ids.TunnelServerKey) {
		return nil, errNoTunnelServer
	}
	var k tunnels.ServerKeyItem
	if err := o.DB.Get(ctx, store.TunnelServerKey(id), &k); err != nil {
		if store.IsNotFound(err) {
			return nil, errNoTunnelServer
		}
		return nil, err
	}
	tx := &store.Tx{}
	tx.Delete("server", k.Key, expression.Name("token_hash").Equal(expression.Value(k.TokenHash)))
	tx.Delete("token", store.TokenKey(k.TokenHash))
	tx.Refuse("server", errNoTunnelServer)
	if err := o.DB.Commit(ctx, tx); err != nil {
		return nil, err
	}
	// After the commit, so that a login committing before it is found (tunnels.Start); a
	// failure leaves the key revoked and its sessions ended when their leases are next renewed.
	return nil, tunnels.ForgetServer(ctx, o.DB, k.ID, k.TokenHash)
}
