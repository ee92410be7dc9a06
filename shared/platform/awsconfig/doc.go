// Package awsconfig builds the AWS SDK configuration from the environment's settings alone. Lambda puts the
// region and the execution role's credentials in environment variables, so the SDK's full
// config loader (shared files, SSO, IMDS, STS web identity) is not linked: it roughly doubles a
// function's cold start for nothing.
package awsconfig
