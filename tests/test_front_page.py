"""The README is a front page: short, every link it gives resolves in the repository, and the site
`make docs` builds has it as its home page with its links into the manual made the site's own."""

import re
import sys

from tests.conftest import REPO

LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")
README = (REPO / "README.md").read_text()


def test_the_front_page_is_short_and_every_link_resolves():
    assert len(README.splitlines()) <= 250
    targets = [t.split("#")[0] for t in LINK.findall(README) if not t.startswith(("http://", "https://", "#"))]
    assert targets and [t for t in targets if not (REPO / t).exists()] == []


def test_the_front_page_names_the_install_the_quick_start_and_the_gate():
    for line in ("make local", "make test", "pip install 'integration-blueprint[local] @ git+",
                 "blueprint sdk --language typescript", "blueprint preview --stack prod",
                 "(docs/components/README.md)", "(docs/rules.md)", "(docs/sandbox.md)"):
        assert line in README, line


def test_the_sites_home_page_is_the_readme_with_the_manuals_links_made_its_own():
    sys.path.insert(0, str(REPO / "tools"))
    try:
        from mkdocs_hooks import home_page
    finally:
        sys.path.remove(str(REPO / "tools"))
    home = home_page(README)
    into_the_manual = re.findall(r"\]\(docs/([^)]+)\)", README)
    assert into_the_manual and "(docs/" not in home
    assert all(f"]({target})" in home for target in into_the_manual)
    assert "[CHANGELOG.md](CHANGELOG.md)" not in home and "`CHANGELOG.md`" in home  # outside the site: a name
