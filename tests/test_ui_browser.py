"""`memindex ui` in a real browser: headless Chromium from Debian's packages
(/usr/bin/chromium, or MEMINDEX_CHROMIUM), driven by Playwright for Python pointed at it
(never a browser of its own: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD, executable_path). The real
command is started as a process and the address it prints is opened; the store is a copy
of the demo project in git, with a hostile title, and one session the real prompt hook
answered (its transcript too).

Marked `ui` (excluded from the default run): `python -m pytest -m ui tests/test_ui_browser.py`;
.ci/run installs Chromium when it is missing. A screenshot of each main page goes to the
test's tmp folder (`screenshots/`), and to MEMINDEX_UI_SHOTS (a folder) when set: the
README's pictures are made with `MEMINDEX_UI_SHOTS=docs/ui`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import REPO, cli_cmd, cli_env, run_cli, write_mem
from uikit import address_of

pytestmark = pytest.mark.ui

CHROMIUM = os.environ.get("MEMINDEX_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
FLAKY = "runbooks/flaky-ci-integration-tests-postgres.json"
TITLE = "Flaky CI: integration tests fail before Postgres is ready"
PROMPT = "Our CI is flaky: integration tests fail before Postgres is ready. What did we do last time?"
SID = "0b5e5d2c-1111-4aaa-9bbb-00000000ui01"
HOSTILE = "<script>alert(1)</script> \uff1cimg src=x onerror=alert(2)\uff1e tail\u202egnp.exe"


def _missing(why: str) -> None:
    if os.environ.get("MEMINDEX_UI_REQUIRE") == "1":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def playwright():  # type: ignore[no-untyped-def]
    os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed (pip install playwright; the browser is Debian's chromium)")
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"no Chromium at {CHROMIUM} (apt-get install -y chromium chromium-driver)")
    with sync_playwright() as p:
        yield p


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    """The demo project in git, a hostile title, a session the real prompt hook answered."""
    from memindex_dev.evaluation.transcripts import TranscriptWriter
    from memindex.importers.claude_memory import project_key

    proj = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo-project", proj, ignore=shutil.ignore_patterns(".index.db*", "index.md"))
    root = proj / ".claude" / "memory"
    write_mem(root, "decision", "hostile-title", HOSTILE, tags=["security"])
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    if shutil.which("git"):
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the demo's memories"]):
            subprocess.run(["git", *cmd], cwd=proj, env=env, check=True, capture_output=True)
    assert run_cli("--root", str(root), "sync").returncode == 0
    claude = tmp_path / "claude"
    os.environ["CLAUDE_CONFIG_DIR"] = str(claude)  # the hook, the capture and the page read it
    w = TranscriptWriter(SID, str(proj), datetime(2026, 9, 5, 9, 0, tzinfo=timezone.utc))
    w.prompt(PROMPT)
    w.read(str(root / FLAKY), "{...}")
    folder = claude / "projects" / project_key(str(proj))
    folder.mkdir(parents=True)
    transcript = w.write(folder / f"{SID}.jsonl")
    hook = subprocess.run([sys.executable, "-I", "-S", str(REPO / "hooks" / "memindex_hook.py"), "prompt"],
                          input=json.dumps({"prompt": PROMPT, "cwd": str(proj), "session_id": SID,
                                            "transcript_path": str(transcript)}).encode(), capture_output=True, timeout=60)
    assert FLAKY in hook.stdout.decode(), hook.stderr
    assert run_cli("--root", str(root), "capture", "--transcript", str(transcript)).returncode == 0  # the opens
    yield proj
    os.environ.pop("CLAUDE_CONFIG_DIR", None)


def _ui(proj: Path) -> tuple[subprocess.Popen, str, float]:
    started = time.monotonic()
    proc = subprocess.Popen(cli_cmd("--root", str(proj), "ui", "--no-open"), env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    line = proc.stdout.readline().strip()
    return proc, line, time.monotonic() - started


def _status(root: Path, rel: str) -> str:
    return json.loads((root / rel).read_text())["record_status"]


def _cli_search(root: Path, query: str) -> list[str]:
    return [h["path"] for h in json.loads(run_cli("--root", str(root), "search", "--json", "--limit", "50", query).stdout)]


def test_the_page_in_chromium(playwright, demo: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = demo / ".claude" / "memory"
    shots = tmp_path / "screenshots"
    shots.mkdir()
    proc, line, took = _ui(demo)
    try:
        port, _ = address_of(line)
        base = f"http://127.0.0.1:{port}"
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 860})
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))

        def shot(name: str, whole: bool = False) -> None:
            page.screenshot(path=str(shots / f"{name}.png"), full_page=whole)

        # open the printed address: signed in, the token gone from the address bar
        page.goto(line)
        assert page.url == base + "/"
        [cookie] = context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["name"] == f"memindex_ui_{port}"
        assert page.locator("#results").is_visible()
        shot("memories")

        # browse to a memory
        page.get_by_role("link", name=TITLE).first.click()
        assert "/memory?path=" in page.url and page.locator("h1").inner_text() == TITLE
        assert "the demo's memories" in page.locator("#git").inner_text() or not shutil.which("git")
        assert "Wait strategy updated for Postgres 16" in page.locator("#changes").inner_text()
        shot("memory")

        # search: the same list as `memindex search`
        page.fill("input[name=q]", "flaky CI")
        page.press("input[name=q]", "Enter")
        page.wait_for_url("**/?q=*")
        assert page.locator("#results .path").all_inner_texts() == _cli_search(root, "flaky CI")
        shot("search")

        # try a prompt: the same answer as `memindex explain`
        answer = json.loads(run_cli("--root", str(root), "explain", "--json", PROMPT).stdout)
        page.get_by_role("link", name="What the assistant was shown").click()
        page.fill("#prompt", PROMPT)
        page.get_by_role("button", name="Explain").click()
        page.wait_for_selector("#explain")
        assert page.locator("#injected code.path").all_inner_texts() == answer["injected"]
        ordered = sorted(answer["considered"], key=lambda d: (not d["kept"], -(d["probability"] or 0.0), -d["score"]))
        assert page.locator("#considered .path").all_inner_texts() == [d["path"] for d in ordered]
        assert page.locator("#considered tr.kept").count() == sum(d["kept"] for d in ordered)
        shot("shown")

        # the session the real hook answered: its prompt (from the transcript), what it injected and why
        page.locator("#sessions a").first.click()
        events = page.locator("#events").inner_text()
        assert PROMPT in events and TITLE in events and "P(relevant)" in events and "opened (read)" in events
        shot("session")

        for name, label in (("sessions", "Sessions"), ("health", "Health and review"), ("pictures", "Pictures")):
            page.get_by_role("link", name=label, exact=True).click()
            page.wait_for_load_state()
            shot(name, whole=name == "pictures")
        assert page.locator("svg.chart").count() >= 3

        # a hostile title is text: no script ran, its look-alikes shown as marks
        page.goto(base + "/memory?path=decisions/hostile-title.json")
        h1 = page.locator("h1").inner_text()
        assert "<script>alert(1)</script>" in h1 and "U+FF1C" in h1 and "U+202E" in h1 and "\uff1c" not in h1
        assert page.locator("script").count() == 0 and page.locator("img").count() == 0 and dialogs == []

        # retire a memory: the file changes, search drops it; then undo it
        page.goto(base + "/memory?path=" + FLAKY)
        page.get_by_role("link", name="Retire").click()
        page.fill("input[name=reason]", "a healthcheck replaced the wait")
        shot("confirm")
        page.click("#confirm")
        page.wait_for_selector("#done")
        assert _status(root, FLAKY) == "retired"
        assert json.loads((root / FLAKY).read_text())["retired_reason"].startswith("a healthcheck replaced the wait")
        assert FLAKY not in [p.split("/", 2)[-1] for p in _cli_search(root, "flaky CI postgres")]
        page.goto(base + "/?q=flaky+CI+postgres")
        assert f".claude/memory/{FLAKY}" not in page.locator("#results .path").all_inner_texts()
        page.go_back()
        page.get_by_role("link", name="Undo (restore)").click()
        page.click("#confirm")
        page.wait_for_selector("#done")
        assert _status(root, FLAKY) == "active"
        page.goto(base + "/?q=flaky+CI+postgres")
        assert f".claude/memory/{FLAKY}" in page.locator("#results .path").all_inner_texts()
        assert dialogs == []
        assert {urlsplit(u).netloc for u in requested} == {f"127.0.0.1:{port}"}  # nothing fetched from elsewhere
        browser.close()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    assert code == 0
    assert took < 15, f"start-up took {took:.1f} s"  # (the 1.5 s budget: scripts/bench_ui.py, on a quiet machine)
    assert sorted(p.stem for p in shots.iterdir()) == sorted(
        ["memories", "memory", "search", "shown", "session", "sessions", "health", "pictures", "confirm"])
    out = os.environ.get("MEMINDEX_UI_SHOTS")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        for png in shots.iterdir():
            shutil.copy(png, Path(out) / png.name)
