"""The README is the front door (what it is, the two quickstart commands, where to go next);
the reference is the documentation site of docs/, built by MkDocs with every page and link
checked."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short_and_holds_the_two_quickstart_commands():
    assert len(README.splitlines()) < 300
    quickstart = README[README.index("## Quickstart"):]
    commands = re.findall(r"^(\./dev\.sh \w+)", quickstart[:quickstart.index("```", quickstart.index("```") + 3)],
                          re.MULTILINE)
    assert commands == ["./dev.sh demo", "./dev.sh test"]


def test_every_page_the_readme_points_to_exists_and_is_in_the_sites_navigation():
    pages = re.findall(r"\]\(docs/([\w/.-]+\.md)\)", README)
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert len(pages) >= 10
    assert [p for p in pages if not (ROOT / "docs" / p).exists() or (p != "index.md" and f": {p}" not in nav)] == []


@pytest.mark.system
def test_the_documentation_site_builds_without_a_warning(tmp_path):
    """--strict turns every warning into an error: a page left out of the navigation, a link to a
    page or an anchor that does not exist (mkdocs.yml's validation settings)."""
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert built.returncode == 0 and "WARNING" not in built.stderr, built.stderr[-2000:]
    assert (tmp_path / "site" / "metrics" / "index.html").exists()
