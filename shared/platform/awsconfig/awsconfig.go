package awsconfig

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// FromEnv returns a configuration with the region of AWS_REGION (or AWS_DEFAULT_REGION) and
// credentials read from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN each time
// they are needed. No I/O.
func FromEnv() aws.Config {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	return aws.Config{
		Region:      region,
		Credentials: aws.CredentialsProviderFunc(envCredentials),
	}
}

// ErrNoCredentials reports that the environment holds no AWS credentials.
var ErrNoCredentials = errors.New("awsconfig: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")

func envCredentials(context.Context) (aws.Credentials, error) {
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Credentials{}, ErrNoCredentials
	}
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: os.Getenv("AWS_SESSION_TOKEN"), Source: "environment"}, nil
}
