// Package samtemplate is template.yaml as AWS deploys it: AWS's own SAM transform
// (aws-sam-translator, the one CloudFormation runs) turns it into plain CloudFormation, offline,
// and the tests hold that output to the Go code, which is what cfn-lint cannot know:
//
//   - every route of the HTTP API's generated OpenAPI body reaches the function whose
//     descriptors serve it, and every route a descriptor serves is declared;
//   - each function's role grants the DynamoDB, SQS, KMS and Route 53 actions its code calls
//     and no more, and no action by wildcard;
//   - every SQS trigger reports batch item failures, reads a queue with a dead-letter queue and
//     a visibility timeout of at least six times its function's timeout;
//   - the usage worker's failed invocations go to a queue its role may send to, with an alarm;
//   - the operator function gets the principals it admits from the OperatorPrincipals parameter
//     (the account's root by default), and the usage worker the account and stack whose log
//     groups alone it reads;
//   - every Ref, GetAtt, Sub and condition resolves;
//   - as written, before the transform: every function logs to a retained log group of its
//     own and builds with the Makefile, every alarm and dashboard widget names a metric that
//     exists (AWS's, or package metrics' with its dimensions), and the optional parts deploy
//     only when asked for.
//
// cfn-lint (`make test` runs it, configured by .cfnlintrc) checks the template against
// CloudFormation's and SAM's own schemas. The package ships in no function: only tests use it.
package samtemplate
