"""Write the TypeScript SDK module of our component package (`blueprint.ts`) from the schema the
plugin in plugin/ serves, in the shape `pulumi package add` generates: one class per component that
registers `blueprint:index:<Class>` as a remote ComponentResource with its camelCase inputs, and
declares its outputs.

The real SDK needs the Pulumi CLI to generate; this module is what the TypeScript test programs and
examples/typescript use instead. tests/test_node_programs.py checks that the committed copies match
the schema. Run: .venv/bin/python tests/node/generate_blueprint_sdk.py <file.ts>...
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

PLUGIN_DIR = Path(__file__).resolve().parents[2] / "plugin"
HEADER = """\
// The blueprint component package's TypeScript SDK, as `pulumi package add <blueprint>/plugin`
// generates it (@pulumi/blueprint): written from the plugin's schema by
// tests/node/generate_blueprint_sdk.py. Do not edit by hand.
import * as pulumi from "@pulumi/pulumi";

function remoteInputs(args: object | undefined, outputs: string[]): pulumi.Inputs {
    const inputs: pulumi.Inputs = { ...(args ?? {}) };
    for (const output of outputs) {
        inputs[output] = undefined;  // an output of the component, filled from its state
    }
    return inputs;
}
"""


def plugin_schema() -> dict:
    process = subprocess.Popen([sys.executable, str(PLUGIN_DIR), "127.0.0.1:1"], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            return json.loads(stub.GetSchema(provider_pb2.GetSchemaRequest(), timeout=60).schema)
    finally:
        process.terminate()
        process.wait(timeout=10)


def ts_type(spec: dict, *, plain: bool = False) -> str:
    """The SDK's input type for a schema property."""
    ref = spec.get("$ref", "")
    if ref == "pulumi.json#/Archive":
        inner = "pulumi.asset.Archive"
    elif ref == "pulumi.json#/Asset":
        inner = "pulumi.asset.Asset | pulumi.asset.Archive"
    elif ref.startswith("#/types/"):
        inner = "inputs." + ref.rsplit(":", 1)[-1]
    elif spec.get("type") == "array":
        inner = f"{ts_type(spec['items'])}[]"
    elif spec.get("type") == "object":
        inner = f"{{[key: string]: {ts_type(spec.get('additionalProperties', {'type': 'string'}))}}}"
    else:
        inner = {"integer": "number", "number": "number", "boolean": "boolean"}.get(spec.get("type", ""), "string")
    return inner if plain else f"pulumi.Input<{inner}>"


def comment(spec: dict, indent: str) -> list[str]:
    description = (spec.get("description") or "").strip()
    if not description:
        return []
    return [f"{indent}/**", *(f"{indent} * {line}".rstrip() for line in description.splitlines()), f"{indent} */"]


def properties(props: dict, required: list[str], indent: str, *, readonly: str = "") -> list[str]:
    lines = []
    for name, spec in props.items():
        lines += comment(spec, indent)
        optional = "" if name in required else "?"
        lines.append(f"{indent}{readonly}{name}{optional}: {ts_type(spec)};")
    return lines


def sdk_module(schema: dict) -> str:
    lines = [HEADER]
    lines.append("export namespace inputs {")
    for token, spec in schema.get("types", {}).items():
        lines += comment(spec, "    ")
        if "enum" in spec:  # a fixed set of values: the union of its literals, as the generated SDK types it
            literals = " | ".join(json.dumps(member["value"]) for member in spec["enum"])
            lines.append(f"    export type {token.rsplit(':', 1)[-1]} = {literals};")
            continue
        lines.append(f"    export interface {token.rsplit(':', 1)[-1]} {{")
        lines += properties(spec["properties"], spec.get("required", []), "        ")
        lines.append("    }")
    lines.append("}\n")
    for token, resource in schema["resources"].items():
        name = token.rsplit(":", 1)[-1]
        outputs = list(resource["properties"])
        lines.append(f"export interface {name}Args {{")
        lines += properties(resource["inputProperties"], resource.get("requiredInputs", []), "    ")
        lines.append("}\n")
        lines += comment(resource, "")
        lines.append(f"export class {name} extends pulumi.ComponentResource {{")
        lines.append(f'    public static readonly __pulumiType = "{token}";')
        for output in outputs:
            spec = resource["properties"][output]
            lines.append(f"    public readonly {output}!: pulumi.Output<{ts_type(spec, plain=True)}>;")
        lines.append("")
        lines.append(f"    constructor(name: string, args?: {name}Args, opts?: pulumi.ComponentResourceOptions) {{")
        lines.append(f"        super({name}.__pulumiType, name, remoteInputs(args, {json.dumps(outputs)}), opts, true);")
        lines.append("    }")
        lines.append("}\n")
    return "\n".join(lines)


if __name__ == "__main__":
    text = sdk_module(plugin_schema())
    for target in sys.argv[1:]:
        Path(target).write_text(text)
