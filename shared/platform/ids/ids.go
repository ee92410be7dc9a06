package ids

import (
	"crypto/rand"
	"errors"
	"math/big"
	"strings"
	"time"

	"github.com/segmentio/ksuid"
)

// Prefixes of the resource kinds this service issues ids for; the platform uses the same ones.
const (
	APIKey                  = "ak"
	Credential              = "cr"
	TLSCertificate          = "cert"
	CertificateAuthority    = "ca"
	TunnelGroupBackend      = "bkdtg"
	FailoverBackend         = "bkdfo"
	WeightedBackend         = "bkdwd"
	StaticBackend           = "bkdsc"
	HTTPResponseBackend     = "bkdhr"
	Endpoint                = "ep"
	SSHCertificateAuthority = "sshca"
	SSHUserCertificate      = "sucrt"
	SSHHostCertificate      = "shcrt"
	AgentIngress            = "agin"
	IPPolicy                = "ipp"
	IPPolicyRule            = "ipr"
	IPRestriction           = "ipx"
	TLSEdge                 = "edgtls"
	TCPEdge                 = "edgtcp"
	HTTPSEdge               = "edghts"
	HTTPSEdgeRoute          = "edghtsrt"
	EventDestination        = "ed"
	EventSubscription       = "esb"
	ReservedDomain          = "rd"
	ReservedAddr            = "ra"
	BotUser                 = "bot"
	ServiceUser             = "service"
	SSHCredential           = "sshcr"
	User                    = "usr"
	Account                 = "ac"
	Operation               = "op"
	Event                   = "ev"
	Vault                   = "vault"
	Secret                  = "secret"
	AbuseReport             = "abrp"
	KubernetesOperator      = "k8sop"
	TunnelSession           = "ts"
	Tunnel                  = "tn"
	TunnelServerKey         = "tsk"
	// CertJob is this service's addition: a certificate job of the certificate worker.
	CertJob = "cjob"
)

// ErrMalformed reports a string that is not a well-formed id of the expected kind.
var ErrMalformed = errors.New("malformed id")

// New returns a fresh id of the given kind, stamped with the current time.
func New(prefix string) string {
	return NewAt(prefix, time.Now())
}

// NewAt returns a fresh id of the given kind stamped with t (whole seconds, as KSUIDs are).
func NewAt(prefix string, t time.Time) string {
	k, err := ksuid.NewRandomWithTime(t)
	if err != nil {
		// crypto/rand does not fail on supported platforms; a failure here is unrecoverable.
		panic("ids: entropy source failed: " + err.Error())
	}
	return prefix + "_" + k.String()
}

// Floor returns the smallest id of the kind prefix stamped with t: every id made at t or later
// sorts at or above it, every id made before t sorts below it.
func Floor(prefix string, t time.Time) string {
	k, err := ksuid.FromParts(t, make([]byte, 16))
	if err != nil {
		panic("ids: Floor: " + err.Error())
	}
	return prefix + "_" + k.String()
}

// Parse splits id into its prefix and KSUID, checking both are well formed.
func Parse(id string) (prefix string, k ksuid.KSUID, err error) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 || len(id)-i-1 != 27 {
		return "", ksuid.Nil, ErrMalformed
	}
	k, err = ksuid.Parse(id[i+1:])
	if err != nil {
		return "", ksuid.Nil, ErrMalformed
	}
	return id[:i], k, nil
}

// Is reports whether id is a well-formed id of the kind prefix.
func Is(id, prefix string) bool {
	p, _, err := Parse(id)
	return err == nil && p == prefix
}

// Time returns the creation time encoded in a well-formed id.
func Time(id string) (time.Time, error) {
	_, k, err := Parse(id)
	if err != nil {
		return time.Time{}, err
	}
	return k.Time().UTC(), nil
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomBase62 returns n characters drawn uniformly from the base62 alphabet with crypto/rand.
func RandomBase62(n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(base62)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("ids: entropy source failed: " + err.Error())
		}
		b[i] = base62[v.Int64()]
	}
	return string(b)
}

// NewToken returns a bearer secret for the resource id: the id's KSUID, an underscore and 21
// random base62 characters, the shape the platform's API keys and authtokens have.
func NewToken(id string) string {
	_, k, err := Parse(id)
	if err != nil {
		panic("ids: NewToken of a malformed id")
	}
	return k.String() + "_" + RandomBase62(21)
}
