"""The Stop-hook triage's learned scorer (memindex/capture/score.py): the shipped weights are
what scripts/train_triage.py produces, what it reads is the speakers' prose only, the rules
stay its features, and the hook's guards (once per topic, off switch, no regex engine on a
bland turn) hold with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memindex.capture import score, triage
from memindex.capture.triage import findings, scored
from memindex_dev.evaluation.sets import LOCOMO_JSON

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # a whole training run: .ci/run runs it in its own step
@pytest.mark.skipif(not LOCOMO_JSON.exists(), reason="LoCoMo (../shared/data/locomo) is part of the training data")
def test_the_shipped_model_is_what_the_training_script_produces() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import train_triage
    finally:
        sys.path.remove(str(REPO / "scripts"))
    shipped, rows, _ = train_triage.build()
    assert Path(score.MODEL_FILE).read_text() == json.dumps(shipped, indent=1, sort_keys=True) + "\n"
    assert set(shipped["weights"]) == set(rows[0]["x"])  # every feature the hook computes has its weight
    assert all(r["part"] == "dev" or r["set"] != "triage_written" for r in rows)
    held = {r["set"] for r in rows if r["part"] == "held-out"}
    assert held == {"triage", "triage2", "triage3", "triage4", "locomo"}  # every set keeps a slice the scorer never trained on
    assert {r["group"] for r in rows if r["set"] == "locomo" and r["part"] == "dev"} == {f"locomo/c{c}" for c in range(5)}
    assert 0.3 <= shipped["threshold"] <= 0.9 and shipped["enabled"] is True


def test_cue_words_in_code_quotes_and_logs_are_not_the_speakers_words() -> None:
    plain = score.features(["let's go with postgres, we decided"], ["ok"], [], "", "", [])
    fenced = score.features(["```\nlet's go with postgres, we decided\n```"], ["ok"], [], "", "", [])
    inline = score.features(["`let's go with postgres, we decided`"], ["ok"], [], "", "", [])
    quoted = score.features(["> let's go with postgres, we decided"], ["ok"], [], "", "", [])
    assert plain["u_decision"] > 0
    assert fenced["u_decision"] == inline["u_decision"] == quoted["u_decision"] == 0
    assert fenced["u_code"] > 0.5 and plain["u_code"] == 0


def test_a_fix_confirmed_and_a_cause_found_are_features_a_question_or_a_complaint_is_not() -> None:
    fix = "Pointed `serial.port` at the by-id path and restarted the container."
    confirmed = score.features(["all 23 devices back, thx"], [], [], fix, "zigbee2mqtt won't start", [], 0, 2)
    assert confirmed["confirm"] == 1.0
    for reply in ("still broken, thx", "all devices back?", "not back yet", "so what did you change in the config and why"):
        assert score.features([reply], [], [], fix, "zigbee2mqtt won't start", [], 0, 2)["confirm"] == 0.0, reply
    assert score.features(["all 23 devices back, thx"], [], [], "", "", [], 0, 0)["confirm"] == 0.0  # nothing was done before
    cause = ["jackd wasn't getting realtime priority; added `@audio - rtprio 95` to limits.d."]
    assert score.features(["constant xruns in jack"], cause, [], "", "", [], 1)["cause_fixed"] == 1.0
    assert score.features(["constant xruns in jack"], ["Looking at the jack logs next."], [], "", "", [], 1)["cause_fixed"] == 0.0


def test_questions_and_hypotheticals_score_lower_than_the_statement() -> None:
    said = score.features(["we'll use argon2id for password hashing from now on, bcrypt is out"], ["Switched the hasher."], [], "", "", [])
    asked = score.features(["should we use argon2id for password hashing from now on instead of bcrypt?"], ["Either works."], [], "", "", [])
    assert score.probability(asked) < score.probability(said)


def test_the_rules_findings_are_features_and_the_scorer_can_overrule_them() -> None:
    user, assistant = ["Let's go with Postgres over MySQL for the events store."], ["Postgres it is."]
    found = findings(user, assistant)
    assert [f.category.name for f in found] == ["decision"]
    feats = score.features(user, assistant, [], "", "", [f.category.name for f in found])
    assert feats["rule_any"] == feats["rule_decision"] == 1.0
    assert scored(found, user, assistant, []) == found  # the rules' finding, with its kind and topic
    strict = {**score.model(), "threshold": 1.01}
    assert score.probability(feats, strict) < strict["threshold"]


def test_off_switch_leaves_the_rules_alone(monkeypatch) -> None:
    user, assistant = ["ok, argon2id it is"], ["Done."]
    found = findings(user, assistant)
    monkeypatch.setattr(score, "_MODEL", {**score.model(), "enabled": False})
    assert scored(found, user, assistant, []) is found


def _finding_of_the_scorer_alone(monkeypatch) -> tuple[list[str], list[str]]:
    """A turn no rule matches, with the threshold just under its probability: the scorer's own finding."""
    user = ["the staging database is shared with the data team so destructive migrations need their sign-off"]
    assistant = ["Added a guard in `scripts/migrate.sh` that refuses destructive steps on staging."]
    assert findings(user, assistant) == []
    p = score.probability(score.features(user, assistant, [], "", "", []))
    monkeypatch.setattr(score, "_MODEL", {**score.model(), "threshold": p - 1e-9})
    return user, assistant


def test_a_finding_of_the_scorer_alone_names_a_kind_and_the_users_sentence(monkeypatch) -> None:
    user, assistant = _finding_of_the_scorer_alone(monkeypatch)
    [f] = scored([], user, assistant, [])
    assert f.save_as in score.KINDS and f.loose and f.speaker == "user"
    assert "destructive migrations" in f.topic
    assert "migrate.sh" in f.ids
    reason = triage.reason([f])
    assert f"--category {f.save_as}" in reason and "destructive migrations" in reason


def test_a_finding_of_the_scorer_alone_is_asked_about_once(monkeypatch) -> None:
    user, assistant = _finding_of_the_scorer_alone(monkeypatch)
    state = {"asks": 0, "topics": []}
    assert triage.choose(scored([], user, assistant, []), state)
    again = ["same for the analytics db: destructive migrations on the shared staging database need the data team's sign-off"]
    monkeypatch.setattr(score, "_MODEL", {**score.model(), "threshold": 0.0})
    found = scored([], again, ["Added the same guard."], [])
    assert found and triage.choose(found, state) == []


@pytest.mark.parametrize("user", ["rename the variable please", "what does this function do?"])
def test_a_bland_turn_never_loads_the_regex_engine(user: str) -> None:
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from memindex.capture.triage import findings, scored; "
            f"u, a = [{user!r}], ['Done, renamed it.']; "
            "assert scored(findings(u, a), u, a, []) == []; print('re' in sys.modules)")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False", out


def test_the_shipped_scorer_asks_about_a_deferral_no_rule_names_and_once(tmp_path: Path, monkeypatch) -> None:
    """A turn written for this test (in no set): the rules find nothing, the shipped model
    asks, with the kind it reads; the same turn again in the session is not asked about."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    tmp_path.chmod(0o700)
    user = "ship it as is for the demo, the caching layer can wait until next week"
    assistant = "Left the cache out; noted in TODO.md."
    assert findings([user], [assistant]) == []
    transcript = tmp_path / "t.jsonl"
    lines = [{"type": "user", "message": {"role": "user", "content": user}},
             {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": assistant}]}}]
    transcript.write_text("".join(json.dumps(e) + "\n" for e in lines))
    payload = {"session_id": "scorer-once", "transcript_path": str(transcript), "stop_hook_active": False}
    out = triage.stop_decision(payload, scorer=True)
    assert "--category tech_debt" in json.loads(out)["reason"]
    assert triage.stop_decision(payload, scorer=True) == ""  # the same topic, asked about already
    assert triage.stop_decision({**payload, "session_id": "other", "stop_hook_active": True}, scorer=True) == ""


def test_the_scorer_decides_by_default_and_the_user_may_choose_the_patterns_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`capture.save_prompt_scorer` is on by default; off, the patterns alone decide: the
    same turn gets an ask from the scorer and none from the patterns."""
    from memindex.config import parse_config
    from memindex.hook.session import save_prompt

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    tmp_path.chmod(0o700)
    user = "ship it as is for the demo, the caching layer can wait until next week"
    transcript = tmp_path / "t.jsonl"
    lines = [{"type": "user", "message": {"role": "user", "content": user}},
             {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Left the cache out of `api/server.py`."}]}}]
    transcript.write_text("".join(json.dumps(e) + "\n" for e in lines))
    payload = {"session_id": "scorer-config", "transcript_path": str(transcript), "stop_hook_active": False}
    assert save_prompt(payload, parse_config({"capture": {"save_prompt_scorer": False}})) == ""
    assert "tech_debt" in save_prompt(payload, parse_config({}))


def test_a_repository_config_cannot_turn_the_scorer_on(memory_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It asks more than the patterns: a user who chose the patterns alone keeps them, whatever
    the repository's config says (only the user's own config, or `memindex trust`, may)."""
    from memindex.config import load_config
    from memindex.defaults import CONFIG_FILE

    home = tmp_path / "xdg-config"
    (home / "memindex").mkdir(parents=True)
    (home / "memindex" / "config.json").write_text(json.dumps({"capture": {"save_prompt_scorer": False}}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    (memory_root / CONFIG_FILE).write_text(json.dumps({"capture": {"save_prompt_scorer": True}}))
    cfg = load_config(memory_root)
    # true is the default: no request for more (issue 36, finding 10), so not named as ignored either
    assert cfg["capture.save_prompt_scorer"] is False and cfg.ignored == [] and cfg.notice is None
    (home / "memindex" / "config.json").write_text("{}")
    assert load_config(memory_root)["capture.save_prompt_scorer"] is True  # the default
    (memory_root / CONFIG_FILE).write_text(json.dumps({"capture": {"save_prompt_scorer": False}}))
    assert load_config(memory_root)["capture.save_prompt_scorer"] is False  # doing less is always allowed
