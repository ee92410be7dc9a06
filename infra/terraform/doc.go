// Package terraform drives the platform's official Terraform provider against the service, as an
// infrastructure-as-code user would. Its tests build Terraform (the last MPL-2.0 release, with
// `go install`) and the provider from its source archive among the reference material beside
// the checkout (against the official Go client v8, renamed to the v9 the provider requires), both
// cached in .local/terraform/ under a key of what they are built from, and run them on the
// local stack:
//
//   - every resource example of the provider's archive (examples/resources/*/resource.tf,
//     adapted only for unique names, the files it reads and a reserved domain where an endpoint
//     needs one) through apply, an empty plan, an update of every updatable argument the
//     example sets, an empty plan, terraform import, an empty plan (write-only inputs such as
//     private keys and secret values excepted, as on the platform), destroy, and a 404 from
//     the API afterwards (TestResources);
//   - every data source in each of its lookup modes (by id, and by name through the list filter
//     where the provider offers one), reading exactly what the resource it reads holds
//     (TestDataSources);
//   - the provider's own acceptance test with TF_ACC=1 (TestProviderAcceptance);
//   - every resource type of the provider, in the forms its resources take, through the
//     requests the provider sends, without Terraform (TestLifecycle, testkit.Account.Lifecycle).
//
// Terraform finds the provider through a CLI configuration's dev_overrides, so no run needs
// `terraform init` or a registry. Where that archive is absent every test but TestLifecycle
// skips with one line. The package ships in no function: only tests use it.
package terraform
