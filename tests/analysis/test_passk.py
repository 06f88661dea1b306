"""pass@k: the estimator, grouping, skipped tasks and the `rsr passk --json` contract."""

from __future__ import annotations

import json
import math

import pytest

from rsr_core.analysis.passk import pass_at_k
from rsr_core.cli import main
from rsr_core.store import Store
from tests.analysis.corpus import run


def test_estimator_values():
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)  # C(3,3)/C(5,3)
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 3, 2) == 1.0  # n - c < k
    # large n: exact integers, no overflow or accumulated rounding
    assert pass_at_k(1000, 1, 500) == 0.5
    product = 1 - math.prod(1 - 3 / i for i in range(1000 - 40 + 1, 1001))
    assert pass_at_k(1000, 40, 3) == pytest.approx(product, abs=1e-12)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def _runs(prefix: str, task: str, rewards: list, model: str, harness: str, kind: str = "eval") -> list:
    return [
        run(f"{prefix}{i}", task, ["ls"], kind=kind, reward=r, model=model, harness=harness)
        for i, r in enumerate(rewards)
    ]


@pytest.fixture
def db(tmp_path):
    store = Store(tmp_path / "p.duckdb")
    store.write_trajectories(
        # m1 / terminus-2: t1 n=5 c=2 (a None and a 0.5 are failures), t2 n=2 c=1
        _runs("a", "t1", [1.0, None, 0.5, 1.0, 0.0], "m1", "terminus-2")
        + _runs("b", "t2", [1.0, 0.0], "m1", "terminus-2")
        # m1 / rsrt: t1 n=3 c=0
        + _runs("c", "t1", [0.0, 0.0, None], "m1", "rsrt")
        # m2 / terminus-2: t1 n=4 c=4
        + _runs("d", "t1", [1.0] * 4, "m2", "terminus-2")
        # discovery runs (left out with --kind eval) and a run without a task (always left out)
        + _runs("e", "t1", [0.0] * 3, "m2", "terminus-2", kind="discovery")
        + _runs("f", None, [1.0], "m2", "terminus-2")
    )
    store.close()
    return str(tmp_path / "p.duckdb")


def _passk(capsys, *argv: str) -> dict:
    assert main(["passk", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_by_model_and_harness(db, capsys):
    out = _passk(capsys, "--k", "1,3", "--kind", "eval", "--db", db)
    assert out["k"] == [1, 3]
    assert out["groups"] == [
        {"model": "m1", "harness": "rsrt", "tasks": 1, "pass_at": {"1": 0.0, "3": 0.0}, "skipped_tasks": {}},
        {
            "model": "m1",
            "harness": "terminus-2",
            "tasks": 2,
            "pass_at": {"1": pytest.approx((0.4 + 0.5) / 2), "3": pytest.approx(0.9)},
            "skipped_tasks": {"3": 1},
        },
        {
            "model": "m2",
            "harness": "terminus-2",
            "tasks": 1,
            "pass_at": {"1": 1.0, "3": 1.0},
            "skipped_tasks": {},
        },
    ]


def test_by_model_merges_harnesses_and_all_kinds_by_default(db, capsys):
    out = _passk(capsys, "--k", "3,1", "--by", "model", "--db", db)
    m1, m2 = out["groups"]
    # m1 t1: n=8, c=2 -> pass@1 2/8, pass@3 1 - C(6,3)/C(8,3); t2 n=2 c=1 skipped for k=3
    assert m1["harness"] is None and m1["tasks"] == 2
    assert m1["pass_at"] == {"1": pytest.approx((0.25 + 0.5) / 2), "3": pytest.approx(1 - 20 / 56)}
    assert m1["skipped_tasks"] == {"3": 1}
    # m2 t1 with discovery runs included: n=7, c=4
    assert m2["pass_at"]["1"] == pytest.approx(4 / 7)
    assert m2["pass_at"]["3"] == pytest.approx(1 - 1 / 35)  # C(3,3)/C(7,3)


def test_by_harness_and_unreachable_k(db, capsys):
    out = _passk(capsys, "--k", "10", "--by", "harness", "--kind", "eval", "--db", db)
    assert [(g["model"], g["harness"], g["tasks"]) for g in out["groups"]] == [
        (None, "rsrt", 1),
        (None, "terminus-2", 2),
    ]
    assert out["groups"][1]["pass_at"] == {"10": None} and out["groups"][1]["skipped_tasks"] == {"10": 2}


def test_bad_k_is_a_usage_error(db):
    with pytest.raises(SystemExit):
        main(["passk", "--k", "0,x", "--db", db])
