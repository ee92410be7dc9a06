// Package cfnspec checks a CloudFormation template that uses the SAM transform (the project's
// template.yaml) against the resource specification that the npm package @aws-cdk/cfnspec ships
// in spec/specification.json: every CloudFormation resource and property type, merged with SAM's
// AWS::Serverless::* types and their event sources. It is what `make test` has instead of
// `sam validate` (no SAM CLI, no AWS account), and it checks what can be known without deploying:
//
//   - the template's top-level sections, each resource's attributes (Type, Properties,
//     DependsOn, Condition, Metadata, DeletionPolicy, ...) and each Globals section are known;
//   - every resource type is in the specification, and a type that needs the SAM transform
//     (AWS::Serverless::*) is in a template that declares it;
//   - every property is one its type defines, recursively through property types and lists
//     and maps of them;
//   - every required property is present, counting what Globals gives each SAM resource of the
//     matching type (SAM's merge: a resource's own value wins, maps merge, lists concatenate);
//   - a literal value has the shape (object, list, map, scalar) and, for a scalar, the primitive
//     type (String, Integer, Long, Double, Boolean, Timestamp, Json) the specification gives;
//   - an intrinsic function, long form ({"Ref": ...}, {"Fn::GetAtt": ...}) or short-form tag
//     (!Ref, !GetAtt, !Sub, ...), stands for any value; an unknown function or tag is a problem;
//   - a SAM event source's Properties are checked as the event type its Type names
//     (Type: HttpApi is checked as AWS::Serverless::Function.HttpApiEvent).
//
// What it cannot know: whether a value is one the service accepts (an enum member, a valid
// ARN), whether a reference resolves (shared/app checks that), and which properties SAM refuses
// in Globals.
//
// The specification's SAM part lags behind SAM itself: Additions lists the properties SAM
// documents that the pinned specification lacks and the template uses, each with where SAM
// defines it; a test fails when the specification gains one, so the list only ever shrinks.
//
// The package ships in no function: only tests use it.
package cfnspec
