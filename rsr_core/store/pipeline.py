"""Store access for the rewrite pipeline's rows: runbooks, critic flags, reviews, transfer checks, funnel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from rsr_core.errors import RsrError
from rsr_core.models import SCHEMA_VERSION, CriticFlag, Review, Runbook, TransferVerdict, review_problem
from rsr_core.store.sql import one, row_as_dict, rows_as_dicts, scalar
from rsr_core.vocabulary import RUNBOOK_STATUSES as RUNBOOK_STATUSES

# Every rewrite trajectory with verified / answer_transfer / human_rejected / kept: the `rewrite_status` view
# (migration 3) is the one definition; runbook rounds have theirs in the `runbook_status` view.
REWRITE_STATUS_SQL = "SELECT * FROM rewrite_status"

RUNBOOK_COLUMNS = (
    "runbook_id", "lineage_id", "source_trajectory_id", "task_id", "job_id", "variant", "round",
    "parent_runbook_id", "target_end_state", "key_milestones", "useful_checks", "recovery_strategies", "pitfalls",
    "prompt_version", "model", "critic_verdict", "created_at",
)  # fmt: skip
FLAG_COLUMNS = (
    "runbook_id", "stage", "kind", "severity", "score", "span_start", "span_end", "evidence", "matched_text",
    "matched_path", "reason",
)  # fmt: skip


def insert_runbook(cur: duckdb.DuckDBPyConnection, rb: Runbook) -> None:
    """Store one runbook round."""
    cols = [c for c in RUNBOOK_COLUMNS if c != "created_at"]
    cur.execute(
        f"INSERT INTO runbooks ({', '.join(cols)}, schema_version) VALUES ({', '.join('?' * (len(cols) + 1))})",
        [getattr(rb, c) for c in cols] + [SCHEMA_VERSION],
    )


def insert_flags(cur: duckdb.DuckDBPyConnection, flags: list[CriticFlag]) -> None:
    """Store critic flags."""
    if not flags:
        return
    cur.executemany(
        f"INSERT INTO critic_flags ({', '.join(FLAG_COLUMNS)}, schema_version) "
        f"VALUES ({', '.join('?' * (len(FLAG_COLUMNS) + 1))})",
        [[getattr(f, c) for c in FLAG_COLUMNS] + [SCHEMA_VERSION] for f in flags],
    )


def set_critic_verdict(cur: duckdb.DuckDBPyConnection, runbook_id: str, verdict: str) -> None:
    """Record the critic's verdict on a runbook round."""
    cur.execute("UPDATE runbooks SET critic_verdict = ? WHERE runbook_id = ?", [verdict, runbook_id])


def insert_review(cur: duckdb.DuckDBPyConnection, review: Review) -> Review:
    """Append a human review (reviews are never updated; the latest decides); returns it as stored (with the
    time the store gave it, as `reviews_of` reads it)."""
    stored = cur.execute(
        "INSERT INTO reviews (runbook_id, decision, reviewer, reason, seq, schema_version) "
        "VALUES (?, ?, ?, ?, nextval('review_seq'), ?) RETURNING created_at",
        [review.runbook_id, review.decision, review.reviewer, review.reason, SCHEMA_VERSION],
    ).fetchone()
    assert stored is not None  # an INSERT ... RETURNING of one row returns it
    return review.model_copy(update={"reason": review.reason or "", "created_at": stored[0]})


class ReviewRefused(RsrError):
    """A review that cannot be recorded: its reviewer or reason, or the round's status, does not allow it."""


def refusal(cur: duckdb.DuckDBPyConnection, review: Review) -> str | None:
    """Why `review` cannot be recorded (None: it can). Only a round that passed the critic can be approved: a
    critic-rejected round is replanned and never executed whatever a human says of it, and one the critic has
    not judged yet has nothing to approve."""
    problem = review_problem(review.reviewer, review.reason)
    if problem:
        return problem
    status = runbook_status_of(cur, review.runbook_id)
    if review.decision == "approve" and status == "critic_rejected":
        return (
            f"{review.runbook_id} was rejected by the critic: it is replanned, never executed, so it cannot be "
            "approved (review the round that replaced it: `rsr runbooks list --status pending_review`)"
        )
    if review.decision == "approve" and status == "critic_pending":
        return f"{review.runbook_id} has not been judged by the critic yet: there is nothing to approve"
    return None


def record_review(cur: duckdb.DuckDBPyConnection, review: Review) -> Review:
    """Append a reviewer's decision (`insert_review`) once `refusal` finds nothing against it; raises
    `ReviewRefused` with the reason otherwise."""
    problem = refusal(cur, review)
    if problem:
        raise ReviewRefused(problem)
    return insert_review(cur, review)


@dataclass(frozen=True)
class Reviewed:
    """A recorded review with what it decided: the round, the review as stored, the round's status after it."""

    runbook: Runbook
    review: Review
    status: str | None


def review_runbook(cur: duckdb.DuckDBPyConnection, review: Review) -> Reviewed | None:
    """Record a reviewer's decision on a round (what `rsr review` and the studio's review form both do):
    `record_review` (refused with the reason when the round cannot take it), then the round's status read back
    from the `runbook_status` view. None, with nothing recorded, when there is no such round."""
    rb = get_runbook(cur, review.runbook_id)
    if rb is None:
        return None
    stored = record_review(cur, review)
    return Reviewed(rb, stored, runbook_status_of(cur, review.runbook_id))


def insert_transfer(cur: duckdb.DuckDBPyConnection, verdict: TransferVerdict) -> None:
    """Store (or replace) the answer-transfer verdict of a rewrite trajectory."""
    cur.execute("DELETE FROM transfer_checks WHERE trajectory_id = ?", [verdict.trajectory_id])
    cur.execute(
        "INSERT INTO transfer_checks (trajectory_id, answer_transfer, deterministic_evidence, llm_verdict, "
        "llm_evidence, schema_version) VALUES (?, ?, ?, ?, ?, ?)",
        [
            verdict.trajectory_id,
            verdict.answer_transfer,
            verdict.deterministic_evidence,
            verdict.llm_verdict,
            verdict.llm_evidence,
            SCHEMA_VERSION,
        ],
    )


def _runbook(data: dict[str, Any]) -> Runbook:
    for part in ("key_milestones", "useful_checks", "recovery_strategies", "pitfalls"):
        data[part] = list(data[part] or [])
    return Runbook(**data)


def get_runbook(cur: duckdb.DuckDBPyConnection, runbook_id: str) -> Runbook | None:
    """One runbook round."""
    row = row_as_dict(
        cur.execute(f"SELECT {', '.join(RUNBOOK_COLUMNS)} FROM runbooks WHERE runbook_id = ?", [runbook_id])
    )
    return _runbook(row) if row else None


def runbooks_where(cur: duckdb.DuckDBPyConnection, column: str, value: str) -> list[Runbook]:
    """Runbook rounds with column = value (lineage_id, source_trajectory_id, job_id, task_id), oldest first."""
    assert column in ("lineage_id", "source_trajectory_id", "job_id", "task_id")
    rows = cur.execute(
        f"SELECT {', '.join(RUNBOOK_COLUMNS)} FROM runbooks WHERE {column} = ? ORDER BY variant, round",
        [value],
    )
    return [_runbook(r) for r in rows_as_dicts(rows)]


def flags_of(cur: duckdb.DuckDBPyConnection, runbook_id: str) -> list[CriticFlag]:
    """Critic flags of a runbook round."""
    rows = cur.execute(
        f"SELECT {', '.join(FLAG_COLUMNS)} FROM critic_flags WHERE runbook_id = ? ORDER BY stage, span_start",
        [runbook_id],
    )
    return [CriticFlag(**r) for r in rows_as_dicts(rows)]


def reviews_of(cur: duckdb.DuckDBPyConnection, runbook_id: str) -> list[Review]:
    """The audit history of a runbook, oldest first."""
    rows = cur.execute(
        "SELECT runbook_id, decision, reviewer, reason, created_at FROM reviews WHERE runbook_id = ? ORDER BY seq",
        [runbook_id],
    ).fetchall()
    return [
        Review(runbook_id=r[0], decision=r[1], reviewer=r[2], reason=r[3] or "", created_at=r[4])
        for r in rows
    ]


def transfer_of(cur: duckdb.DuckDBPyConnection, trajectory_id: str) -> TransferVerdict | None:
    """The answer-transfer verdict of a rewrite trajectory."""
    row = one(
        cur,
        "SELECT trajectory_id, answer_transfer, deterministic_evidence, llm_verdict, llm_evidence "
        "FROM transfer_checks WHERE trajectory_id = ?",
        [trajectory_id],
    )
    if row is None:
        return None
    return TransferVerdict(
        trajectory_id=row[0],
        answer_transfer=row[1],
        deterministic_evidence=list(row[2] or []),
        llm_verdict=row[3],
        llm_evidence=list(row[4] or []),
    )


def rewrite_status(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every rewrite trajectory with verified / answer_transfer / human_rejected / kept."""
    return rows_as_dicts(cur.execute(REWRITE_STATUS_SQL))


def funnel(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """`rsr stats funnel`. Runbooks count every round; each lands in exactly one status of the `runbook_status`
    view (critic_pending, critic_rejected, approved, pending_review, human_rejected), so those buckets sum to
    `runbooks`. verified excludes runs that tampered with the verifier; answer_transfer counts verified
    rewrites flagged, answer_transfer_replay those of them the replay stage flagged; kept follows the
    `rewrite_status` view."""
    rb = one(
        cur,
        """
        SELECT count(DISTINCT source_trajectory_id), count(*),
               count(*) FILTER (WHERE status = 'critic_rejected'),
               count(*) FILTER (WHERE status = 'approved'),
               count(*) FILTER (WHERE status = 'pending_review'),
               count(*) FILTER (WHERE status = 'human_rejected'),
               count(*) FILTER (WHERE status = 'critic_pending')
        FROM runbook_status
        """,
    )
    ex = one(
        cur,
        """SELECT count(*), count(*) FILTER (WHERE r.verified),
                   count(*) FILTER (WHERE r.verified AND r.answer_transfer), count(*) FILTER (WHERE r.kept),
                   count(DISTINCT r.source_trajectory_id) FILTER (WHERE r.kept),
                   count(*) FILTER (WHERE r.verifier_tampered),
                   -- the tests wrote reward 1 that the verifier's pytest record contradicts (scored 0)
                   count(*) FILTER (WHERE json_extract_string(t.extra, '$.verifier_inconsistent') IS NOT NULL),
                   -- flagged by the replay stage: its evidence lines begin "replay: " (rsr_core/transfer/stages.py)
                   count(*) FILTER (WHERE r.verified AND r.answer_transfer
                                    AND len(list_filter(tc.deterministic_evidence, lambda e: starts_with(e, 'replay: '))) > 0)
            FROM rewrite_status r JOIN trajectories t USING (trajectory_id)
            LEFT JOIN transfer_checks tc USING (trajectory_id)""",
    )
    assert rb is not None and ex is not None
    kept, kept_sources = ex[3], ex[4]
    return {
        "sources": rb[0],
        "runbooks": rb[1],
        "critic_pending": rb[6],
        "critic_rejected": rb[2],
        "approved": rb[3],
        "pending_review": rb[4],
        "human_rejected": rb[5],
        "executions": ex[0],
        "verifier_tampered": ex[5],
        "verifier_inconsistent": ex[6],
        "verified": ex[1],
        "answer_transfer": ex[2],
        "answer_transfer_replay": ex[7],
        "kept": kept,
        "expansion_ratio": kept / kept_sources if kept_sources else 0.0,
    }


def runbook_status_of(cur: duckdb.DuckDBPyConnection, runbook_id: str) -> str | None:
    """The status of one runbook round (the `runbook_status` view), None when unknown."""
    row = one(cur, "SELECT status FROM runbook_status WHERE runbook_id = ?", [runbook_id])
    return row[0] if row else None


def runbook_rows(
    cur: duckdb.DuckDBPyConnection, status: str | None = None, task_id: str | None = None
) -> list[dict[str, Any]]:
    """Runbook rounds with their status (`runbook_status`), flag count and executions, for `rsr runbooks list`."""
    res = cur.execute(
        """
        SELECT s.runbook_id, s.status, s.task_id, s.variant, s.round, s.critic_verdict,
               (SELECT count(*) FROM critic_flags f WHERE f.runbook_id = s.runbook_id) AS flags,
               s.review, s.last_reviewer, s.reviews,
               (SELECT count(*) FROM trajectories t WHERE t.runbook_id = s.runbook_id) AS executions,
               s.source_trajectory_id, s.job_id
        FROM runbook_status s
        WHERE (? IS NULL OR s.status = ?) AND (? IS NULL OR s.task_id = ?)
        ORDER BY s.task_id, s.source_trajectory_id, s.variant, s.round
        """,
        [status, status, task_id, task_id],
    )
    return rows_as_dicts(res)


def runbook_dossier(cur: duckdb.DuckDBPyConnection, runbook_id: str) -> dict[str, Any] | None:
    """Everything about one runbook round for `rsr runbooks show`: its five parts and status, every critic round
    of its lineage with flags and evidence, its review history and the executions of every round."""
    rb = get_runbook(cur, runbook_id)
    if rb is None:
        return None
    rounds = []
    for r in runbooks_where(cur, "lineage_id", rb.lineage_id):
        rounds.append(
            {
                "runbook_id": r.runbook_id,
                "round": r.round,
                "critic_verdict": r.critic_verdict,
                "status": runbook_status_of(cur, r.runbook_id),
                "flags": [
                    f.model_dump(mode="json", exclude={"schema_version"}) for f in flags_of(cur, r.runbook_id)
                ],
            }
        )
    res = cur.execute(
        "SELECT * FROM rewrite_status WHERE runbook_id IN (SELECT runbook_id FROM runbooks WHERE lineage_id = ?) "
        "ORDER BY runbook_id, trajectory_id",
        [rb.lineage_id],
    )
    return {
        "runbook": rb.model_dump(mode="json", exclude={"schema_version"}),
        "status": runbook_status_of(cur, runbook_id),
        "text": rb.text(),
        "rounds": rounds,
        "reviews": [
            r.model_dump(mode="json", include={"decision", "reviewer", "reason", "created_at"})
            for r in reviews_of(cur, runbook_id)
        ],
        "executions": rows_as_dicts(res),
    }


def store_carried_verdicts(
    cur: duckdb.DuckDBPyConnection, transfer: TransferVerdict | None, reviews: list[Review]
) -> None:
    """Store verdicts read back from an archive: the transfer check replaces any stored one; a runbook's
    review history is added only when the runbook has none yet (every trajectory of it carries the same)."""
    if transfer is not None:
        insert_transfer(cur, transfer)
    if not reviews:
        return
    runbook_id = reviews[0].runbook_id
    if scalar(cur, "SELECT count(*) FROM reviews WHERE runbook_id = ?", [runbook_id]):
        return
    for review in reviews:
        created = review.created_at
        cur.execute(
            "INSERT INTO reviews (runbook_id, decision, reviewer, reason, seq, schema_version, created_at) "
            "VALUES (?, ?, ?, ?, nextval('review_seq'), ?, coalesce(?, current_timestamp))",
            [review.runbook_id, review.decision, review.reviewer, review.reason, SCHEMA_VERSION, created],
        )
