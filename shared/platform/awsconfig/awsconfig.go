package awsconfig

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Settings are the region and credentials of a process (package config reads them from its
// environment: AWS_REGION or AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN).
type Settings struct {
	Region                                     string
	AccessKeyID, SecretAccessKey, SessionToken string
}

// New returns the SDK configuration of s. No I/O. The service clients made from one
// configuration share its HTTP client (the SDK's default, see memoryBodies), as they reach
// different hosts.
func New(s Settings) aws.Config {
	return aws.Config{
		Region:      s.Region,
		Credentials: aws.CredentialsProviderFunc(s.credentials),
		HTTPClient:  memoryBodies{awshttp.NewBuildableClient()},
	}
}

// ErrNoCredentials reports that the environment holds no AWS credentials.
var ErrNoCredentials = errors.New("awsconfig: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")

func (s Settings) credentials(context.Context) (aws.Credentials, error) {
	if s.AccessKeyID == "" || s.SecretAccessKey == "" {
		return aws.Credentials{}, ErrNoCredentials
	}
	return aws.Credentials{AccessKeyID: s.AccessKeyID, SecretAccessKey: s.SecretAccessKey, SessionToken: s.SessionToken, Source: "environment"}, nil
}
