package terraform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// workspace is one Terraform working folder, driving the built provider against the stack as
// one account.
type workspace struct {
	t   *testing.T
	ts  toolset
	dir string
	env []string
}

// newWorkspace returns a fresh working folder whose Terraform uses the built provider (through
// a CLI configuration's dev_overrides: no init, no registry) and calls the stack as a.
func newWorkspace(t *testing.T, ts toolset, s *testkit.Stack, a *testkit.Account) *workspace {
	t.Helper()
	dir := t.TempDir()
	cli := filepath.Join(dir, ".terraformrc")
	rc := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"ngrok/ngrok\" = %q\n  }\n  direct {}\n}\n", ts.PluginDir)
	if err := os.WriteFile(cli, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	return &workspace{t: t, ts: ts, dir: dir, env: []string{"TF_CLI_CONFIG_FILE=" + cli, "TF_IN_AUTOMATION=1",
		"CHECKPOINT_DISABLE=1", "NGROK_API_KEY=" + a.Token, "NGROK_API_BASE_URL=" + s.Server.URL}}
}

// providerBlock names the provider's source, which dev_overrides matches.
const providerBlock = "terraform {\n  required_providers {\n    ngrok = { source = \"ngrok/ngrok\" }\n  }\n}\n\n"

// write replaces the folder's configuration with config (and the provider's source).
func (w *workspace) write(config string) {
	w.t.Helper()
	w.file("main.tf", providerBlock+config)
}

// file writes a file into the folder, such as one an example reads with file().
func (w *workspace) file(name, text string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, name), []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// errChanges is run's error for a plan -detailed-exitcode that found changes (exit code 2).
var errChanges = errors.New("the plan has changes")

// run runs terraform with args in the folder and returns its standard output; a failure's
// error carries both outputs.
func (w *workspace) run(args ...string) (string, error) {
	stdout, stderr, err := w.exec(args...)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 2 && slices.Contains(args, "-detailed-exitcode") {
		return stdout, errChanges
	}
	if err != nil {
		return stdout, fmt.Errorf("terraform %s: %v\n%s%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout, nil
}

// exec runs terraform with args in the folder.
func (w *workspace) exec(args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(w.t.Context(), w.ts.Terraform, args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), w.env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// must runs terraform and fails the test (naming step) when it fails.
func (w *workspace) must(step string, args ...string) string {
	w.t.Helper()
	out, err := w.run(args...)
	if err != nil {
		w.t.Fatalf("%s: %v", step, err)
	}
	return out
}

// applied is what an apply did to one resource: its action (create, update, delete) and id.
type applied struct{ Action, ID string }

// apply applies the configuration and returns what it did to each resource, by address, from
// Terraform's machine-readable output.
func (w *workspace) apply(step string) map[string]applied {
	w.t.Helper()
	out, stderr, err := w.exec("apply", "-auto-approve", "-input=false", "-json")
	if err != nil {
		w.t.Fatalf("%s: terraform apply: %v\n%s%s", step, err, readable(out), stderr)
	}
	done := map[string]applied{}
	for _, line := range strings.Split(out, "\n") {
		var m struct {
			Type string `json:"type"`
			Hook struct {
				Resource struct {
					Addr string `json:"addr"`
				} `json:"resource"`
				Action string `json:"action"`
				ID     string `json:"id_value"`
			} `json:"hook"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Type == "apply_complete" {
			done[m.Hook.Resource.Addr] = applied{m.Hook.Action, m.Hook.ID}
		}
	}
	return done
}

// readable turns machine-readable output into its messages and diagnostics.
func readable(out string) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		var m struct {
			Message    string `json:"@message"`
			Diagnostic *struct {
				Detail string `json:"detail"`
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		b.WriteString(m.Message + "\n")
		if m.Diagnostic != nil && m.Diagnostic.Detail != "" {
			b.WriteString(m.Diagnostic.Detail + "\n")
		}
	}
	return b.String()
}

// emptyPlan fails the test unless a plan of the configuration (refreshing the state first)
// has no changes.
func (w *workspace) emptyPlan(step string) {
	w.t.Helper()
	if out, err := w.run("plan", "-detailed-exitcode", "-input=false", "-no-color"); errors.Is(err, errChanges) {
		w.t.Fatalf("%s: the plan is not empty:\n%s", step, out)
	} else if err != nil {
		w.t.Fatalf("%s: %v", step, err)
	}
}

// state returns the state's values as terraform show -json gives them: each resource's and
// data source's attributes by address.
func (w *workspace) state(step string) map[string]map[string]any {
	w.t.Helper()
	var shown struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(w.must(step, "show", "-json", "-no-color")), &shown); err != nil {
		w.t.Fatalf("%s: terraform show -json: %v", step, err)
	}
	out := map[string]map[string]any{}
	for _, r := range shown.Values.RootModule.Resources {
		out[r.Address] = r.Values
	}
	return out
}

// plannedChange is one resource's change in a saved plan, as terraform show -json gives it
// (After leaves out the values known only after apply).
type plannedChange struct {
	Address string `json:"address"`
	Change  struct {
		Actions      []string       `json:"actions"`
		Before       map[string]any `json:"before"`
		After        map[string]any `json:"after"`
		ReplacePaths [][]any        `json:"replace_paths"`
	} `json:"change"`
}

// plan plans the configuration into a file and returns the resources' planned changes other
// than no-op.
func (w *workspace) plan(step string) []plannedChange {
	w.t.Helper()
	w.must(step, "plan", "-out=step.tfplan", "-input=false", "-no-color")
	var shown struct {
		ResourceChanges []plannedChange `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(w.must(step, "show", "-json", "-no-color", "step.tfplan")), &shown); err != nil {
		w.t.Fatalf("%s: terraform show -json: %v", step, err)
	}
	var changes []plannedChange
	for _, c := range shown.ResourceChanges {
		if len(c.Change.Actions) != 1 || c.Change.Actions[0] != "no-op" {
			changes = append(changes, c)
		}
	}
	return changes
}
