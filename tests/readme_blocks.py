"""The README's shell commands, as tests/test_readme.py, the e2e suite and .ci/run run them.

- The opening: the ```bash blocks before the first `## ` heading (install + main job, then
  the test command). .ci/run runs them verbatim: `python3 tests/readme_blocks.py opening N`.
- The plugin section (`## Using it with Claude Code`): every ```bash block runs in
  tests/test_readme.py, except one preceded by `<!-- readme-test: e2e -->`, which needs the
  real `claude` CLI and runs in tests/e2e/test_readme_e2e.py.
- A ```text block that follows a bash block with only blank lines between them is that
  block's expected stdout; `<!-- readme-test: model-sees -->` before a ```text block marks
  what the model receives (checked by the e2e suite).
- docs/claude-code.md holds the plugin section in full (its blocks are the README's, checked by
  tests/test_readme.py), the permission rules, the hooks for a project's own settings.json and
  the Stop hook's reason; the tests that pin them read that page.
- Placeholders: `/path/to/memindex` (a clone of this repository), `/path/to/your/project`.

Standard library only (.ci/run calls it before any install).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
DOCS = README.parent / "docs"
CLAUDE_CODE = DOCS / "claude-code.md"  # the plugin section in full: permission rules, settings.json, save prompts
PLUGIN_SECTION = "Using it with Claude Code"
CLONE = "/path/to/memindex"
PROJECT = "/path/to/your/project"
_MARKER = re.compile(r"^<!--\s*readme-test:\s*([\w-]+)\s*-->$")


@dataclass
class Block:
    lang: str  # the fence's info string: bash, text, json, ...
    text: str  # the content, ending with a newline
    line: int  # 1-based line of the opening fence
    section: str  # the enclosing `## ` heading ("" before the first)
    marker: str  # from `<!-- readme-test: MARKER -->` right before the fence, or ""
    output: "Block | None" = None  # the ```text block that follows (bash blocks only)

    def commands(self) -> list[str]:
        """The block's command lines: comments and blank lines dropped, `\\` continuations joined."""
        out, pending = [], ""
        for raw in self.text.splitlines():
            line = pending + raw
            if line.endswith("\\"):
                pending = line[:-1]
                continue
            pending = ""
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(line.strip())
        return out


def blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, in order, outputs attached to their commands."""
    lines = text.splitlines()
    out: list[Block] = []
    section, marker, previous = "", "", ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        fence = re.match(r"^(```+)(\S*)\s*$", line)
        if not fence:
            if line.strip():
                found = _MARKER.match(line.strip())
                marker = found.group(1) if found else ""
                previous = "prose"
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence.group(1)), None)
        if end is None:
            raise ValueError(f"README line {i + 1}: unclosed code fence")
        block = Block(fence.group(2), "".join(f"{x}\n" for x in lines[i + 1:end]), i + 1, section, marker)
        if block.lang == "text" and previous == "bash" and not marker and out:
            out[-1].output = block
        out.append(block)
        previous, marker = block.lang, ""
        i = end + 1
    return out


def opening(text: str) -> list[Block]:
    """The bash blocks before the first `## ` heading."""
    return [b for b in blocks(text) if b.section == "" and b.lang == "bash"]


def plugin_section(text: str) -> list[Block]:
    return [b for b in blocks(text) if b.section == PLUGIN_SECTION]


def section_text(text: str, title: str = PLUGIN_SECTION) -> str:
    """The Markdown of one `## ` section, heading included."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start + 1:end + 1 if end >= 0 else len(text)]


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "opening":
        found = opening(README.read_text(encoding="utf-8"))
        n = int(argv[1])
        if not 1 <= n <= len(found):
            print(f"readme_blocks: the README has {len(found)} opening bash blocks, not {n}", file=sys.stderr)
            return 1
        sys.stdout.write(found[n - 1].text)
        return 0
    print("usage: readme_blocks.py opening N", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
