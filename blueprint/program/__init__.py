"""The blueprint program's side of the package: `stack_config` reads and checks a stack's
`blueprint:*` config and turns it into each component's args (the root `__main__.py` uses it)."""
