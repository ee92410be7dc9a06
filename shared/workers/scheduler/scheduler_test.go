package scheduler_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The scheduler's function stays small: it links none of the clients only the certificate
// worker needs (the reason it is a package of its own). Its behaviour is tested with the
// worker's, in package certs.
func TestSchedulerLinksNoWorkerClients(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./functions/scheduler")
	cmd.Dir = "../../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./functions/scheduler: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "tunnelapi/shared/workers/scheduler") {
		t.Fatalf("./functions/scheduler does not link this package: this check would see nothing")
	}
	for _, pkg := range []string{
		"tunnelapi/shared/workers/certs",
		"github.com/mholt/acmez/v3",
		"github.com/aws/aws-sdk-go-v2/service/route53",
		"github.com/aws/aws-sdk-go-v2/service/kms",
		"github.com/aws/aws-sdk-go-v2/service/sqs",
		"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams",
	} {
		if slices.Contains(deps, pkg) {
			t.Errorf("the scheduler links %s", pkg)
		}
	}
}
