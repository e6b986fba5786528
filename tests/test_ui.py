"""`memindex ui`: the local web page, served on a real socket (tests/uikit.py) and spoken
to over HTTP. The door first (host, token, cookie, CSRF, read-only, no CORS, escaping,
paths), then what each page gives (the CLI's search and explain answers, the use log, the
write path), then the command itself. The same page in a real Chromium:
tests/test_ui_browser.py (`-m ui`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")
pytest.importorskip("uvicorn")

from conftest import REPO, cli_cmd, cli_env, run_cli, write_mem  # noqa: E402
from memindex.defaults import WATCH_MARKER  # noqa: E402
from uikit import address_of, form, links, serving  # noqa: E402

FLAKY = "runbooks/flaky-ci-integration-tests-postgres.json"
PROMPT = "Our CI is flaky: integration tests fail before Postgres is ready. What did we do last time?"
HOSTILE = "<script>alert(1)</script> \uff1cimg src=x onerror=alert(2)\uff1e \u3008b\u3009 tail\u202egnp.exe \u200bhidden"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo-project", proj, ignore=shutil.ignore_patterns(".index.db*", ".*.lock"))
    return proj


@pytest.fixture()
def root(project: Path) -> str:
    from memindex.store.paths import find_root

    root = find_root(str(project), explicit=True)
    write_mem(root, "decision", "hostile-title", HOSTILE, tags=["security"],
              content={"status": "accepted", "context": "ctx <b>bold</b> \u2066isolate\u2069", "decision": "d",
                       "alternatives": [], "rationale": [], "consequences": []})
    return root


@pytest.fixture()
def page(root: str):  # type: ignore[no-untyped-def]
    with serving(root) as client:
        client.login()
        yield client


def _status(root: str, rel: str) -> str:
    return json.loads(Path(root, rel).read_text())["record_status"]


# --- the door -----------------------------------------------------------------------------


def test_no_token_no_cookie_is_401_and_shows_nothing(root: str) -> None:
    with serving(root) as client:
        for path in ("/", "/memory?path=" + FLAKY, "/static/style.css", "/health", "/nowhere"):
            r = client.get(path)
            assert r.status == 401, path
            assert "Flaky" not in r.text and "set-cookie" not in {k.lower() for k, _ in r.headers}


def test_wrong_token_is_403_and_a_stale_cookie_is_401(root: str) -> None:
    with serving(root) as client:
        assert client.get("/?token=" + "x" * 43).status == 403
        assert client.get("/", headers={"Cookie": f"memindex_ui_{client.port}=made-up"}).status == 401
        assert client.post("/act?token=" + client.token, {"do": "retire", "path": FLAKY}, cookie=False).status == 403


def test_the_token_becomes_a_strict_httponly_cookie_and_leaves_the_address(root: str) -> None:
    with serving(root) as client:
        r = client.get(f"/memory?path={quote(FLAKY)}&token={client.token}", cookie=False)
        assert r.status == 303
        assert r.header("location") == f"/memory?path={quote(FLAKY, safe='')}"
        cookie = r.header("set-cookie")
        parts = [p.strip() for p in cookie.split(";")]
        assert parts[0].startswith(f"memindex_ui_{client.port}=") and client.token not in parts[0]
        assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(parts)
        client.cookie = parts[0]
        assert client.get("/memory?path=" + FLAKY).status == 200
        again = client.get(f"/?token={client.token}")  # signed in already: the token only leaves the address
        assert again.status == 303 and again.header("location") == "/" and again.header("set-cookie") is None


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1", "127.0.0.1:1", "localhost:{other}",
                                  "127.0.0.1.nip.io:{port}", "[::1]:{port}", "0.0.0.0:{port}"])
def test_a_host_header_other_than_this_server_is_refused(page, host: str) -> None:  # type: ignore[no-untyped-def]
    name = host.format(port=page.port, other=page.port + 1)
    for path in ("/", f"/?token={page.token}", "/static/style.css"):
        r = page.get(path, headers={"Host": name})
        assert r.status == 403, (name, path)
        assert "Flaky" not in r.text and r.header("set-cookie") is None
    assert page.get("/", headers={"Host": f"localhost:{page.port}"}).status == 200


def test_no_cors_header_ever(page) -> None:  # type: ignore[no-untyped-def]
    evil = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    answers = [page.request("OPTIONS", "/act", headers=evil), page.get("/", headers=evil), page.get("/static/style.css", headers=evil),
               page.get("/?q=flaky", headers=evil)]
    assert answers[0].status == 405
    for r in answers:
        assert not [k for k, _ in r.headers if k.lower().startswith("access-control-")]
        assert "script-src" not in (r.header("content-security-policy") or "x")  # default-src 'none': no script at all
        assert r.header("x-frame-options") == "DENY" and r.header("x-content-type-options") == "nosniff"


def test_a_cross_site_post_without_the_csrf_token_is_refused(page, root: str) -> None:  # type: ignore[no-untyped-def]
    before = Path(root, FLAKY).read_bytes()
    fields = {"do": "retire", "path": FLAKY}
    other_port = f"http://127.0.0.1:{page.port + 1}"  # same site as the page (cookies go there), another origin
    for headers in ({"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, {"Origin": other_port, "Sec-Fetch-Site": "same-site"},
                    {}):  # even from the page itself: no token, no write
        assert page.post("/act", fields, headers=headers).status == 403
    good = form(page.get(f"/act?do=retire&path={FLAKY}").text, "/act")
    assert page.post("/act", {**good, "csrf": "wrong"}).status == 403
    assert page.post("/act", good, headers={"Origin": "http://evil.example"}).status == 403  # the token alone is not enough
    assert page.post("/act", good, headers={"Sec-Fetch-Site": "cross-site"}).status == 403
    assert page.request("POST", "/act", body=json.dumps(good).encode(), headers={"Content-Type": "application/json"}).status == 415
    assert Path(root, FLAKY).read_bytes() == before
    assert page.get(f"/act?do=retire&path={FLAKY}&csrf={good['csrf']}").status == 200  # a GET never writes
    assert Path(root, FLAKY).read_bytes() == before


def test_read_only_refuses_every_write(root: str) -> None:
    before = {p: p.read_bytes() for p in Path(root).rglob("*.json")}
    with serving(root, read_only=True) as client:
        client.login()
        shown = client.get("/memory?path=" + FLAKY).text
        assert "read-only" in shown and "do=retire" not in shown
        fields = form(client.get(f"/act?do=retire&path={FLAKY}").text, "/act")  # the form's own token
        for action in ("retire", "archive", "update", "merge", "keep", "restore", "unarchive"):
            r = client.post("/act", {**fields, "do": action, "into": "decisions/ulid-shipment-ids.json", "title": "x"})
            assert r.status == 403 and "read-only" in r.text, action
        assert client.post("/review/refresh", {"csrf": fields["csrf"]}).status == 403
    assert {p: p.read_bytes() for p in Path(root).rglob("*.json")} == before


def test_a_hostile_title_renders_as_text_with_its_lookalikes_shown(page, root: str) -> None:  # type: ignore[no-untyped-def]
    for path in ("/memory?path=decisions/hostile-title.json", "/?q=alert+script", "/?category=decision", "/pictures"):
        html = page.get(path).text
        assert "<script" not in html.lower() and "<img" not in html
        if path != "/pictures":
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, path
            assert "U+FF1C" in html and "U+FF1E" in html and "\uff1c" not in html, path
            assert "U+3008" in html and "U+202E" in html and "U+200B" in html and "\u202e" not in html
    html = page.get("/memory?path=decisions/hostile-title.json").text
    title = html.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "<" not in title and "U+FF1C" in title  # no markup inside <title>, marks as text
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "U+2066" in html


def test_paths_stay_inside_the_store(page, root: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"title": "outside the store", "category": "decision"}))
    os.symlink(outside, Path(root, "decisions", "link-out.json"))
    for given in ("../../etc/passwd", "/etc/passwd", "decisions/../../../etc/passwd", "decisions/link-out.json",
                  str(outside), "@../../etc/passwd#x", "@/etc/passwd#x", "docs/../../x.md#a", "..%2F..%2Fetc%2Fpasswd"):
        for url in (f"/memory?path={quote(given, safe='')}", f"/act?do=retire&path={quote(given, safe='')}"):
            r = page.get(url)
            assert r.status in (400, 404), (given, r.status)
            assert "outside the store" not in r.text and "root:" not in r.text
    assert page.get("/static/../app.py").status == 404 and page.get("/static/%2e%2e/app.py").status == 404
    assert page.get("/shown/session?name=" + quote("../../../etc/passwd")).status == 404


# --- what the pages give --------------------------------------------------------------------


def test_search_lists_what_memindex_search_lists(page, root: str) -> None:  # type: ignore[no-untyped-def]
    cli = run_cli("--root", root, "search", "--json", "--limit", "50", "flaky", "CI")
    want = [h["path"] for h in json.loads(cli.stdout)]
    html = page.get("/?q=flaky+CI").text
    got = [row.split('<div class="path">', 1)[1].split("</div>", 1)[0] for row in html.split('<td class="title">')[1:]]
    assert want and got == want


def test_browse_filters(page, root: str) -> None:  # type: ignore[no-untyped-def]
    runbooks = page.get("/?category=runbook").text
    assert "Flaky CI" in runbooks and "Chose NATS" not in runbooks
    tagged = page.get("/?tag=postgresql").text
    assert "Flaky CI" in tagged and "Conventional" not in tagged
    assert "Flaky CI" in page.get("/?file=testdb.go").text and "Flaky CI" not in page.get("/?file=nothing-names-this").text
    assert "0 rows" in page.get("/?status=archived").text
    assert "Flaky CI" not in page.get("/?from=2030-01").text and "Flaky CI" in page.get("/?to=2026-09-04").text
    assert page.get("/?category=nope").status == 400 and page.get("/?page=x").status == 400
    write_mem(root, "decision", "from-an-adr", "Imported from an ADR", source={"kind": "adr", "path": "docs/adr/0001-x.md"})
    imported = page.get("/?source=adr").text
    assert "Imported from an ADR" in imported and "1 row" in imported and "Flaky CI" not in imported
    assert "Flaky CI" in page.get("/?source=none").text and "Imported from an ADR" not in page.get("/?source=none").text
    assert '<span class="badge src">adr</span>' in page.get("/?category=decision").text


def test_try_a_prompt_gives_explains_answer(page, root: str) -> None:  # type: ignore[no-untyped-def]
    answer = json.loads(run_cli("--root", root, "explain", "--json", PROMPT).stdout)
    assert answer["injected"]
    html = page.get("/shown?prompt=" + quote(PROMPT)).text
    injected = html.split('<ol id="injected">', 1)[1].split("</ol>", 1)[0]
    assert [p.split("</code>")[0] for p in injected.split('<code class="path">')[1:]] == answer["injected"]
    table = html.split('id="considered"', 1)[1].split("</table>", 1)[0]
    rows = table.split('<tr class="')[1:]
    assert len(rows) == len(answer["considered"])
    import html as html_mod

    for d in answer["considered"]:
        row = next(r for r in rows if f'<div class="path">{d["path"]}</div>' in r)
        assert row.startswith("kept" if d["kept"] else "dropped")
        assert d["rule"] in html_mod.unescape(row)


def test_retire_from_the_page_then_restore(page, root: str) -> None:  # type: ignore[no-untyped-def]
    fields = form(page.get(f"/act?do=retire&path={FLAKY}").text, "/act")
    assert fields["expect"]
    r = page.post("/act", {**fields, "reason": "replaced by a healthcheck"})
    assert r.status == 303 and r.header("location") == f"/memory?path={quote(FLAKY, safe='')}&done=retire"
    assert _status(root, FLAKY) == "retired"
    assert "Flaky CI: integration" not in page.get("/?q=flaky+CI+postgres").text
    retired = page.get(r.header("location")).text
    undo = links(retired, r"do=restore")
    assert undo
    fields = form(page.get(undo[0]).text, "/act")
    assert page.post("/act", fields).status == 303
    assert _status(root, FLAKY) == "active"
    assert "Flaky CI: integration" in page.get("/?q=flaky+CI+postgres").text
    history = json.loads(Path(root, FLAKY).read_text())["changes"]
    assert "replaced by a healthcheck" in json.dumps(history) or len(history) >= 2


def test_a_file_changed_since_the_page_is_not_overwritten(page, root: str) -> None:  # type: ignore[no-untyped-def]
    fields = form(page.get(f"/act?do=update&path={FLAKY}").text, "/act")
    data = json.loads(Path(root, FLAKY).read_text())
    data["title"] = "Edited elsewhere meanwhile"
    Path(root, FLAKY).write_text(json.dumps(data, indent=2))
    r = page.post("/act", {**fields, "title": "Edited on the page"})
    assert r.status == 409 and "Edited elsewhere meanwhile" in r.text
    assert json.loads(Path(root, FLAKY).read_text())["title"] == "Edited elsewhere meanwhile"


def test_update_through_the_write_path(page, root: str) -> None:  # type: ignore[no-untyped-def]
    fields = form(page.get(f"/act?do=update&path={FLAKY}").text, "/act")
    r = page.post("/act", {**fields, "title": "Flaky CI: wait for Postgres twice", "tags": "ci, postgresql",
                           "change_summary": "retitled from the page"})
    assert r.status == 303
    data = json.loads(Path(root, FLAKY).read_text())
    assert data["title"] == "Flaky CI: wait for Postgres twice" and data["tags"] == ["ci", "postgresql"]
    assert data["changes"][-1]["summary"] == "retitled from the page"
    secret = form(page.get(f"/act?do=update&path={FLAKY}").text, "/act")
    r = page.post("/act", {**secret, "title": "key AKIAIOSFODNN7EXAMPLE here"})
    assert r.status == 400 and "AKIAIOSFODNN7EXAMPLE" not in Path(root, FLAKY).read_text()


def test_merge_and_keep_from_the_review_queue(page, root: str) -> None:  # type: ignore[no-untyped-def]
    write_mem(root, "decision", "ulid-ids-again", "ULID shipment ids, again", tags=["ids", "extra-tag"])
    fields = form(page.get("/act?do=merge&path=decisions/ulid-ids-again.json&into=decisions/ulid-shipment-ids.json").text, "/act")
    assert fields["into"] == "decisions/ulid-shipment-ids.json"
    assert page.post("/act", fields).status == 303
    assert _status(root, "decisions/ulid-ids-again.json") == "retired"
    assert "extra-tag" in json.loads(Path(root, "decisions/ulid-shipment-ids.json").read_text())["tags"]
    page.post("/review/refresh", {"csrf": fields["csrf"]})
    health = page.get("/health").text
    assert 'id="doctor"' in health or "running the checks" in health
    assert 'id="queue"' in health or "Nothing to review" in health


def test_the_use_log_per_session(page, root: str) -> None:  # type: ignore[no-untyped-def]
    from memindex import usage

    usage.record_prompt(root, "session-one", "why is CI flaky", [(FLAKY, "P(relevant) 0.91")],
                        [("decisions/ulid-shipment-ids.json", "P(relevant) 0.12, under min_confidence 0.50")])
    usage.record_opens(root, "session-one", [("tool-1", "read", FLAKY)])
    listing = page.get("/shown").text
    name = "s-" + __import__("memindex.runtime", fromlist=["name_hash"]).name_hash(b"session-one")
    assert name in listing
    one = page.get(f"/shown/session?name={name}").text
    assert "Flaky CI: integration tests fail before Postgres is ready" in one and "P(relevant) 0.91" in one
    assert "Use ULID" in one or "ulid" in one.lower()
    assert "under min_confidence 0.50" in one and "opened (read)" in one
    assert page.get("/shown/session?name=s-0000000000000000").status == 404
    memory = page.get("/memory?path=" + FLAKY).text
    assert "shown 1 times" in memory and "opened 1" in memory
    assert "Injections and opens" in page.get("/pictures").text


def test_every_page_renders(page, root: str) -> None:  # type: ignore[no-untyped-def]
    for path in ("/", "/?page=2", "/?sort=title", "/?kind=memories", "/?source=none", "/sessions", "/sessions?all=1",
                 "/health", "/health?kept=1", "/pictures", "/shown", "/memory?path=" + quote(".claude/memory/" + FLAKY),
                 "/act?do=keep&path=" + FLAKY, "/act?do=archive&path=" + FLAKY):
        r = page.get(path)
        assert r.status == 200, (path, r.text[:500])
        assert r.header("content-type").startswith("text/html") and "server-timing" in {k.lower() for k, _ in r.headers}
    assert "Session: Cloud SQL upgrade to PostgreSQL 16" in page.get("/sessions").text
    assert page.get("/act?do=explode&path=" + FLAKY).status == 400
    memory = page.get("/memory?path=" + FLAKY).text
    assert "Wait strategy updated for Postgres 16" in memory  # its `changes`


def test_a_document_section_and_its_file(project: Path, root: str) -> None:
    adr = project / "docs" / "adr"
    adr.mkdir(parents=True)
    (adr / "0001-use-ulids.md").write_text("# Use ULIDs for shipments\n\n## Status\n\nAccepted\n\n## Decision\n\n"
                                           "Shipments get ULIDs, sortable by time.\n\n## Consequences\n\nIds are 26 characters.\n")
    (Path(root) / "memory-config.json").write_text(json.dumps({"documents": {"paths": {"docs/adr": "adr"}}}))
    with serving(root) as client:
        client.login()
        found = client.get("/?kind=documents").text
        link = links(found, r"0001-use-ulids")
        assert link, found[:2000]
        html = client.get(link[0]).text
        assert "document (adr)" in html and "Shipments get ULIDs" in html and "Ids are 26 characters" in html
        assert "do=retire" not in html


def test_git_history_of_a_memory(project: Path, root: str) -> None:
    if shutil.which("git") is None:
        pytest.skip("no git")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "memories: the first ones"]):
        subprocess.run(["git", *cmd], cwd=project, env=env, check=True, capture_output=True)
    with serving(root) as client:
        client.login()
        html = client.get("/memory?path=" + FLAKY).text
        assert "memories: the first ones" in html and 'id="git"' in html


# --- the command ----------------------------------------------------------------------------


def test_memindex_ui_prints_its_address_serves_and_stops_on_ctrl_c(project: Path) -> None:
    started = time.monotonic()
    proc = subprocess.Popen(cli_cmd("--root", str(project), "ui", "--no-open"), env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = proc.stdout.readline()
        took = time.monotonic() - started
        port, token = address_of(line)
        from uikit import Client

        client = Client(port, token)
        client.login()
        assert "Flaky CI" in client.get("/").text
        assert took < 15  # the budget (1.5 s) is measured by scripts/bench_ui.py on a quiet machine
        root = project / ".claude" / "memory"
        marker = root / WATCH_MARKER
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:  # its watcher starts after the first page
            time.sleep(0.1)
        assert marker.exists()
        data = json.loads((root / FLAKY).read_text())
        data["title"] = "Edited in place while the page is open"
        (root / FLAKY).write_text(json.dumps(data, indent=2))  # in place: no folder's mtime moves
        assert "Edited in place while the page is open" in client.get("/").text  # what is on disk is what is shown
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        assert proc.stdout.read() == ""  # one line on stdout, nothing more
        assert not marker.exists()  # the watcher let the root go
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_memindex_ui_refuses_a_port_in_use(project: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        r = run_cli("--root", str(project), "ui", "--no-open", "--port", str(taken.getsockname()[1]), timeout=30)
    assert r.returncode == 2 and "cannot listen on 127.0.0.1" in r.stderr and r.stdout == ""


@pytest.mark.parametrize("missing", ["jinja2", "uvicorn", "starlette"])
def test_without_the_ui_extra_memindex_ui_says_how_to_get_it(project: Path, missing: str) -> None:
    code = (f"import sys; sys.modules[{missing!r}] = None; from memindex.cli.main import main; "
            f"sys.exit(main(['--root', {str(project)!r}, 'ui', '--no-open']))")
    r = subprocess.run([sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert "pip install 'memindex[ui]'" in r.stderr and "Traceback" not in r.stderr


def test_visible_marks_what_the_hook_escapes() -> None:
    from memindex.text.render import unsafe_characters
    from memindex.ui.templating import visible

    assert str(visible("a<b & \"c\"")) == "a&lt;b &amp; &#34;c&#34;"
    assert str(visible("line\nnext\ttab")) == "line\nnext\ttab"
    marked = str(visible("x\u2028y\ufeffz\uff1c"))
    assert marked == "x<span class=cp>U+2028</span>y<span class=cp>U+FEFF</span>z<span class=cp>U+FF1C</span>"
    every = "".join(chr(cp) for cp in unsafe_characters() if cp not in (9, 10, 13))
    out = str(visible(every))
    assert not any(ch in out for ch in every) and out.count("U+") == len(every)
