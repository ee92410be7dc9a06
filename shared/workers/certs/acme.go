package certs

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mholt/acmez/v3"
	"github.com/mholt/acmez/v3/acme"

	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// Issuer obtains certificates from one ACME directory with the deployment's account there.
//
// It uses github.com/mholt/acmez (v3), rather than go-acme/lego. Both are well kept and both run
// against pebble in their own tests; acmez is the ACME core of Caddy's CertMagic, a library
// rather than a tool: it needs only golang.org/x/crypto and x/net (lego pulls in its DNS
// providers' framework and a DNS library), so the worker's zip and cold start stay close to the
// others', and it leaves DNS to the caller through one small interface (Solver: Present,
// CleanUp), which is where this package's rules live — which record to write, when the user's
// CNAME is missing — and it reports the authority's errors as typed RFC 8555 problems, from
// which a failure is told DNS_ERROR or INTERNAL_ERROR (classify).
type Issuer struct {
	Directory string
	// HTTPClient reaches the directory (its TLS roots include ACME_CA_FILE's locally).
	HTTPClient *http.Client
	DB         *store.DB
	Seal       seal.Sealer
	Log        *slog.Logger

	mu      sync.Mutex
	client  *acme.Client
	account *acme.Account
}

// accountItem is the deployment's ACME account key at a directory, sealed.
type accountItem struct {
	store.Key
	Sealed  seal.Sealed `dynamodbav:"key"`
	Created int64       `dynamodbav:"created"`
}

// sealAccount binds the sealed account key to its item: the deployment, not an account.
const sealAccount = "deployment"

func (is *Issuer) acmeClient() *acme.Client {
	if is.client == nil {
		is.client = &acme.Client{Directory: is.Directory, HTTPClient: is.HTTPClient, UserAgent: "tunnelapi-cert-worker",
			PollInterval: 100 * time.Millisecond, PollTimeout: 2 * time.Minute, Logger: is.Log}
	}
	return is.client
}

// Account returns the deployment's ACME account, creating its key once per deployment: the
// first worker to need it generates a key and writes it sealed with the condition that none
// exists; a worker that loses that race reads the winner's. Registering an existing key again
// returns its account, so every worker ends up with the same one.
func (is *Issuer) Account(ctx context.Context) (_ acme.Account, err error) {
	defer derrors.Wrap(&err, "acme account at %s", is.Directory)
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.account != nil {
		return *is.account, nil
	}
	key, err := is.accountKey(ctx)
	if err != nil {
		return acme.Account{}, err
	}
	acct, err := is.acmeClient().NewAccount(ctx, acme.Account{TermsOfServiceAgreed: true, PrivateKey: key})
	if err != nil {
		return acme.Account{}, err
	}
	is.account = &acct
	return acct, nil
}

func (is *Issuer) accountKey(ctx context.Context) (crypto.Signer, error) {
	k := store.ACMEAccountKey(is.Directory)
	for range 2 {
		var it accountItem
		err := is.DB.Get(ctx, k, &it)
		if err == nil {
			key, err := seal.OpenPrivateKey(ctx, is.Seal, it.Sealed, sealAccount, is.Directory)
			if err != nil {
				return nil, err
			}
			signer, ok := key.(crypto.Signer)
			if !ok {
				return nil, errors.New("the stored account key is not a signing key")
			}
			return signer, nil
		}
		if !store.IsNotFound(err) {
			return nil, err
		}
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		sealed, err := seal.SealPrivateKey(ctx, is.Seal, key, sealAccount, is.Directory)
		if err != nil {
			return nil, err
		}
		tx := &store.Tx{}
		tx.Put("acme.account", accountItem{Key: k, Sealed: sealed, Created: time.Now().Unix()}, store.Absent())
		err = is.DB.Commit(ctx, tx)
		if err == nil {
			return key, nil
		}
		if !store.ConditionFailed(err, "acme.account") && !store.IsConflict(err) {
			return nil, err
		}
		// Another worker created it first: read theirs.
	}
	return nil, errors.New("the account key was neither readable nor creatable")
}

// Obtain orders a certificate for names with certKey, solving each name's DNS-01 challenge
// with solver, and returns the issued chain (PEM, leaf first).
func (is *Issuer) Obtain(ctx context.Context, names []string, certKey crypto.Signer, solver acmez.Solver) (string, error) {
	acct, err := is.Account(ctx)
	if err != nil {
		return "", err
	}
	c := acmez.Client{Client: is.acmeClient(), ChallengeSolvers: map[string]acmez.Solver{acme.ChallengeTypeDNS01: solver}}
	chains, err := c.ObtainCertificateForSANs(ctx, acct, certKey, names)
	if err != nil {
		return "", fmt.Errorf("ordering a certificate for %s: %w", strings.Join(names, ", "), err)
	}
	if len(chains) == 0 {
		return "", errors.New("the certificate authority returned no chain")
	}
	return string(chains[0].ChainPEM), nil
}

// NewKey generates a certificate key of the policy's type: RSA 2048 or ECDSA P-256.
func NewKey(keyType string) (crypto.Signer, error) {
	if keyType == "rsa" {
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// challengeSolver publishes each name's DNS-01 record: at _acme-challenge.<name> in the
// delegated zone for names delegated to the service (an agent ingress's own zone), or in the
// service's zone at the name its _acme-challenge CNAME points to (records).
type challengeSolver struct {
	delegated, service Records
	records            map[string]string
}

func (s challengeSolver) record(ch acme.Challenge) (Records, string) {
	if r, ok := s.records[ch.Identifier.Value]; ok {
		return s.service, r
	}
	return s.delegated, ch.DNS01TXTRecordName()
}

// Present publishes the challenge's TXT record.
func (s challengeSolver) Present(ctx context.Context, ch acme.Challenge) error {
	zone, name := s.record(ch)
	return zone.SetTXT(ctx, name, ch.DNS01KeyAuthorization())
}

// Wait returns once the record is served (acmez calls it after presenting every challenge, so
// the records of one order propagate together).
func (s challengeSolver) Wait(ctx context.Context, ch acme.Challenge) error {
	zone, name := s.record(ch)
	if sy, ok := zone.(Syncer); ok {
		return sy.WaitTXT(ctx, name, ch.DNS01KeyAuthorization())
	}
	return nil
}

// CleanUp removes it once the authority has validated (or refused) it.
func (s challengeSolver) CleanUp(ctx context.Context, ch acme.Challenge) error {
	zone, name := s.record(ch)
	return zone.ClearTXT(ctx, name)
}
