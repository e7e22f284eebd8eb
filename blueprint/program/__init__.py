"""The blueprint program's side of the package: `stack_config` reads and checks a stack's
`blueprint:*` config and turns it into each component's args (the root `__main__.py` uses it).

Public: the `stack_config` module (its own `__all__` lists what it offers).
"""

__all__ = ["stack_config"]
