"""MkDocs hooks of the manual's site (mkdocs.yml): the site's home page is the README, read at build
time, so the front page has one source. Its links into the manual (`docs/gate.md`) become the site's
own (`gate.md`); a link to a file outside the manual (CHANGELOG.md, LICENSE) becomes its name, which
the site cannot serve."""

import re
from pathlib import Path

from mkdocs.structure.files import File

HOME = "index.md"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def home_page(readme: str) -> str:
    """The README with its links rewritten for a page at the manual's root."""
    def link(match: re.Match) -> str:
        text, target = match.groups()
        if target.startswith(("http://", "https://", "#")):
            return match.group(0)
        if target.startswith("docs/"):
            return f"[{text}]({target.removeprefix('docs/')})"
        return f"{text} (`{target}`)" if text != target else f"`{target}`"
    return _LINK.sub(link, readme)


def on_files(files, config):
    readme = Path(config["config_file_path"]).parent / "README.md"
    files.append(File.generated(config, HOME, content=home_page(readme.read_text(encoding="utf-8"))))
    return files
