"""Property tests (hypothesis): command extraction, the five pair metrics against their definitions in the README
written the plain way, and search tokenising against the index it feeds."""

from __future__ import annotations

import itertools
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

from rsr_core.formats.commands import TMUX_KEY_NAMES, split_commands
from rsr_core.models import Command, Step, Trajectory
from rsr_core.store import Store, TrajectoryFilter
from rsr_core.store.columns import TERM_MAX, TERM_MIN, words
from rsr_core.store.queries import search_terms
from rsr_core.ui.views import pair_figures

WHITE = " \t\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u2003"
line = st.text(alphabet=st.sampled_from(list("ab lsc-Z|$'\"") + list(WHITE)), max_size=20)
keystrokes = st.lists(st.one_of(line, st.sampled_from(sorted(TMUX_KEY_NAMES))), max_size=6).map("\n".join)


def reference_commands(text: str) -> list[str]:
    """The README: split on newlines; trailing whitespace removed, inner runs collapsed to one space; empty
    segments and bare tmux key names dropped (leading whitespace is not named, so it stays)."""
    out = []
    for segment in text.split("\n"):
        kept = segment.rstrip()
        body = kept.lstrip()
        if not body or body in TMUX_KEY_NAMES:
            continue
        out.append(kept[: len(kept) - len(body)] + re.sub(r"\s+", " ", body))
    return out


@given(keystrokes)
def test_command_extraction_is_the_definition(text):
    got = split_commands(text)
    assert got == reference_commands(text)
    for cmd in got:
        assert cmd and cmd == cmd.rstrip() and "\n" not in cmd and cmd.strip() not in TMUX_KEY_NAMES
        assert split_commands(cmd) == [cmd]  # a normalised command is its own normal form


@given(st.lists(keystrokes, max_size=4))
def test_commands_of_batches_are_the_commands_of_each_batch(batches):
    assert split_commands("\n".join(batches)) == [c for b in batches for c in split_commands(b)]


def _first(cmd: str) -> str:
    return cmd.split()[0] if cmd.split() else ""


def reference_metrics(a: list[str], b: list[str]) -> dict[str, float]:
    """The five metrics, pair by pair, straight from their definitions and empty-side rules in the README."""
    sa, sb = set(a), set(b)
    exact = len(sa & sb) / len(sa | sb) if sa | sb else 0.0
    ca, cb = Counter(a), Counter(b)
    top = sum(max(ca[k], cb[k]) for k in ca | cb)
    multiset = sum(min(ca[k], cb[k]) for k in ca | cb) / top if top else 0.0
    order = Indel.normalized_similarity(a, b)

    def side(xs: list[str], ys: list[str]) -> float:
        return sum(max(fuzz.ratio(x, y) for y in ys) / 100 for x in xs) / len(xs)

    fuzzy = (side(a, b) + side(b, a)) / 2 if a and b else 0.0
    ta = {(_first(x), _first(y)) for x, y in itertools.pairwise(a)}
    tb = {(_first(x), _first(y)) for x, y in itertools.pairwise(b)}
    transition = len(ta & tb) / len(ta | tb) if ta | tb else 0.0
    return {"exact": exact, "multiset": multiset, "order": order, "fuzzy": fuzzy, "transition": transition}


command = st.sampled_from(
    ["ls", "ls -la", "cat a.txt", "cat b.txt", "python3 x.py", "grep -r foo .", "cd /app"]
)
commands = st.lists(command, max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commands, commands)
def test_pair_metrics_equal_their_definitions_and_are_symmetric(a, b):
    got, back = pair_figures(a, b), pair_figures(b, a)
    want = reference_metrics(a, b)
    for metric, value in want.items():
        assert got[metric] == pytest.approx(value, abs=1e-9), metric
        assert got[metric] == pytest.approx(back[metric], abs=1e-9), metric
        assert 0.0 <= got[metric] <= 1.0
    if a:
        same = pair_figures(a, list(a))
        assert same["exact"] == same["multiset"] == same["order"] == same["fuzzy"] == pytest.approx(1.0)


token = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.-/", min_size=TERM_MIN, max_size=12)
noise = st.text(alphabet=" ,;:!()[]{}\n\tÄéß漢", max_size=3)


@given(st.lists(st.tuples(token, noise), min_size=1, max_size=6))
def test_words_are_the_lowercased_runs_of_the_search_class(parts):
    text = "".join(t.upper() + n for t, n in parts)
    assert words(text) == re.findall(r"[a-z0-9_./-]+", text.lower())  # everything else separates
    if all(n for _, n in parts):
        assert words(text) == [t for t, _ in parts]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(token, min_size=1, max_size=5), st.data())
def test_every_word_of_a_trajectory_finds_it_by_any_prefix(tokens, data):
    store = Store(":memory:")
    text = " ".join(tokens)
    store.write_trajectories(
        [
            Trajectory(
                trajectory_id="t",
                content_hash="h",
                steps=[
                    Step(index=1, source="user", message=text.upper()),
                    Step(index=2, source="agent", message="x", commands=[Command(keystrokes="ls\n")]),
                ],
            )
        ]
    )
    word = data.draw(st.sampled_from([t for t in tokens if TERM_MIN <= len(t) <= TERM_MAX]))
    prefix = word[: data.draw(st.integers(TERM_MIN, len(word)))]
    assert search_terms(prefix) == [prefix]
    assert store.count_trajectories(TrajectoryFilter(search=prefix.upper())) == 1
    missing = prefix + "§" + "zzzzq"  # a word the text does not hold
    assert store.count_trajectories(TrajectoryFilter(search=f"{prefix} zzzzqq{missing}")) == 0
    store.close()
