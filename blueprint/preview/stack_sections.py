"""`blueprint:<section>` objects in a team's stack file that no code of its program reads.

The sections (`blueprint:fifoBilling: {maxReceiveCount: 2}`, ...) are read only by a program that
calls `integration_blueprint.program.stack_config` (the blueprint's own program does: it checks
every section and key itself and refuses a typo). A team's program gives its components their
settings as arguments, so a section in its stack file changes nothing; the preview says so, names
the arguments that would carry the settings, and checks the section's keys and values against the
component's settings table as the blueprint's program would (a misspelled key is named with the
key it resembles).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, Optional

from integration_blueprint.core.conventions import SUPPRESSIONS_SECTION
from integration_blueprint.preview.project import own_python_files

NAMESPACE = "blueprint"
# What a program's Python source names when it reads the sections (the reader's own module).
READER_MODULE = "integration_blueprint.program"


def reads_sections(program_dir: Optional[Path], language: str) -> bool:
    """Whether the program's own Python code uses the sections' reader (a TypeScript program
    cannot: the reader is Python)."""
    if program_dir is None or language != "python":
        return False
    for path in own_python_files(program_dir):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if READER_MODULE in text or "from integration_blueprint import program" in text:
            return True
    return False


def unread_section_notes(config: dict[str, Any], program_dir: Optional[Path], language: str,
                         stack_file: str) -> list[str]:
    """One note per `blueprint:` section of the stack that the program does not read."""
    sections = {key: value for key, value in config.items()
                if key.startswith(f"{NAMESPACE}:") and key != f"{NAMESPACE}:{SUPPRESSIONS_SECTION}"}
    if not sections or reads_sections(program_dir, language):
        return []
    return [_note(key, value, language, stack_file) for key, value in sorted(sections.items())]


def _note(key: str, raw: Any, language: str, stack_file: str) -> str:
    from integration_blueprint.program import stack_config

    name = key.split(":", 1)[1]
    head = (f"{key} in {stack_file} is read by no code of this program (only a program that reads the "
            f"stack through {READER_MODULE}.stack_config, as the blueprint's own does, applies it): its "
            "settings change nothing here")
    if name not in stack_config.SECTIONS:
        close = difflib.get_close_matches(name, stack_config.SECTIONS, n=1)
        hint = f" (did you mean {NAMESPACE}:{close[0]}?)" if close else ""
        return f"{head}; nor is {name!r} a section of the blueprint{hint}"
    values = json.loads(raw) if isinstance(raw, str) and raw.startswith("{") else raw
    if not isinstance(values, dict):
        return f"{head}; it must be an object of settings, got {raw!r}"
    table = _table(name)
    settable = {setting.key: setting for setting in table if setting.in_stack}
    problems, arguments = [], []
    for written, value in values.items():
        setting = settable.get(written)
        if setting is None:
            if written == stack_config.ENABLED.key:
                continue
            close = difflib.get_close_matches(str(written), list(settable), n=1)
            problems.append(f"{written!r} is not a setting of the section"
                            + (f" (did you mean {close[0]!r}?)" if close else ""))
            continue
        arguments.append(f"{setting.key if language == 'nodejs' else setting.arg}: {value!r}")
        try:
            setting.parse(value)
        except ValueError as refused:
            problems.append(f"{written} = {value!r} is not allowed: {refused}")
    give = f"; give them to the component's arguments instead ({', '.join(arguments)})" if arguments else ""
    return head + give + (f". In the section: {'; '.join(problems)}" if problems else "")


def _table(name: str):
    """The settings table of a section: the platform's or its pattern's component."""
    from integration_blueprint.components.platform import PLATFORM_SETTINGS
    from integration_blueprint.program import stack_config

    return PLATFORM_SETTINGS if name == "platform" else stack_config.component_tables()[name]
