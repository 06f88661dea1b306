"""Every trajectory of real harbor and Terminal-Bench output and of a hostile corpus opens in a real browser:
alone and side by side, ids of any characters (harbor's `task__abc1234`, `/`, spaces, commas, unicode, bidi
and zero-width characters, URL syntax), no steps and 10,000 steps; the studio shows users no developer menu."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from rsr_core.store import Store
from rsr_core.ui.text import shown as visible
from tests.e2e.conftest import ROOT, Studio, serving
from tests.e2e.test_studio import IDLE, TIMEOUT_MS, shot, shown
from tests.hostile_ids import MANY_STEPS, NO_STEPS, write_corpus

pytestmark = pytest.mark.browser
SOURCES = [
    "tests/data/harbor_real/jobs",
    "tests/data/tb1_real/runs",
    "tests/data/harbor_job",
    "tests/data/tb1_runs",
]
PROBLEMS = "[data-testid='stException'], [data-testid='stAlertContentError']"


@pytest.fixture(scope="module")
def corpus_studio(tmp_path_factory) -> Iterator[tuple[Studio, dict[str, int]]]:
    tmp = tmp_path_factory.mktemp("corpora")
    shapes = write_corpus(tmp / "hostile")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RSR_")}
    env.update(RSR_DB_WAIT="60", PYTHONUNBUFFERED="1")
    studio = Studio("", tmp / "corpora.duckdb", env, tmp / "studio.log")
    done = studio.rsr("ingest", str(tmp / "hostile"), *(str(ROOT / s) for s in SOURCES), check=False)
    assert done.returncode == 0, done.stderr
    with serving(studio) as url:
        studio.url = url
        yield studio, shapes


def _ids(studio: Studio) -> list[tuple[str, int]]:
    with Store(studio.db, read_only=True, wait_s=60).reading() as cur:
        return cur.execute(
            "SELECT t.trajectory_id, count(s.step_index) FROM trajectories t "
            "LEFT JOIN steps s USING (trajectory_id) GROUP BY 1 ORDER BY 1"
        ).fetchall()


def _open(page, url: str, ready: str) -> str:
    page.goto(url)
    body = shown(page, ready)
    assert page.locator(PROBLEMS).count() == 0, (url, body[:2000])
    assert str(ROOT) not in body  # no traceback of the studio's own (a run's recorded exception may hold one)
    return body


def test_every_trajectory_opens_alone_and_beside_the_next(corpus_studio, page):
    studio, shapes = corpus_studio
    ids = _ids(studio)
    assert {tid for tid, _ in ids} >= set(shapes) and any("__" in tid for tid, _ in ids if tid not in shapes)
    for tid, steps in ids:
        body = _open(page, f"{studio.url}/trajectories?trajectory={quote(tid, safe='')}", "back to the list")
        heading = page.locator("[data-testid='stMain'] h3").first.inner_text()
        assert heading == visible(tid), (tid, heading)
        if steps == 0:
            assert "This trajectory has no steps" in body, tid
        else:
            page.get_by_text(f"step {min(steps, 25)} · ", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        if tid in (NO_STEPS, MANY_STEPS) or "__" in tid:
            shot(page, f"corpus-{len(tid)}-{steps}")
    for (a, _), (b, _) in itertools.pairwise(ids):
        url = f"{studio.url}/trajectories?compare={quote(a, safe='')}&compare={quote(b, safe='')}"
        _open(page, url, "turns page")
        headings = page.locator("[data-testid='stMain'] h3").all_inner_texts()
        assert headings == [visible(a), visible(b)], (a, b, headings)


def test_bad_step_numbers_are_errors_and_the_studio_has_no_developer_menu(corpus_studio, page):
    studio, _ = corpus_studio
    tid = quote(MANY_STEPS)
    for step in ["%C2%B2", "1" * 5000, "-3"]:
        page.goto(f"{studio.url}/trajectories?trajectory={tid}&step={step}")
        body = shown(page, "must be a step number")
        assert page.locator("[data-testid='stException']").count() == 0 and "Traceback" not in body
    page.goto(f"{studio.url}/trajectories?trajectory={tid}&step=9999")
    shown(page, "linked step")
    page.wait_for_function(IDLE, timeout=TIMEOUT_MS)
    assert page.locator("[data-testid='stAppDeployButton']").count() == 0
    assert page.get_by_text("Deploy", exact=True).count() == 0
    shot(page, "corpus-step-9999")
