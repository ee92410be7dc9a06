package kmsseal

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"

	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/seal"
)

// KMSAPI is the part of the KMS client the sealer uses.
type KMSAPI interface {
	GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, opts ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, opts ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

// KMS is the AWS sealer: KMS generates and unwraps each data key; aad is the encryption context.
type KMS struct {
	Client KMSAPI
	KeyID  string
}

// Seal encrypts plaintext under a fresh KMS data key.
func (k *KMS) Seal(ctx context.Context, plaintext []byte, aad map[string]string) (_ seal.Sealed, err error) {
	defer derrors.Wrap(&err, "kmsseal.Seal(%s)", k.KeyID)
	out, err := k.Client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId: aws.String(k.KeyID), KeySpec: kmstypes.DataKeySpecAes256, EncryptionContext: aad,
	})
	if err != nil {
		return seal.Sealed{}, err
	}
	n, ct, err := seal.SealWith(out.Plaintext, plaintext, aad)
	clear(out.Plaintext)
	if err != nil {
		return seal.Sealed{}, err
	}
	return seal.Sealed{KeyID: aws.ToString(out.KeyId), WrappedKey: out.CiphertextBlob, Nonce: n, Ciphertext: ct}, nil
}

// Open asks KMS to unwrap the data key, then decrypts.
func (k *KMS) Open(ctx context.Context, s seal.Sealed, aad map[string]string) ([]byte, error) {
	out, err := k.Client.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: s.WrappedKey, EncryptionContext: aad, KeyId: aws.String(k.KeyID)})
	if err != nil {
		return nil, seal.ErrOpen
	}
	defer clear(out.Plaintext)
	return seal.OpenWith(out.Plaintext, s, aad)
}

// sealing is NewSealing's sealer: KMS's Seal, and an Open that refuses without calling KMS.
// It is a KMS by another type, with no method Open of KMS's: a *KMS (a field of that type, too)
// in an interface keeps KMS.Open, and with it the client's Decrypt, in the binary.
type sealing KMS

// Seal is KMS.Seal.
func (s *sealing) Seal(ctx context.Context, plaintext []byte, aad map[string]string) (seal.Sealed, error) {
	return (*KMS)(s).Seal(ctx, plaintext, aad)
}

// Open refuses: the function only seals.
func (*sealing) Open(context.Context, seal.Sealed, map[string]string) ([]byte, error) {
	return nil, errSealOnly
}

// opening is NewOpening's sealer: KMS's Open, and a Seal that refuses without calling KMS
// (as sealing, with KMS.Seal and the client's GenerateDataKey left out).
type opening KMS

// Open is KMS.Open.
func (o *opening) Open(ctx context.Context, s seal.Sealed, aad map[string]string) ([]byte, error) {
	return (*KMS)(o).Open(ctx, s, aad)
}

// Seal refuses: the function only opens.
func (*opening) Seal(context.Context, []byte, map[string]string) (seal.Sealed, error) {
	return seal.Sealed{}, errOpenOnly
}
