package cfnspec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// PackageFile is where, inside an install of npm @aws-cdk/cfnspec, the merged CloudFormation
// and SAM resource specification is.
const PackageFile = "spec/specification.json"

// Spec is the resource specification: resource types by name (AWS::SQS::Queue) and property
// types by "<resource type>.<name>" (AWS::SQS::Queue.X), or by bare name for the few shared
// ones (Tag).
type Spec struct {
	Version       string `json:"ResourceSpecificationVersion"`
	ResourceTypes map[string]*TypeSpec
	PropertyTypes map[string]*TypeSpec
}

// TypeSpec is one resource or property type. A property type without Properties is an alias of
// the value its embedded Property describes (a list of another type, a primitive).
type TypeSpec struct {
	Properties map[string]*Property
	// AdditionalProperties: any property name is allowed (custom resources).
	AdditionalProperties bool
	// RequiredTransform is the transform a template needs for this type (SAM's).
	RequiredTransform string
	Property
}

// Property is what the specification says of one property's value. CloudFormation types use
// the singular fields; SAM's types add the plural ones for values that may take several shapes
// (CodeUri: a string or an S3Location; Policies: a string, a document or a list of either).
type Property struct {
	Required          bool
	PrimitiveType     string
	Type              string // "List", "Map" or a property type's name
	ItemType          string
	PrimitiveItemType string

	PrimitiveTypes     []string
	Types              []string
	PrimitiveItemTypes []string
	// Inclusive*: the value may also be a list of these (SAM's Policies).
	InclusiveItemTypes          []string
	InclusivePrimitiveItemTypes []string
	// InclusiveItemPattern: each list item that is an object maps pattern keys to an
	// InclusiveItemTypes value (SAM's RequestParameters).
	InclusiveItemPattern bool
}

// Addition is a property SAM documents that the pinned specification lacks.
type Addition struct {
	Type     string // the property type (or resource type) it belongs to
	Name     string
	Property Property
	Source   string // where SAM defines it
	// NewType defines the property type Property.Type names (as "<Type>.<Property.Type>") when
	// the specification lacks it too.
	NewType *TypeSpec
}

// Additions are added to the specification by Load (see the package doc). Each is one the
// template uses.
var Additions = []Addition{
	{
		Type: "AWS::Serverless::Function.SQSEvent", Name: "MaximumBatchingWindowInSeconds",
		Property: Property{PrimitiveType: "Integer"},
		Source:   "https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/sam-property-function-sqs.html",
	},
	{
		Type: "AWS::Serverless::Function.SQSEvent", Name: "FunctionResponseTypes",
		Property: Property{Type: "List", PrimitiveItemType: "String"},
		Source:   "https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/sam-property-function-sqs.html",
	},
	{
		// SAM passes it to AWS::Lambda::Function, whose pinned specification lacks it as well.
		Type: "AWS::Serverless::Function", Name: "LoggingConfig",
		Property: Property{Type: "LoggingConfig"},
		Source:   "https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/sam-resource-function.html#sam-function-loggingconfig",
		NewType: &TypeSpec{Properties: map[string]*Property{
			"ApplicationLogLevel": {PrimitiveType: "String"},
			"LogFormat":           {PrimitiveType: "String"},
			"LogGroup":            {PrimitiveType: "String"},
			"SystemLogLevel":      {PrimitiveType: "String"},
		}},
	},
}

// Load reads the specification from an install of npm @aws-cdk/cfnspec (the package's folder)
// and adds Additions to it. It returns the additions the specification already had, which are
// no longer needed.
func Load(packageDir string) (spec *Spec, redundant []Addition, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("load the resource specification from %s: %w", packageDir, err)
		}
	}()
	raw, err := os.ReadFile(filepath.Join(packageDir, PackageFile))
	if err != nil {
		return nil, nil, err
	}
	spec = &Spec{}
	if err := json.Unmarshal(raw, spec); err != nil {
		return nil, nil, err
	}
	if len(spec.ResourceTypes) == 0 {
		return nil, nil, fmt.Errorf("%s has no resource types", PackageFile)
	}
	for _, a := range Additions {
		ts := spec.PropertyTypes[a.Type]
		if ts == nil {
			ts = spec.ResourceTypes[a.Type]
		}
		if ts == nil || ts.Properties == nil {
			return nil, nil, fmt.Errorf("addition %s.%s: no type %s", a.Type, a.Name, a.Type)
		}
		if _, ok := ts.Properties[a.Name]; ok {
			redundant = append(redundant, a)
			continue
		}
		p := a.Property
		ts.Properties[a.Name] = &p
		if key := a.Type + "." + p.Type; a.NewType != nil && spec.PropertyTypes[key] == nil {
			spec.PropertyTypes[key] = a.NewType
		}
	}
	return spec, redundant, nil
}

// propertyType finds a property type named in a property of the resource type owner: its own
// (owner.Name) first, then a shared one (Tag).
func (s *Spec) propertyType(owner, name string) (*TypeSpec, string) {
	if ts := s.PropertyTypes[owner+"."+name]; ts != nil {
		return ts, owner + "." + name
	}
	if ts := s.PropertyTypes[name]; ts != nil {
		return ts, name
	}
	return nil, owner + "." + name
}

// names is the sorted keys of a type's properties, for messages.
func names(props map[string]*Property) []string {
	out := make([]string, 0, len(props))
	for n := range props {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
