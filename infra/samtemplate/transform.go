package samtemplate

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

//go:embed transform.py
var transformScript string

// Template is a CloudFormation template: what the SAM transform makes of template.yaml.
type Template struct {
	Parameters map[string]any      `json:"Parameters"`
	Conditions map[string]any      `json:"Conditions"`
	Resources  map[string]Resource `json:"Resources"`
	Outputs    map[string]any      `json:"Outputs"`
}

// Resource is one resource of a Template.
type Resource struct {
	Type       string         `json:"Type"`
	Condition  string         `json:"Condition,omitempty"`
	Properties map[string]any `json:"Properties"`
}

// Transform runs the SAM transform on the template at path with python3, which must have
// aws-sam-translator and cfn-lint installed (infra/tools.sh installs them).
func Transform(path string) (*Template, error) {
	cmd := exec.Command("python3", "-c", transformScript, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the SAM transform of %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	var t Template
	if err := json.Unmarshal(out, &t); err != nil {
		return nil, fmt.Errorf("the SAM transform of %s: %w", path, err)
	}
	return &t, nil
}

// Available reports whether Transform can run here, and if not, why.
func Available() error {
	cmd := exec.Command("python3", "-c", "import samtranslator, cfnlint.data.Serverless")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("python3 with aws-sam-translator and cfn-lint is needed (python3 -m pip install cfn-lint==1.51.0): %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
