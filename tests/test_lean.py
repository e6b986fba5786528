"""The prompt hook's lean path (`tests/test_hook.py` checks what it loads).

Each scan that replaced a regular expression is checked against that expression, and
`memindex.lean` against `json`, on generated text rich in the characters that matter
(separators, markup, whitespace of every kind, letters and digits outside ASCII, case
foldings such as the long s and the Kelvin sign).
"""

from __future__ import annotations

import json
import math
import pickle
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memindex import lean
from memindex.policy.prompt import intents
from memindex.store.paths import FileStat
from memindex.policy.prompt import files_named
from memindex.text.words import _INDEX_MARKUP, Term, _without_markup, sanitize_tag, words
from memindex.policy.transcript import _INJECTED_LINE, injected_paths

# Characters each scan must treat exactly as its pattern does.
TRICKY = (
    "aZ09._-/ #[]:>\n\t\r\x0b\x0c\x1c\x85\xa0\u2028\u3000" "éßſKİıµ²½٣中あ가\u0301\u200b_+@"
)
PIECES = ["->", " -> ", "#tags:", "#TAGS:", "[confidence:", "]", ".json", "e.g.", "src/", ".env", "v1.2", "a.b.c", "//"]
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(alphabet=TRICKY, max_size=4)), max_size=14).map("".join)


@settings(max_examples=600, deadline=None)
@given(texts)
@example(".env.production user_id React.FC next.config.js a..b .x. _a_ -b-")
def test_words_match_the_pattern(text: str) -> None:
    pattern = re.compile(r"\.?[^\W_]+(?:[._\-/][^\W_]+)*|[^\W_]+")
    assert words(text) == pattern.findall(text)


@settings(max_examples=600, deadline=None)
@given(texts)
@example("a [confidence: 0.9] -> b #Tags: c  \t->  d [confidence:x")
def test_markup_removal_matches_the_pattern(text: str) -> None:
    assert _without_markup(text) == re.sub(_INDEX_MARKUP, " ", text, flags=re.IGNORECASE)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_tags_match_the_pattern(text: str) -> None:
    from memindex.text.words import sanitize_title

    low = sanitize_title(text, limit=48).lower()
    expected = re.sub(r"\s+", "-", re.sub(r"[^\w.\-+#/ ]", "", low)).strip("-")
    assert sanitize_tag(text) == expected


@settings(max_examples=600, deadline=None)
@given(texts)
@example("see src/app.py, ./a/b.ts and next.config.js (e.g. v1.2), /abs/x.md. foo/.bar.yml- a//b.py x.tar.gz")
def test_files_named_match_the_pattern(text: str) -> None:
    pattern = r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]*[A-Za-z0-9_-]\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])"
    expected = [m for m in re.findall(pattern, text) if "/" in m or m.count(".") == 1][:20]
    assert files_named(text) == expected


@settings(max_examples=600, deadline=None)
@given(texts)
@example("- [DECISION] t -> .claude/memory/decisions/a.json #tags:x\n- [RUNBOOK] u -> b/c.json\n -> x.json y")
def test_injected_paths_match_the_pattern(text: str) -> None:
    assert injected_paths(text) == re.findall(_INJECTED_LINE, text, re.MULTILINE)


@pytest.mark.parametrize("name", sorted(intents()))
def test_every_intent_match_holds_one_of_its_words(name: str) -> None:
    """The words are a prefilter: a prompt without them is never checked against the
    patterns, so every match of a pattern must contain one entry's words (all of them)."""
    words_, patterns, _ = intents()[name]

    @settings(max_examples=300, deadline=None)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        pattern = data.draw(st.sampled_from(patterns))
        text = data.draw(st.from_regex(re.compile(pattern), alphabet=st.characters(max_codepoint=127)))
        for variant in (text, text.upper(), text.title()):
            assert re.search(pattern, variant, re.IGNORECASE)
            assert any(all(w in variant.lower() for w in entry) for entry in words_), (pattern, variant)

    check()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES, st.sampled_from(["", " ", "\n\t ", "\r\n"]))
def test_lean_json_reads_and_writes_as_json_does(value: object, pad: str) -> None:
    text = pad + json.dumps(value) + pad
    assert _same(lean.loads(text), json.loads(text))
    assert _same(lean.loads(text.encode()), json.loads(text.encode()))
    assert lean.dumps(value) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize(
    "bad", ["", " ", "{broken", "[1,]", "{} x", "nul", '"\\x"', "\ufeff{}", b"\xff{}", b"\xef\xbb\xbf{}", '{"a":1}{}', "[" * 5000]
)
def test_lean_json_fails_as_json_does(bad: str | bytes) -> None:
    try:
        expected = json.loads(bad)
    except (ValueError, RecursionError) as exc:
        with pytest.raises(type(exc)) as got:
            lean.loads(bad)
        assert str(got.value) == str(exc)
    else:  # a UTF-8 BOM in bytes is read by json; so it is here
        assert lean.loads(bad) == expected


def test_lean_json_reads_what_json_detects_in_bytes() -> None:
    for encoding in ("utf-16", "utf-16-le", "utf-32-be"):
        data = json.dumps({"k": ["é", 1]}).encode(encoding)
        assert lean.loads(data) == {"k": ["é", 1]}


def test_small_tuples_behave_as_namedtuples_did() -> None:
    st_ = FileStat(1, 2, 3)
    assert st_ == (1, 2, 3) and hash(st_) == hash((1, 2, 3))
    assert (st_.mtime_ns, st_.size, st_.ctime_ns) == (1, 2, 3)
    assert pickle.loads(pickle.dumps(st_)) == st_ and type(pickle.loads(pickle.dumps(st_))) is FileStat
    assert repr(st_) == "FileStat(mtime_ns=1, size=2, ctime_ns=3)"
    term = Term(("user", "id"))
    assert term == (("user", "id"),) and term.parts == ("user", "id") and term.is_phrase and term.text == "user id"
    assert {term: 1}[Term(("user", "id"))] == 1
    assert pickle.loads(pickle.dumps(term)) == term and repr(term) == "Term(parts=('user', 'id'))"


def test_without_the_c_modules_the_packages_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another Python without `_json`: the same answers, through the json package."""
    monkeypatch.setattr(lean, "_scan", None)
    monkeypatch.setattr(lean, "_encode", None)
    assert lean.loads(b' {"a": [1, 2.5, null]} ') == {"a": [1, 2.5, None]}
    assert lean.dumps({"k": [1, "é"]}) == '{"k":[1,"\\u00e9"]}'
    with pytest.raises(ValueError):
        lean.loads("{broken")
