package terraform

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// acceptanceTests are the provider's own acceptance tests (internal/provider, TF_ACC=1).
var acceptanceTests = []string{"TestAccResourceReservedDomain_basic"}

// TestProviderAcceptance runs the provider's own acceptance tests against the stack, with the
// built Terraform: its test framework runs the provider in process and Terraform against it.
func TestProviderAcceptance(t *testing.T) {
	ts := tools(t)
	s, a := testkit.AppAccount(t)
	for _, name := range acceptanceTests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), ts.Acceptance, "-test.run", "^"+name+"$", "-test.count=1", "-test.v")
			cmd.Dir = filepath.Join(ts.Source, "internal", "provider")
			// An empty CLI configuration: nothing of the machine's reaches the run.
			cli := filepath.Join(t.TempDir(), ".terraformrc")
			if err := os.WriteFile(cli, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd.Env = append(cmd.Environ(), "TF_ACC=1", "NGROK_API_KEY="+a.Token, "NGROK_API_BASE_URL="+s.Server.URL,
				"TF_ACC_TERRAFORM_PATH="+ts.Terraform, "TF_CLI_CONFIG_FILE="+cli, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, out)
			}
			if !strings.Contains(string(out), "--- PASS: "+name) {
				t.Fatalf("%s did not pass:\n%s", name, out)
			}
		})
	}
}
