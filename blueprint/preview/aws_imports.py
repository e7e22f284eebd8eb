"""pulumi_aws's service packages (`aws.s3`, `aws.iam`, ...) load only the modules a program uses.

Each service package of pulumi_aws (7.x) is an `__init__.py` of `from .<module> import *` lines,
one per resource and function of the service (67 for s3, 58 for iam): touching `aws.s3.Bucket`
executes all 67 modules. For `blueprint preview --stack prod` that was 1.0 s of pulumi_aws
imports, 40% of the command, mostly modules the program never names.

With `install()`, a service package whose `__init__.py` has that form is given its names first,
read from each module's `__all__` (not executed), and a module-level `__getattr__` imports the
module that defines a name the first time the name is asked for; the object is the same one the
eager import would have bound (the last module exporting a name binds it, as the star imports
would), and a submodule's name (`outputs`) imports that submodule. Anything else asked of the
package (`dir()`, a star import, a name not exported) first runs the package's own
`__init__.py`, which makes it exactly the eagerly imported package. A package of any other form
(pulumi_aws.config) is imported as it is. The imports that remain (about 0.45 s for prod) are
mostly each used service's `_inputs` module, which every resource module of the service imports.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from integration_blueprint.core.patches import PULUMI_AWS_VERIFIED, SPEED, Patcher, patch

PACKAGE = "pulumi_aws"
# What a service package's __init__.py holds besides its star imports (pulumi_aws 7.51).
_PREAMBLE = {"import builtins as _builtins", "from .. import _utilities", "import typing", "from . import outputs"}
_STAR_IMPORT = re.compile(r"from \.(\w+) import \*")
_ALL = re.compile(r"^__all__ = \[(.*?)\]", re.M | re.S)
_NAME = re.compile(r"'(\w+)'")


def _exported_names(package_dir: Path, modules: list[str]) -> dict[str, str] | None:
    """name -> the module whose star import binds it last, or None if a module has no source to
    read or its `__all__` is not a plain list of names."""
    names: dict[str, str] = {}
    for module in modules:
        try:
            found = _first_all(package_dir / f"{module}.py")
        except OSError:
            return None
        if found is None or _NAME.sub("", found.group(1)).strip(" \n,"):
            return None
        for name in _NAME.findall(found.group(1)):
            names[name] = module
    return names


def _first_all(path: Path) -> re.Match | None:
    """The file's first `__all__ = [...]`, read from its top only as far as the list ends: the
    generated modules state it after their imports, in the first few kilobytes of files up to a
    megabyte (reading each used service's modules whole was 30 ms of the prod program's CPU). The
    same match as in the whole text: a match found in a prefix is the leftmost one of the file."""
    text, size = "", 1 << 14
    with open(path, encoding="utf-8") as file:
        while True:
            chunk = file.read(size)
            text += chunk
            found = _ALL.search(text)
            if found is not None or not chunk:
                return found
            size *= 2  # a file without one is read in a few doubling steps, each searched once


class _ServicePackageLoader(importlib.abc.Loader):
    def __init__(self, eager: importlib.abc.Loader):
        self.eager = eager

    def create_module(self, spec):
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        init = Path(module.__file__ or "")
        lines = [line for line in init.read_text().splitlines() if line and not line.startswith("#")]
        modules = [m.group(1) for line in lines if (m := _STAR_IMPORT.fullmatch(line))]
        names = None
        if len(modules) + len(_PREAMBLE & set(lines)) == len(lines):
            names = _exported_names(init.parent, modules)
        if names is None:
            self.eager.exec_module(module)
            return
        loaded = False

        def load_all() -> None:
            nonlocal loaded
            if not loaded:
                loaded = True
                self.eager.exec_module(module)  # the package's own __init__.py, all of it

        def __getattr__(name: str) -> Any:
            if name in names and not loaded:
                value = getattr(importlib.import_module(f"{module.__name__}.{names[name]}"), name)
                setattr(module, name, value)
                return value
            if (init.parent / f"{name}.py").is_file():  # a submodule (`from . import outputs`)
                return importlib.import_module(f"{module.__name__}.{name}")
            load_all()
            if name in module.__dict__:
                return module.__dict__[name]
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        def __dir__() -> list[str]:
            load_all()
            return sorted(module.__dict__)

        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        module.__dir__ = __dir__  # type: ignore[method-assign]


class _ServicePackageFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname.count(".") != 1 or not fullname.startswith(f"{PACKAGE}."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.submodule_search_locations is not None and spec.loader is not None:
            spec.loader = _ServicePackageLoader(spec.loader)
        return spec


def install() -> None:
    """From now on in this process (if pulumi_aws is not imported yet: its __init__ prepares every
    service package), service packages load lazily."""
    if PACKAGE in sys.modules or any(isinstance(f, _ServicePackageFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _ServicePackageFinder())


PATCH_NAME = "lazy_pulumi_aws_service_packages"


@patch(PATCH_NAME, target="pulumi_aws.<service> packages' __init__ (their star imports)", package="pulumi-aws",
       verified=PULUMI_AWS_VERIFIED, kind=SPEED,
       buys="the blueprint's prod program imports in 2.0 s of CPU instead of 2.4 s (python_exec.py applies it "
            "in the program's process when the program's interpreter has this package)")
def lazy_service_packages(patcher: Patcher) -> None:
    if PACKAGE in sys.modules or any(isinstance(f, _ServicePackageFinder) for f in sys.meta_path):
        return
    patcher.replace(sys, "meta_path", [_ServicePackageFinder(), *sys.meta_path])
