"""A team's program with folders of its own named like our package's (`components/`, `handlers/`):
what the layout and wheel tests prove the program keeps apart from ours."""

from pathlib import Path


def write_team_program(program: Path, handler_source: str) -> None:
    """`program`'s Pulumi.yaml, its components/naming.py (PREFIX = 'team') and handlers/app.py
    (`handler_source`); the test writes the program's __main__.py."""
    (program / "Pulumi.yaml").write_text("name: team-app\nruntime: python\n")
    for folder, module, body in (("components", "naming", "PREFIX = 'team'\n"), ("handlers", "app", handler_source)):
        (program / folder).mkdir()
        (program / folder / "__init__.py").write_text("")
        (program / folder / f"{module}.py").write_text(body)
