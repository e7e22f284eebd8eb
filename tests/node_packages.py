"""A TypeScript program's node_modules as npm lays it out, for the tests: the pinned packages `make
node-fixtures` installs (tests/node/node_modules), each linked, and our component SDK as `npm
install <folder or tarball>` puts it there (a copy at node_modules/@pulumi/blueprint, so its
`require("@pulumi/pulumi")` finds the program's own copy, as in a real install)."""

import shutil
from pathlib import Path

NODE_MODULES = Path(__file__).resolve().parent / "node" / "node_modules"
SDK_PACKAGE = ("@pulumi", "blueprint")


def install_node_modules(program: Path, sdk: Path | None = None) -> Path:
    """`program`/node_modules with every fixture package linked (beside what npm already installed
    there) and, given `sdk` (the folder `blueprint sdk --language typescript` wrote), the SDK
    copied in as @pulumi/blueprint."""
    modules = program / "node_modules"
    modules.mkdir(exist_ok=True)
    for entry in NODE_MODULES.iterdir():
        if entry.name.startswith("@"):  # a scope: its packages one by one, so ours can join them
            (modules / entry.name).mkdir(exist_ok=True)
            for package in entry.iterdir():
                if not (modules / entry.name / package.name).exists():
                    (modules / entry.name / package.name).symlink_to(package)
        elif not (modules / entry.name).exists():
            (modules / entry.name).symlink_to(entry)
    if sdk is not None:
        target = modules.joinpath(*SDK_PACKAGE)
        target.parent.mkdir(exist_ok=True)
        shutil.copytree(sdk, target)
    return modules
