"""Read queries over the store (all SQL of the read side lives here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from rsr_core.errors import RsrError
from rsr_core.models import KINDS, Task, TaskFile, Trajectory
from rsr_core.store import columns
from rsr_core.store.sql import row_as_dict, rows_as_dicts, scalar


def summary(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """`rsr stats summary`: task ids known, trajectories by kind, steps, commands."""
    by_kind = dict(cur.execute("SELECT kind, count(*) FROM trajectories GROUP BY kind").fetchall())
    return {
        "tasks": scalar(cur, "SELECT count(*) FROM tasks"),
        "trajectories": {k: int(by_kind.get(k, 0)) for k in KINDS},
        "steps": scalar(cur, "SELECT count(*) FROM steps"),
        "commands": scalar(cur, "SELECT count(*) FROM commands"),
    }


def coverage(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """`rsr stats coverage`: solved = some discovery run of the harness on the task has reward >= 1 and did not
    tamper with the verifier (`rsr_solved`)."""
    rows = cur.execute(
        """
        SELECT harness, task_id, max(rsr_solved(reward, verifier_tampered)) AS solved
        FROM trajectories WHERE kind = 'discovery' AND task_id IS NOT NULL
        GROUP BY harness, task_id
        """
    ).fetchall()
    attempted: dict[str, set[str]] = {}
    solved: dict[str, set[str]] = {}
    for harness, task, ok in rows:
        attempted.setdefault(harness, set()).add(task)
        solved.setdefault(harness, set())
        if ok:
            solved[harness].add(task)
    union = set().union(*solved.values()) if solved else set()
    harnesses = {}
    for name in sorted(attempted):
        others = set().union(*(s for h, s in solved.items() if h != name)) if len(solved) > 1 else set()
        harnesses[name] = {
            "attempted_tasks": len(attempted[name]),
            "solved_tasks": len(solved[name]),
            "unique_solved": len(solved[name] - others),
        }
    best = max(sorted(solved), key=lambda h: len(solved[h]), default=None)
    best_n = len(solved[best]) if best else 0
    return {
        "harnesses": harnesses,
        "union_solved": len(union),
        "best_single": {"harness": best, "solved_tasks": best_n} if best else None,
        "gain_over_best": (len(union) / best_n - 1.0) if best_n else None,
    }


@dataclass(frozen=True)
class TrajectoryFilter:
    """Filters of the trajectory list (all optional; combined with AND)."""

    task_id: str | None = None
    category: str | None = None
    harness: str | None = None
    kind: str | None = None
    min_reward: float | None = None
    max_reward: float | None = None
    search: str | None = None
    source_trajectory_id: str | None = None
    runbook_id: str | None = None
    tampered: bool | None = None


class SearchError(RsrError):
    """A search the index cannot answer (the message says which word and why)."""


def search_terms(text: str) -> list[str]:
    """Query words the way the index stores them. A word longer than any indexed word is refused: dropped, it
    would leave the other words (or none) to match, and every trajectory would be found."""
    found = columns.words(text)
    for word in found:
        if len(word) > columns.TERM_MAX:
            raise SearchError(
                f"search word {word[:40]}… has {len(word):,} characters; the index holds words of up to "
                f"{columns.TERM_MAX}, so it cannot be searched: search for other words of the text"
            )
    return [t for t in found if len(t) >= columns.TERM_MIN]


def where_clause(f: TrajectoryFilter) -> tuple[str, list[Any]]:
    clauses: list[str] = ["TRUE"]
    params: list[Any] = []
    for col, value in (
        ("t.task_id", f.task_id),
        ("t.harness", f.harness),
        ("t.kind", f.kind),
        ("t.source_trajectory_id", f.source_trajectory_id),
        ("t.runbook_id", f.runbook_id),
    ):
        if value:
            clauses.append(f"{col} = ?")
            params.append(value)
    if f.tampered is not None:
        clauses.append(("" if f.tampered else "NOT ") + "coalesce(t.verifier_tampered, FALSE)")
    if f.category:
        clauses.append("t.task_id IN (SELECT task_id FROM tasks WHERE category = ?)")
        params.append(f.category)
    if f.min_reward is not None:
        clauses.append("t.reward >= ?")
        params.append(f.min_reward)
    if f.max_reward is not None:
        clauses.append("coalesce(t.reward, 0) <= ?")
        params.append(f.max_reward)
    terms = list(dict.fromkeys(search_terms(f.search or "")))
    if terms:
        clause, term_params = _search_clause(terms)
        clauses.append(clause)
        params.extend(term_params)
    return " AND ".join(clauses), params


def _search_clause(terms: list[str]) -> tuple[str, list[Any]]:
    """Trajectories with, for every word, an indexed term starting with it — in one scan of search_terms.

    A prefix is the range [word, word with its last character incremented), which DuckDB can check against
    each row group's min/max; words are ASCII ([a-z0-9_.-/]), so the range holds exactly the words' prefixes.
    """
    ranges, params = [], []
    for term in terms:
        ranges.append("(term >= ? AND term < ?)")
        params += [term, term[:-1] + chr(ord(term[-1]) + 1)]
    if len(terms) == 1:
        return f"t.trajectory_id IN (SELECT trajectory_id FROM search_terms WHERE {ranges[0]})", params
    having = " AND ".join(f"bool_or{r}" for r in ranges)
    sql = (
        f"t.trajectory_id IN (SELECT trajectory_id FROM search_terms WHERE {' OR '.join(ranges)} "
        f"GROUP BY trajectory_id HAVING {having})"
    )
    return sql, params + params


LIST_COLUMNS = (
    "trajectory_id",
    "task_id",
    "kind",
    "harness",
    "model",
    "reward",
    "n_steps",
    "n_commands",
    "source_trajectory_id",
    "runbook_id",
    "scripted",
    "verifier_tampered",
)


def list_trajectories(
    cur: duckdb.DuckDBPyConnection, f: TrajectoryFilter, limit: int = 50, offset: int = 0
) -> list[dict[str, Any]]:
    """One page of trajectories matching the filter, in a stable order (task, kind, harness, id)."""
    where, params = where_clause(f)
    cols = ", ".join(f"t.{c}" for c in LIST_COLUMNS)
    return rows_as_dicts(
        cur.execute(
            f"SELECT {cols} FROM trajectories t WHERE {where} "
            "ORDER BY t.task_id, t.kind, t.harness, t.trajectory_id LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
    )


def count_trajectories(cur: duckdb.DuckDBPyConnection, f: TrajectoryFilter) -> int:
    """How many trajectories match the filter."""
    where, params = where_clause(f)
    return scalar(cur, f"SELECT count(*) FROM trajectories t WHERE {where}", params)


def get_trajectory(
    cur: duckdb.DuckDBPyConnection, trajectory_id: str, step_from: int = 1, step_to: int | None = None
) -> Trajectory | None:
    """A stored trajectory with its steps in [step_from, step_to] (all by default)."""
    cols = columns.TRAJECTORY_READ_COLUMNS
    row = row_as_dict(
        cur.execute(f"SELECT {', '.join(cols)} FROM trajectories WHERE trajectory_id = ?", [trajectory_id])
    )
    if row is None:
        return None
    hi = step_to if step_to is not None else 2**31 - 1
    window = [trajectory_id, step_from, hi]
    steps = cur.execute(
        f"SELECT {', '.join(columns.STEP_READ_COLUMNS)} FROM steps "
        "WHERE trajectory_id = ? AND step_index BETWEEN ? AND ? ORDER BY step_index",
        window,
    )
    step_rows = rows_as_dicts(steps)
    actions = cur.execute(
        f"SELECT {', '.join(columns.ACTION_READ_COLUMNS)} FROM actions "
        "WHERE trajectory_id = ? AND step_index BETWEEN ? AND ? ORDER BY step_index, action_index",
        window,
    )
    return columns.trajectory_from_rows(row, step_rows, rows_as_dicts(actions))


def commands_of_trajectory(cur: duckdb.DuckDBPyConnection, trajectory_id: str) -> list[str]:
    """Normalised commands in order."""
    rows = cur.execute("SELECT command FROM commands WHERE trajectory_id = ? ORDER BY seq", [trajectory_id])
    return [r[0] for r in rows.fetchall()]


def get_task(cur: duckdb.DuckDBPyConnection, task_id: str, with_hidden: bool = False) -> Task | None:
    """A task; hidden files (tests, solution) only when asked for, never for public display."""
    cols = (
        "task_id",
        "name",
        "instruction",
        "category",
        "difficulty",
        "tags",
        "source_format",
        "path",
        "docker_image",
        "cpus",
        "memory_mb",
        "allow_internet",
        "storage_mb",
        "pids_limit",
        "max_files",
        "cap_add",
        "agent_timeout_sec",
        "verifier_timeout_sec",
        "verifier_allow_changes",
    )
    data = row_as_dict(cur.execute(f"SELECT {', '.join(cols)} FROM tasks WHERE task_id = ?", [task_id]))
    if data is None:
        return None
    data["tags"] = data["tags"] or []
    data["verifier_allow_changes"] = data["verifier_allow_changes"] or []
    data["cap_add"] = data["cap_add"] or []
    data["allow_internet"] = bool(data["allow_internet"])
    files = []
    if with_hidden:
        files = [
            TaskFile(role=r, path=p, content=c or "")
            for r, p, c in cur.execute(
                "SELECT role, path, content FROM task_files WHERE task_id = ? ORDER BY role, path", [task_id]
            ).fetchall()
        ]
    return Task(**data, files=files)


def rewrite_sources(cur: duckdb.DuckDBPyConnection, sources: list[str], tasks: list[str]) -> list[str]:
    """Successful discovery trajectories (solved: reward >= 1.0, not tampered; task known) among the given ids /
    tasks, or all."""
    sql = (
        "SELECT trajectory_id FROM trajectories WHERE kind = 'discovery' AND rsr_solved(reward, verifier_tampered) "
        "AND task_id IS NOT NULL"
    )
    params: list[Any] = []
    if sources or tasks:
        parts = []
        if sources:
            parts.append(f"trajectory_id IN ({', '.join('?' * len(sources))})")
            params += sources
        if tasks:
            parts.append(f"task_id IN ({', '.join('?' * len(tasks))})")
            params += tasks
        sql += " AND (" + " OR ".join(parts) + ")"
    return [r[0] for r in cur.execute(sql + " ORDER BY task_id, trajectory_id", params).fetchall()]
