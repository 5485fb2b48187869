"""The user guide (docs/, mkdocs.yml) builds with --strict, holds every page, and the README
leads into it.

scripts/test builds the guide beside the tests; this does it under pytest too, so a broken
link, a missing page or a page left out of the nav fails `pytest` alone. The README is the
short way in: its links to the guide's pages, and the anchors they name, must land.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from project import ROOT

MKDOCS = Path(sys.executable).parent / "mkdocs"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the guide at ``root`` into ``site``."""
    return subprocess.run([str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
                          cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("guide") / "site"
    proc = build(ROOT, folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder


def nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_the_guide_builds_strict_with_every_page_in_the_nav(site: Path) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(nav_pages(config["nav"])) == pages
    for page in pages:
        html = "index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html"
        assert (site / html).is_file(), page
    assert (site / "images" / "app.svg").is_file()
    assert not (site / "hooks.py").exists(), "the build's hook is not a file of the site"


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    copy = tmp_path / "guide"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy)
    with (copy / "docs" / "app.md").open("a", encoding="utf-8") as page:
        page.write("\nSee [the keys](keys.md#nothing-here).\n")
    proc = build(copy, tmp_path / "site")
    assert proc.returncode != 0
    assert "keys.md" in proc.stdout + proc.stderr


def test_the_readme_is_short_and_leads_into_the_guide(site: Path) -> None:
    assert len(README.splitlines()) <= 250
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [link for link in links if "://" not in link]
    assert "ARCHITECTURE.md" in local and "docs/images/app.svg" in local
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert pages <= {link.split("#")[0] for link in local}, "every page linked from the README"
    for link in local:
        path, _, anchor = link.partition("#")
        assert (ROOT / path).exists(), link
        if anchor:
            page = Path(path).relative_to("docs").with_suffix("")
            html = site / ("index.html" if page.name == "index" else f"{page}/index.html")
            assert f'id="{anchor}"' in html.read_text(encoding="utf-8"), link
