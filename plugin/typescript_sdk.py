"""The component package's TypeScript SDK as an npm package, written from the plugin's schema without
the Pulumi CLI or a TypeScript compiler: `package.json`, `index.js` (CommonJS, what `tsc` emits for
the module `pulumi package add` generates) and `index.d.ts` (its declarations), and a README.

Each component is a class that registers `blueprint:index:<Class>` as a remote ComponentResource
with its camelCase inputs, so the engine constructs it through the plugin, and declares its outputs
(filled from the component's state). `npm pack` packs the folder as it is; `npm install <folder or
tarball>` installs it as `@pulumi/blueprint`, the name `pulumi package add` gives it.

Public: `NPM_NAME`, `write_package(schema, folder)` (the files written, by name), `declarations`,
`javascript`, `package_json`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

__all__ = ["NPM_NAME", "declarations", "javascript", "package_json", "write_package"]

NPM_NAME = "@pulumi/blueprint"
# The SDK runs on the program's own @pulumi/pulumi (a second copy would not see the program's
# resources); 3.x has every call the SDK makes.
PULUMI_PEER_RANGE = "^3.0.0"
GENERATED = "Generated from the plugin's schema by `blueprint sdk --language typescript`. Do not edit by hand."


def _name(token: str) -> str:
    return token.rsplit(":", 1)[-1]


def _ts_type(spec: Mapping[str, Any], *, plain: bool = False) -> str:
    """The SDK's input type for a schema property (`plain`: the value itself, for an output)."""
    ref = spec.get("$ref", "")
    if ref == "pulumi.json#/Archive":
        inner = "pulumi.asset.Archive"
    elif ref == "pulumi.json#/Asset":
        inner = "pulumi.asset.Asset | pulumi.asset.Archive"
    elif ref.startswith("#/types/"):
        inner = "inputs." + _name(ref)
    elif spec.get("type") == "array":
        inner = f"{_ts_type(spec['items'], plain=plain)}[]"
    elif spec.get("type") == "object":
        inner = f"{{[key: string]: {_ts_type(spec.get('additionalProperties', {'type': 'string'}), plain=plain)}}}"
    else:
        inner = {"integer": "number", "number": "number", "boolean": "boolean"}.get(spec.get("type", ""), "string")
    return inner if plain else f"pulumi.Input<{inner}>"


def _comment(spec: Mapping[str, Any], indent: str) -> list[str]:
    description = (spec.get("description") or "").strip().replace("*/", "* /")
    if not description:
        return []
    return [f"{indent}/**", *(f"{indent} * {line}".rstrip() for line in description.splitlines()), f"{indent} */"]


def _properties(props: Mapping[str, Any], required: list[str], indent: str, *, output: bool = False) -> list[str]:
    lines = []
    for name, spec in props.items():
        lines += _comment(spec, indent)
        if output:
            lines.append(f"{indent}readonly {name}: pulumi.Output<{_ts_type(spec, plain=True)}>;")
        else:
            lines.append(f"{indent}{name}{'' if name in required else '?'}: {_ts_type(spec)};")
    return lines


def declarations(schema: Mapping[str, Any]) -> str:
    """index.d.ts: the input types, each component's Args and its class with typed outputs."""
    lines = [f"// {GENERATED}", 'import * as pulumi from "@pulumi/pulumi";', "", "export declare namespace inputs {"]
    for token, spec in schema.get("types", {}).items():
        lines += _comment(spec, "    ")
        if "enum" in spec:  # a fixed set of values: the union of its literals, as Pulumi's codegen types it
            literals = " | ".join(json.dumps(member["value"]) for member in spec["enum"])
            lines.append(f"    type {_name(token)} = {literals};")
            continue
        lines.append(f"    interface {_name(token)} {{")
        lines += _properties(spec["properties"], spec.get("required", []), "        ")
        lines.append("    }")
    lines += ["}", ""]
    for token, resource in schema["resources"].items():
        name = _name(token)
        required = resource.get("requiredInputs", [])
        lines.append(f"export interface {name}Args {{")
        lines += _properties(resource["inputProperties"], required, "    ")
        lines += ["}", ""]
        lines += _comment(resource, "")
        lines.append(f"export declare class {name} extends pulumi.ComponentResource {{")
        lines.append(f'    static readonly __pulumiType: "{token}";')
        lines += _properties(resource["properties"], [], "    ", output=True)
        lines.append(f"    constructor(name: string, args{'' if required else '?'}: {name}Args, "
                     "opts?: pulumi.ComponentResourceOptions);")
        lines += ["}", ""]
    return "\n".join(lines)


def javascript(schema: Mapping[str, Any]) -> str:
    """index.js: each component a remote ComponentResource (the engine constructs it through the
    plugin) whose outputs are filled from the component's state."""
    lines = [f"// {GENERATED}", '"use strict";', 'Object.defineProperty(exports, "__esModule", { value: true });',
             'const pulumi = require("@pulumi/pulumi");', "",
             "function remoteInputs(args, outputs) {",
             "    const inputs = Object.assign({}, args || {});",
             "    for (const output of outputs) {",
             "        inputs[output] = undefined;  // an output of the component, filled from its state",
             "    }",
             "    return inputs;", "}", ""]
    for token, resource in schema["resources"].items():
        name = _name(token)
        lines += [f"class {name} extends pulumi.ComponentResource {{",
                  "    constructor(name, args, opts) {",
                  f"        super({name}.__pulumiType, name, remoteInputs(args, {json.dumps(list(resource['properties']))}), "
                  "opts, true);",
                  "    }", "}",
                  f'{name}.__pulumiType = "{token}";',
                  f"exports.{name} = {name};", ""]
    return "\n".join(lines)


def package_json(schema: Mapping[str, Any]) -> str:
    return json.dumps({
        "name": NPM_NAME,
        "version": schema["version"],
        "description": f"TypeScript SDK of the {schema['name']} component package (the integration blueprint's "
                       "four components). " + GENERATED,
        "license": "MIT",
        "main": "index.js",
        "types": "index.d.ts",
        "files": ["index.js", "index.d.ts", "README.md"],
        "peerDependencies": {"@pulumi/pulumi": PULUMI_PEER_RANGE},
        # As Pulumi's codegen marks a resource package: the CLI reads the plugin's name and version here.
        "pulumi": {"resource": True, "name": schema["name"], "version": schema["version"]},
    }, indent=2) + "\n"


def _readme(schema: Mapping[str, Any]) -> str:
    names = ", ".join(f"`{_name(token)}`" for token in schema["resources"])
    return f"""# {NPM_NAME} {schema['version']}

The integration blueprint's components for TypeScript and JavaScript Pulumi programs: {names}.
{GENERATED}

    npm install <this folder, or the tarball `npm pack` makes of it>

Each component is constructed by the blueprint's plugin (inside the `integration-blueprint` Python
package): `blueprint preview` runs it offline; under the Pulumi CLI, add the plugin to Pulumi.yaml
(`pulumi package add <blueprint checkout>/plugin`, or `packages: {{blueprint: <that folder>}}`).
Every input and output is documented in index.d.ts; `blueprint docs <Component>` prints a
component's reference page.
"""


def write_package(schema: Mapping[str, Any], folder: Path) -> dict[str, Path]:
    """Write the npm package into `folder` (created if missing); the files written, by name."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"package.json": package_json(schema), "index.js": javascript(schema),
             "index.d.ts": declarations(schema), "README.md": _readme(schema)}
    written = {}
    for name, text in files.items():
        (folder / name).write_text(text)
        written[name] = folder / name
    return written
