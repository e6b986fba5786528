"""The Stop-hook triage's default (the scorer, capture/score.py) on what is not coding work,
and its once-per-topic guard on restatements (capture/triage.py `same_topic`): each case
in a session that asked or saved already, and the same turn in a fresh session, where it is
asked. The turns are written for these tests (in no judged set)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memindex.capture import score
from memindex.capture.triage import stop_decision


@pytest.fixture()
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "xdg"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


class Session:
    """A Claude Code transcript grown turn by turn, with a stop after each (and Claude
    Code's feedback entry and the model's answer after a block)."""

    def __init__(self, path: Path, scorer: bool = True) -> None:
        self.path, self.scorer, self.n = path, scorer, 0

    def _write(self, entries: list[dict]) -> None:
        with self.path.open("a") as fh:
            for e in entries:
                fh.write(json.dumps(e) + "\n")

    def turn(self, user: str, assistant: str, commands: tuple[str, ...] = ()) -> str:
        entries: list[dict] = [{"type": "user", "message": {"role": "user", "content": user}}]
        for command in commands:
            self.n += 1
            tid = f"toolu_{self.n}"
            entries.append({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command}}]}})
            entries.append({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": "ok"}]}})
        entries.append({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": assistant}]}})
        self._write(entries)
        out = stop_decision({"session_id": self.path.name, "transcript_path": str(self.path)}, self.scorer)
        if out:
            self._write([{"type": "user", "isMeta": True, "message": {"role": "user", "content": "Stop hook feedback:\n" + json.loads(out)["reason"]}},
                         {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Saved it."}]}}])
        return out

    def stop_as(self, session: str) -> str:
        """The latest stop again, as a session with no state of its own (nothing asked yet)."""
        return stop_decision({"session_id": session, "transcript_path": str(self.path)}, self.scorer)


# --- what is not coding work -------------------------------------------------------------

CHAT = [  # friends talking (LoCoMo's kind of conversation): decisions, fixes and rules of a life, not a project
    ("Ava: I finally decided to adopt a puppy! We went with the beagle over the corgi.", "Ben: That's amazing, Ava! Beagles are so sweet."),
    ("Ava: Thanks Ben, the new routine works great now, no more chewed shoes.", "Ben: Glad it worked out! Keep it up."),
    ("Ava: Don't forget, I always go running on Sundays, so never plan brunch before noon.", "Ben: Noted, I'll remember that!"),
    ("Ava: We'll deal with the garden later, it can wait until spring.", "Ben: Sounds like a plan."),
]


@pytest.mark.parametrize("user,assistant", CHAT)
def test_a_chat_that_shows_no_work_gets_no_ask_by_default(user: str, assistant: str, tmp_path: Path, runtime) -> None:
    signs = score.work_signs([user], [assistant], "", "")
    assert not score.at_work(signs), signs
    assert Session(tmp_path / "chat.jsonl").turn(user, assistant) == ""


def test_the_same_kind_of_turn_in_coding_work_is_asked() -> None:
    user, assistant = "ok we decided: go with the Postgres queue over Redis streams", "Switched `jobs/queue.py` to the Postgres queue."
    assert score.at_work(score.work_signs([user], [assistant], "", ""))


@pytest.mark.parametrize("text,code", [
    ("LeBron scored 40 on the 4th, what a 5k crowd, J.K. was there", False),
    ("it`s great, you`re right", False),  # a backtick as an apostrophe
    ("Mr. McGee's 3-year-old loves YouTube", False),
    ("keep bf16 for the eval", True),
    ("see src/app/main.py", True),
    ("the retry_count setting", True),
    ("commit with --no-verify", True),
    ("call getUserById first", True),
    ("run `make test`", True),
    ("the redis cache", True),
])
def test_work_signs_tell_code_from_chat(text: str, code: bool) -> None:
    assert score.at_work(score.work_signs([text], [], "", "")) is code


def test_a_tool_call_alone_is_work() -> None:
    assert score.at_work(score.work_signs(["ok do it"], ["Done."], "", "", calls=1))
    assert not score.at_work(score.work_signs(["ok do it"], ["Done."], "", ""))


# --- the once-per-topic guard -------------------------------------------------------------

PLAN = ("never auto-approve infra changes. always show me the terraform plan and wait for my ok before any apply",
        "Understood. The plan for `infra/dns.tf`: 3 to add, 1 to change. Should I apply now, or hold it until the "
        "maintenance window?", ("terraform plan",))
APPLY = ("yes apply", "Applied `infra/dns.tf`: 3 added, 1 changed.", ("terraform apply plan.out",))


def test_a_terse_turn_within_the_words_of_a_turn_asked_about_is_not_asked_again(tmp_path: Path, runtime) -> None:
    """"yes apply" after "always show me the plan ... before any apply": it follows the rule
    asked about, in none of that rule's sentence's words; without the session's state (the
    same transcript as a session that asked nothing) it is asked as a pick."""
    s = Session(tmp_path / "plan.jsonl")
    assert "preference" in s.turn(*PLAN)
    assert s.turn(*APPLY) == ""
    assert "decision" in s.stop_as("no-state")


AGAIN = ("hang again after the reboot, same nccl thing. the env var fixed it",
         "Set `NCCL_P2P_DISABLE=1` in `train.sh` again; the job runs.", ("bash train.sh --dry-run",))


def test_a_turn_that_says_it_restates_is_not_asked_in_a_session_that_asked_already(tmp_path: Path, runtime) -> None:
    """"same nccl thing" when the session asked about something (here another kind): the
    subject came up before, asked about or judged not worth an ask; in a fresh session, the
    fix is asked about."""
    s = Session(tmp_path / "again.jsonl")
    assert s.turn("let's go with bf16 for training, fp16 overflows", "Switched `train.py` to bf16.", ("python train.py --steps 10",))
    assert s.turn(*AGAIN) == ""
    assert Session(tmp_path / "fresh.jsonl").turn(*AGAIN) != ""


SAVE = ("memindex save --category decision --data '{\"title\": \"CI installs use uv instead of pip\", "
        "\"text\": \"uv resolves and installs faster than pip in CI\"}'")
UV = ("so from now on uv for installs in CI, pip is out", "Yes, `ci.yml` already uses `uv pip install`.")


def test_a_topic_the_model_saved_on_its_own_is_not_asked_about_later(tmp_path: Path, runtime) -> None:
    """The model saved (its command's words are the topic) in a turn the triage found nothing
    in; the user restating it later is not asked about; in a fresh session it is."""
    s = Session(tmp_path / "saved.jsonl")
    assert s.turn("switch the installs in CI to uv", "Saving that as a decision.", (SAVE,)) == ""
    assert s.turn(*UV) == ""
    assert Session(tmp_path / "fresh.jsonl").turn(*UV) != ""


def test_restatement_words_mark_a_recurrence() -> None:
    from memindex.capture.triage import restatement

    assert restatement(["again that .mod thing on the login node"])[1]
    assert restatement(["same flaky thing in the export tests"])[1]
    assert restatement(["pnpm, not npm. again."])[1]
    assert not restatement(["yes, all devices are connected again, 412 of 412"])[1]  # a fix confirmed, not a restatement
    words, _ = restatement(["always show me the plan before any apply, `terraform destroy` never"])
    assert {"plan", "apply"} <= words and "destroy" not in words  # code is left out


def test_new_topics_of_a_session_are_still_asked(tmp_path: Path, runtime) -> None:
    s = Session(tmp_path / "new.jsonl")
    assert "preference" in s.turn(*PLAN)
    assert s.turn("heads up: the registry rejects images over 2 GB, so the CUDA base image has to stay slim",
                  "Switched `Dockerfile` to the runtime base image: 1.4 GB.", ("docker build .",)) != ""


def test_a_pasted_megabyte_is_read_in_part_and_what_the_user_says_still_counts(tmp_path: Path, runtime) -> None:
    """The triage reads at most TURN_TEXT_CHARS of a prompt (its start and its end): a 1 MB
    log pasted after a decision costs no more than a short turn, and the decision is asked about."""
    from memindex.capture.turn import latest_turn
    from memindex.defaults import TURN_TEXT_CHARS

    log = "ERROR worker_3 failed at src/app/main.py:12 retry_count=3\n" * 18_000
    s = Session(tmp_path / "paste.jsonl")
    out = s.turn("we decided to drop the legacy importer, here is its last log:\n" + log, "Removed `importer/legacy.py`.")
    turn = latest_turn(str(s.path))
    assert len(turn.user[0]) <= TURN_TEXT_CHARS + 1 and turn.user[0].startswith("we decided to drop")
    assert "decision" in out and "drop the legacy importer" in out


def test_a_plain_words_turn_counts_as_work_in_a_session_that_ran_tools(tmp_path: Path, runtime) -> None:
    """A rule stated in plain words ("all new services are written in go") shows no work by
    itself: alone it gets no ask, but in a session whose transcript holds tool calls, even
    beyond the answers the turn reads, it is asked about."""
    rule = ("from now on all new services are written in go", "Understood.")
    assert not score.at_work(score.work_signs([rule[0]], [rule[1]], "", ""))
    assert Session(tmp_path / "alone.jsonl").turn(*rule) == ""
    s = Session(tmp_path / "work.jsonl")
    s.turn("run the tests", "All green.", ("pytest -q",))
    s.turn("thanks", "You're welcome.")
    s.turn("what's next on the list", "The billing service's retries.")
    assert s.turn(*rule) != ""
