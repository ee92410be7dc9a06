package ids

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"math/big"
	"math/bits"
	"strings"
	"time"
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
	return prefix + "_" + NewKSUID(t).String()
}

// Floor returns the smallest id of the kind prefix stamped with t: every id made at t or later
// sorts at or above it, every id made before t sorts below it.
func Floor(prefix string, t time.Time) string {
	return prefix + "_" + ksuidAt(t).String()
}

// Parse splits id into its prefix and KSUID, checking both are well formed.
func Parse(id string) (prefix string, k KSUID, err error) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 || len(id)-i-1 != 27 {
		return "", KSUID{}, ErrMalformed
	}
	k, ok := parseKSUID(id[i+1:])
	if !ok {
		return "", KSUID{}, ErrMalformed
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

// KSUID is the unique part of an id, as segmentio/ksuid makes it (the platform's ids are
// KSUIDs): 4 bytes of seconds since ksuidEpoch, big-endian, then 16 random bytes, written as
// the 27 base62 digits of that 160-bit number, so ids sort by time. Kept here rather than linked:
// the library's package initialisation seeds a generator the service does not use, at every
// cold start (TestKSUIDAgreesWithTheLibrary holds this to it).
type KSUID [20]byte

// ksuidEpoch is the Unix time of a KSUID's second 0.
const ksuidEpoch = 1400000000

// NewKSUID returns a KSUID stamped with t and 16 bytes from crypto/rand.
func NewKSUID(t time.Time) KSUID {
	k := ksuidAt(t)
	// crypto/rand does not fail on supported platforms (it ends the program if it does).
	rand.Read(k[4:])
	return k
}

// ksuidAt is the smallest KSUID stamped with t.
func ksuidAt(t time.Time) KSUID {
	var k KSUID
	binary.BigEndian.PutUint32(k[:4], uint32(t.Unix()-ksuidEpoch))
	return k
}

// Time is the second k was stamped with.
func (k KSUID) Time() time.Time {
	return time.Unix(int64(binary.BigEndian.Uint32(k[:4]))+ksuidEpoch, 0)
}

// Bytes is k's 20 bytes.
func (k KSUID) Bytes() []byte { return k[:] }

// String is k's 27 base62 digits, zero-padded.
func (k KSUID) String() string {
	var w [5]uint32
	for i := range w {
		w[i] = binary.BigEndian.Uint32(k[4*i:])
	}
	var out [27]byte
	for i := len(out) - 1; i >= 0; i-- {
		var rem uint64
		for j := range w {
			v := rem<<32 | uint64(w[j])
			w[j], rem = uint32(v/62), v%62
		}
		out[i] = base62[rem]
	}
	return string(out[:])
}

// parseKSUID reads 27 base62 digits as the library does: a character outside the alphabet
// counts as the value the library's digit arithmetic gives it, and a number over 160 bits is
// refused.
func parseKSUID(s string) (KSUID, bool) {
	var hi, mid, lo uint64 // 27 digits of up to 255 each fit in 192 bits
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'A' <= c && c <= 'Z':
			d = 10 + c - 'A'
		default:
			d = 36 + c - 'a' // wraps, as the library's byte arithmetic does
		}
		// (hi, mid, lo) = (hi, mid, lo)*62 + d
		c1, l := bits.Mul64(lo, 62)
		l, carry := bits.Add64(l, uint64(d), 0)
		c2, m := bits.Mul64(mid, 62)
		m, carry = bits.Add64(m, c1, carry)
		hi, mid, lo = hi*62+c2+carry, m, l
	}
	if hi>>32 != 0 {
		return KSUID{}, false
	}
	var k KSUID
	binary.BigEndian.PutUint32(k[:4], uint32(hi))
	binary.BigEndian.PutUint64(k[4:], mid)
	binary.BigEndian.PutUint64(k[12:], lo)
	return k, true
}

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
