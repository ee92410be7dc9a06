# AWS's SAM transform, run offline: reads a SAM template (argv[1]) and writes the CloudFormation
# template CloudFormation would deploy, as JSON, to standard output. The managed policies SAM
# resolves by name come from the copy cfn-lint ships (cfnlint.data.Serverless), as cfn-lint
# itself does, so nothing calls AWS. Local CodeUri values become an S3 location, as `sam deploy`
# makes them after uploading.
import importlib.resources
import json
import os
import sys

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

import cfnlint.data.Serverless
from samtranslator.parser import parser
from samtranslator.translator.translator import Translator
from samtranslator.yaml_helper import yaml_parse

policies = json.loads(
    importlib.resources.files(cfnlint.data.Serverless).joinpath("ManagedPolicies.json").read_text()
)
with open(sys.argv[1]) as f:
    template = yaml_parse(f.read())
for resource in template.get("Resources", {}).values():
    if resource.get("Type") == "AWS::Serverless::Function":
        resource.setdefault("Properties", {})["CodeUri"] = "s3://artifacts/function.zip"
out = Translator(managed_policy_map=policies, sam_parser=parser.Parser()).translate(
    sam_template=template, parameter_values={}
)
json.dump(out, sys.stdout)
