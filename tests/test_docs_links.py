"""Every relative link of README.md and docs/*.md points at a file that exists, and every
`#anchor` at a heading of its page (GitHub's anchors: lower case, punctuation dropped,
spaces to hyphens, `-1`, `-2` for repeats)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```+|~~~+)")


def prose(text: str, code: bool = False) -> str:
    """The page without its fenced blocks, and without inline code unless `code` (links
    there are not links; a heading's code is part of its anchor)."""
    out, fence = [], ""
    for line in text.splitlines():
        found = FENCE.match(line.strip())
        if fence:
            if found and line.strip().startswith(fence):
                fence = ""
            continue
        if found:
            fence = found.group(1)
            continue
        out.append(line if code else re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading: str) -> str:
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"\]\([^)]*\)", "]", text)  # a link in a heading: its text only
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in prose(page.read_text(encoding="utf-8"), code=True).splitlines():
        found = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not found:
            continue
        base = slug(found.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    return [m.group(1) for m in LINK.finditer(prose(page.read_text(encoding="utf-8")))]


def test_the_slug_rule_on_known_headings() -> None:
    assert slug("Without the plugin: a project's own `.claude/settings.json`") == "without-the-plugin-a-projects-own-claudesettingsjson"
    assert slug("On-demand Recall@10 >= 0.9 over every judged memory: not met") == "on-demand-recall10--09-over-every-judged-memory-not-met"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no such heading in {dest.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Top\n\n[ok](#top) [no](#missing) [file](nope.md) `[code](x.md)`\n", encoding="utf-8")
    assert links(page) == ["#top", "#missing", "nope.md"]
    assert anchors(page) == {"top"}
