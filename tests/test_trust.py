"""Issue 24, finding 4: a repository's memory-config.json can make memindex do less, never
more. Settings that load or download a model, start a worker or loosen injection
(config.LOOSER) take effect from the user's own config or environment, or after
`memindex trust` for exactly that file (memindex.trust)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_env, write_json, write_mem
from memindex import trust
from memindex.config import DEFAULTS, ENV_CONFIG, LOOSER, SPEC, load_config, looser, user_config_path
from memindex.settings import Setting
from memindex.defaults import CONFIG_FILE
from hookkit import prompt_json, put, run_hook

REPO = Path(__file__).resolve().parent.parent
BEACON = {"semantic": {"enabled": True, "model": "attacker-org/beacon-model"}}
LOOSE = {"retrieval": {"match_strategy": "fts5_bm25", "max_inject": 20, "relative_cutoff": 0.0, "min_coverage": 0.0, "min_relative_coverage": 0.0,
                       "min_prompt_chars": 0}, "semantic": {"max_cosine_gap": 2.0, "min_standout": 0.0}}


def user_config(data: dict) -> Path:
    path = Path(user_config_path())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def cli(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memindex", "--root", str(root), *args],
                          env=env or cli_env(), capture_output=True, text=True, timeout=120)


# --- the rule, as data ---------------------------------------------------------------------------


def _leaf(key: str) -> Setting:
    node: object = SPEC
    for part in key.split("."):
        node = node[part]  # type: ignore[index]
    assert isinstance(node, Setting)
    return node


def test_the_looser_table_names_real_settings_with_a_direction() -> None:
    for key, way in LOOSER.items():
        assert key in DEFAULTS, key
        assert way in ("up", "down", "any"), (key, way)
        leaf = _leaf(key)
        if way != "any":
            assert isinstance(leaf.default, (bool, int, float)) or leaf.kind in (int, float), key
    for key in ("semantic.enabled", "semantic.model", "retrieval.max_inject", "retrieval.relative_cutoff",
                "retrieval.min_coverage", "retrieval.min_relative_coverage", "retrieval.min_prompt_chars",
                "retrieval.tool_anchors", "semantic.max_cosine_gap", "semantic.min_standout"):
        assert key in LOOSER, key
    assert looser("retrieval.max_inject", 4, 3) and not looser("retrieval.max_inject", 2, 3)
    assert looser("retrieval.relative_cutoff", 0.0, 0.7) and not looser("retrieval.relative_cutoff", 0.9, 0.7)
    assert looser("semantic.enabled", True, False) and not looser("semantic.enabled", False, True)
    assert looser("semantic.model", "x/y", DEFAULTS["semantic.model"]) and not looser("watch.debounce_ms", 10, 400)
    # retrieval.min_confidence: unset (the shipped model's threshold) has no direction: any value needs trust
    assert looser("retrieval.min_confidence", 0.0, None) and not looser("retrieval.min_confidence", 0.9, 0.5)


# Settings a project's config may set freely, each with why it cannot make memindex do more
# (load a model, start a worker, reach the network, inject more, delete sooner). A new
# setting must land here or in config.LOOSER: this test makes someone decide.
NEUTRAL = {
    "retrieval.search_limit": "lines `memindex search` prints when asked; injects nothing",
    "retrieval.column_weights.title": "ranking weights; the injection thresholds still apply",
    "retrieval.column_weights.tags": "ranking weights; the injection thresholds still apply",
    "retrieval.column_weights.body": "ranking weights; the injection thresholds still apply",
    "retrieval.column_weights.questions": "ranking weights; the injection thresholds still apply",
    "retrieval.transcript_context.enabled": "reads the user's own transcript to enrich the query; the thresholds still apply",
    "retrieval.transcript_context.max_turns": "how much of the user's transcript enriches the query (0..10)",
    "retrieval.transcript_context.tail_bytes": "bounded read of the user's transcript",
    "retrieval.transcript_context.max_prompt_terms": "which prompts get the transcript's context",
    "retrieval.transcript_context.scan_bytes": "bounded read of the user's transcript",
    "index.lock_timeout_s": "how long a writer waits (bounded 0..3600 s)",
    "semantic.batch_size": "embedding batch size, only when the user turned the channel on",
    "watch.debounce_ms": "the watcher's delay, only when the user runs `memindex watch`",
    "watch.poll_interval_s": "the watcher's polling, only when the user runs `memindex watch`",
    "capture.min_interval_s": "how often a running session's summary is rewritten, locally (bounded)",
    "documents.paths": "the project's own files to index: only paths inside it are kept (config.py, store.paths), "
    "read without following a link out of it, bounded",
    "capture.keep_sessions": "how many captured summaries stay as they are; the others are archived, reversibly (unarchive)",
    "capture.keep_days": "how old a captured summary may get before it is archived, reversibly",
    "capture.older": "fold into a digest or archive alone: either way reversible, nothing deleted",
    "review.unused_min_shown": "when a memory is listed as unused: the queue lists, nothing acts",
    "review.unused_min_sessions": "when a memory is listed as unused: the queue lists, nothing acts",
}


def test_every_setting_is_either_looser_one_way_or_neutral() -> None:
    """retention_days and descriptions only hide or describe; everything else is decided."""
    undecided = sorted(k for k in DEFAULTS if k not in LOOSER and k not in NEUTRAL and not k.startswith("categories."))
    assert undecided == [], "add each to config.LOOSER (which way does more) or to NEUTRAL here (why it cannot)"
    assert not set(LOOSER) & set(NEUTRAL)


def test_a_project_config_tightens_but_cannot_loosen(memory_root: Path) -> None:
    write_json(memory_root, CONFIG_FILE, {"retrieval": {**LOOSE["retrieval"], "max_inject": 1, "tool_anchors": True},
                                          "semantic": {**LOOSE["semantic"], **BEACON["semantic"]}})
    cfg = load_config(memory_root)
    assert cfg["retrieval.max_inject"] == 1  # less: applied
    for key in ("retrieval.relative_cutoff", "retrieval.min_coverage", "retrieval.tool_anchors", "semantic.enabled",
                "semantic.model", "semantic.max_cosine_gap", "semantic.min_standout", "retrieval.min_prompt_chars"):
        assert cfg[key] == DEFAULTS[key], key
        assert key in cfg.ignored
    assert cfg.trust == trust.UNTRUSTED
    assert [w for w in cfg.warnings if "memindex trust" in w] == [cfg.notice]
    assert "semantic.enabled" in cfg.notice and "semantic.model" in cfg.notice


def test_the_user_config_and_the_environment_may_loosen(memory_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user_config({"semantic": {"enabled": True, "model": "builtin:hashing"}, "retrieval": {"max_inject": 5}})
    cfg = load_config(memory_root)
    assert cfg["semantic.enabled"] is True and cfg["semantic.model"] == "builtin:hashing" and cfg["retrieval.max_inject"] == 5
    write_json(memory_root, CONFIG_FILE, {"retrieval": {"max_inject": 4}, "semantic": {"model": "attacker-org/x"}})
    cfg = load_config(memory_root)  # the project may go below the user's 5, not change the model
    assert cfg["retrieval.max_inject"] == 4 and cfg["semantic.model"] == "builtin:hashing" and cfg.ignored == ["semantic.model"]
    monkeypatch.setenv(ENV_CONFIG, json.dumps({"retrieval": {"max_inject": 7}}))
    cfg = load_config(memory_root)  # the environment is the user's last word
    assert cfg["retrieval.max_inject"] == 7
    monkeypatch.setenv(ENV_CONFIG, "{not json")
    assert any(ENV_CONFIG in w for w in load_config(memory_root).warnings)


def test_trust_is_per_root_and_per_content_and_revocable(memory_root: Path) -> None:
    write_json(memory_root, CONFIG_FILE, LOOSE)
    assert load_config(memory_root)["retrieval.max_inject"] == 3
    proc = cli(memory_root, "trust")
    assert proc.returncode == 0 and "trusted" in proc.stdout, proc.stderr
    record = json.loads(Path(trust.trust_path()).read_text())
    assert os.path.realpath(memory_root) in record["roots"]
    assert not str(trust.trust_path()).startswith(str(memory_root.parent.parent))  # outside the repository
    assert oct(Path(trust.trust_path()).stat().st_mode & 0o777) == "0o600"
    cfg = load_config(memory_root)
    assert cfg["retrieval.max_inject"] == 20 and cfg["retrieval.min_coverage"] == 0.0 and cfg.ignored == [] and cfg.trust == trust.TRUSTED
    assert "trusted" in cli(memory_root, "trust", "--status").stdout
    assert "memory" in cli(memory_root, "trust", "--list").stdout
    write_json(memory_root, CONFIG_FILE, {**LOOSE, **BEACON})  # an edit (a pull) needs trust again
    cfg = load_config(memory_root)
    assert cfg.trust == trust.CHANGED and cfg["semantic.enabled"] is False and cfg["retrieval.max_inject"] == 3
    assert "again" in cfg.notice
    assert cli(memory_root, "sync").returncode == 0
    status = cli(memory_root, "status")
    assert "changed since it was trusted" in status.stdout and "memindex trust" in status.stderr
    assert status.stderr.count("memindex trust") == 1  # reported once
    assert cli(memory_root, "trust").returncode == 0
    assert load_config(memory_root)["semantic.enabled"] is True
    assert cli(memory_root, "trust", "--revoke").returncode == 0
    assert load_config(memory_root)["semantic.enabled"] is False
    json.loads(cli(memory_root, "trust", "--status", "--json").stdout)["ignored"]


def test_thresholds_at_zero_change_nothing_the_hook_injects_until_trusted(hook_project: Path) -> None:
    root = hook_project / ".claude" / "memory"
    for i in range(8):  # weak matches the defaults keep out
        put(root, "runbook", f"weak-{i}", f"Webhook retry note {i}", ["misc"], "webhook retries")
    from memindex.config import Config
    from memindex.index.sync import sync

    sync(root, Config())
    prompt = prompt_json(hook_project, "stripe webhooks keep failing with a 400 signature error in staging")
    before = run_hook(prompt)
    assert "stripe-webhook-signature.json" in before.stdout.decode()
    (root / CONFIG_FILE).write_text(json.dumps(LOOSE))
    after = run_hook(prompt)
    assert after.stdout == before.stdout
    assert after.returncode == 0 and "memindex trust" in after.stderr.decode()  # on stderr, never stdout
    assert "memindex trust" not in after.stdout.decode()
    assert cli(root, "trust").returncode == 0
    trusted = run_hook(prompt)
    assert trusted.stdout.decode().count("\n- [") > before.stdout.decode().count("\n- [")  # the control: it does act


def test_the_refusal_leads_the_hook_s_stderr_whatever_else_the_config_says(hook_project: Path) -> None:
    """Under the default policy every rule threshold of a loose config is also inapplicable
    (a warning of its own); the hook's stderr line is bounded, so those pushed the refusal
    past its end (found by `scripts/stress.py`): it comes first now."""
    root = hook_project / ".claude" / "memory"
    loose = {"retrieval": {k: v for k, v in LOOSE["retrieval"].items() if k != "match_strategy"}, "semantic": LOOSE["semantic"]}
    (root / CONFIG_FILE).write_text(json.dumps(loose))
    out = run_hook(prompt_json(hook_project, "stripe webhooks keep failing with a 400 signature error in staging"))
    err = out.stderr.decode()
    assert out.returncode == 0 and "memindex trust" in err, err
    assert err.index("memindex trust") < err.index("fts5_bm25 only")


# --- the beacon: no memindex process reaches a hub for an untrusted config -----------------------


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("huggingface_hub")
    from hubfake import FakeHub

    fake = FakeHub({})
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("MEMINDEX_CACHE_DIR", str(tmp_path / "memindex-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield fake
    fake.close()


def _every_process(project: Path) -> None:
    """The SessionStart hook (and the sync and worker it starts), a prompt, sync, search."""
    from stresskit.hostile import wait_background

    root = project / ".claude" / "memory"
    payload = json.dumps({"cwd": str(project), "session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"})
    env = cli_env()
    subprocess.run([sys.executable, "-I", "-S", str(REPO / "hooks" / "memindex_hook.py"), "session-start"],
                   input=payload.encode(), env=env, capture_output=True, timeout=30)
    run_hook(prompt_json(project, "which database do we use for the ledger and why"), env=env)
    time.sleep(0.5)
    wait_background(str(project), budget=30)
    cli(root, "sync", env=env)
    cli(root, "search", "ledger database", env=env)
    wait_background(str(project), budget=30)


def test_a_beacon_config_never_reaches_the_hub(hub, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    root = project / ".claude" / "memory"
    write_mem(root, "decision", "ledger", "Use Postgres for the ledger", ["db"], {"decision": "postgres for the ledger"})
    write_json(root, CONFIG_FILE, BEACON)
    _every_process(project)
    assert hub.requests == []


def test_the_same_setting_in_the_user_config_does_reach_it(hub, tmp_path: Path) -> None:
    """The control: the test above can see a request when one is made."""
    project = tmp_path / "proj"
    root = project / ".claude" / "memory"
    write_mem(root, "decision", "ledger", "Use Postgres for the ledger", ["db"], {"decision": "postgres for the ledger"})
    user_config(BEACON)
    proc = cli(root, "sync")
    assert any("attacker-org/beacon-model" in path for _, path in hub.requests), proc.stderr


# --- issue 36, finding 10: the config `memindex init` writes, and values equal to the default ------------


def test_init_s_config_sets_nothing_and_never_trips_the_trust_rule(tmp_path: Path) -> None:
    """Finding 10: the memory-config.json `init` wrote set semantic.model (and every other
    setting) to its default; a user who turned the semantic channel on in their own config
    then got "ignored semantic.model ... run `memindex trust`" on every command and prompt,
    for a value memindex wrote itself. The file now only shows the settings (ignored `_` keys)."""
    from memindex.config import parse_config
    from memindex.store.scaffold import init_project

    project = tmp_path / "proj"
    project.mkdir()
    root = init_project(project).root
    written = json.loads((root / CONFIG_FILE).read_text())
    assert parse_config(written).given == set()  # shows every setting, sets none
    shown = {k.lstrip("_") for section in written.values() if isinstance(section, dict) for k in section}
    assert {"max_inject", "enabled", "model", "location"} <= shown
    user_config({"semantic": {"enabled": True, "model": str(tmp_path / "my-model")}, "retrieval": {"max_inject": 1},
                 "capture": {"location": "shared"}})
    cfg = load_config(root)
    assert cfg.warnings == [] and cfg.notice is None and cfg.more == [] and cfg.trust is None
    assert cfg["semantic.model"] == str(tmp_path / "my-model") and cfg["retrieval.max_inject"] == 1
    assert cfg["capture.location"] == "shared"
    for args in (("sync",), ("status",)):
        done = cli(root, *args)
        assert done.returncode == 0 and done.stderr == "", done.stderr


def test_a_project_value_equal_to_the_default_is_no_request_for_more(memory_root: Path) -> None:
    """A config written by an older `init` (every default, as values): nothing refused, nothing
    said, and where the user's own settings do less or choose otherwise, theirs stand; a real
    request for more is still refused and named."""
    user_config({"semantic": {"enabled": True, "model": "/opt/models/minilm"}, "retrieval": {"max_inject": 1},
                 "capture": {"location": "shared"}})
    write_json(memory_root, CONFIG_FILE, {"retrieval": {"max_inject": 3, "tool_anchors": False},
                                          "semantic": {"enabled": False, "model": DEFAULTS["semantic.model"]},
                                          "capture": {"location": "local"}})
    cfg = load_config(memory_root)
    assert cfg.notice is None and cfg.more == [] and cfg.ignored == []
    assert cfg["semantic.model"] == "/opt/models/minilm" and cfg["retrieval.max_inject"] == 1
    assert cfg["capture.location"] == "shared"
    assert cfg["semantic.enabled"] is False  # less: still the project's to decide
    write_json(memory_root, CONFIG_FILE, {"retrieval": {"max_inject": 3}, "semantic": {"model": "attacker-org/x"}})
    cfg = load_config(memory_root)
    assert cfg.ignored == ["semantic.model"] and "retrieval.max_inject" not in cfg.notice
    assert cfg["semantic.model"] == "/opt/models/minilm" and cfg["retrieval.max_inject"] == 1


def test_an_older_init_s_defaults_never_override_the_user_s_own_settings(memory_root: Path) -> None:
    """The file an older `init` wrote holds every default as a value: `semantic.enabled: false`
    there turned off the channel the user had turned on in their own config, for every project
    set up before. In such a file (known by its comment) a default is init's, not the
    project's; a value someone changed there still applies as the project's."""
    from memindex.config import OLD_TEMPLATE_COMMENT

    user_config({"semantic": {"enabled": True, "model": "/opt/models/minilm"}, "retrieval": {"max_inject": 5}})
    old = {"_comment": OLD_TEMPLATE_COMMENT + ", and the default applies. ...",
           "retrieval": {"enabled": True, "max_inject": 3, "tool_anchors": False}, "semantic": {"enabled": False,
           "model": DEFAULTS["semantic.model"], "idle_exit_s": 1800}, "index": {"lock_timeout_s": 10.0}}
    write_json(memory_root, CONFIG_FILE, old)
    cfg = load_config(memory_root)
    assert cfg.warnings == [] and cfg.more == []
    assert cfg["semantic.enabled"] is True and cfg["semantic.model"] == "/opt/models/minilm" and cfg["retrieval.max_inject"] == 5
    write_json(memory_root, CONFIG_FILE, {**old, "retrieval": {"max_inject": 2}})  # changed by the project: its own
    assert load_config(memory_root)["retrieval.max_inject"] == 2
    write_json(memory_root, CONFIG_FILE, {k: v for k, v in old.items() if k != "_comment"})  # someone's own file
    cfg = load_config(memory_root)
    assert cfg["semantic.enabled"] is False and cfg["retrieval.max_inject"] == 3  # less: the project's to decide
