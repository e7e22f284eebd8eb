"""docs/architecture.md stays true: every file it names is in the repository."""

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"


def test_every_file_the_architecture_names_exists():
    tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.split()
    named = set(re.findall(r"`(?:[\w./-]*/)?[\w-]+\.py", DOC.read_text()))
    assert len(named) > 40
    missing = [name.lstrip("`") for name in sorted(named)
               if not any(path == name.lstrip("`") or path.endswith("/" + name.lstrip("`")) for path in tracked)]
    assert missing == []
