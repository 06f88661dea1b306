"""The job runner (the driver): the only writer of the store; a backend runs the units (threads here, or Ray
tasks on a cluster); each result lands in one transaction.

A unit's outputs and its `done` status commit together, and follow-up units have deterministic ids, so after a
crash (even `kill -9`) `resume` re-runs exactly the units that never finished: nothing lost, nothing twice.
Two kinds of job: rewrite (plan -> critic -> execute -> filter) and discover (tasks x harnesses x runs).
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import duckdb

from rsr_core.errors import RsrError
from rsr_core.jobs.backends import ThreadBackend
from rsr_core.jobs.control import runner_alive
from rsr_core.jobs.discovery import DiscoverParams
from rsr_core.models import CriticFlag, Runbook, Trajectory, TransferVerdict
from rsr_core.protocols import LLM, Backend, SandboxProvider
from rsr_core.rewrite.critic import critique_text
from rsr_core.rewrite.units import RewriteParams, stable_id
from rsr_core.store import Store, queries
from rsr_core.store import jobs as jobs_sql
from rsr_core.store import pipeline as pipeline_sql
from rsr_core.store.rules import solved

Progress = Callable[[str, dict[str, dict[str, int]]], None]


class JobError(RsrError):
    """A job cannot start or resume (no sources, unknown job, already running)."""


T = TypeVar("T")


def present(value: T | None, what: str) -> T:
    """`value`, or a JobError saying the store no longer holds `what` (a unit's inputs were deleted)."""
    if value is None:
        raise JobError(f"{what} is no longer in the store")
    return value


JobParams = RewriteParams | DiscoverParams
UnitDone = Callable[[dict[str, Any], dict[str, Any] | None, str | None], None]


def params_of(raw: dict[str, Any]) -> JobParams:
    """A stored job's parameters (jobs without a `job_kind` are rewrite jobs)."""
    if raw.get("job_kind") == "discover":
        return DiscoverParams(**raw)
    return RewriteParams(**{k: v for k, v in raw.items() if k != "job_kind"})


class JobRunner:
    """Runs jobs against injected services: a backend, or a model endpoint and sandboxes for the default
    thread backend."""

    def __init__(
        self,
        store: Store,
        llm: LLM | None = None,
        sandboxes: SandboxProvider | None = None,
        workers: int = 1,
        on_progress: Progress | None = None,
        gc: Callable[[str], Any] | None = None,
        backend: Backend | None = None,
        on_unit: UnitDone | None = None,
        llm_limit: int | None = None,
    ):
        self.store = store
        if backend is None:
            if llm is None or sandboxes is None:
                raise ValueError("the thread backend needs a model client and sandboxes")
            backend = ThreadBackend(llm, sandboxes, workers, llm_limit)
        self.backend = backend
        self.workers = backend.slots
        self.on_progress = on_progress
        self.on_unit = on_unit
        self.gc = gc
        self.cancel_event = threading.Event()
        self.requeued: dict[str, dict[str, int]] = {}
        """What the last `resume` put back in the queue: {status it was in: {unit kind: n}}."""

    # -- starting -------------------------------------------------------------------------------
    def sources_for(self, params: RewriteParams) -> list[str]:
        """Successful discovery trajectories named by --source / --task (all successes when neither)."""
        with self.store.reading() as cur:
            return queries.rewrite_sources(cur, params.sources, params.tasks)

    def create(self, params: RewriteParams) -> str:
        """A new job with its first plan units (K per source)."""
        sources = self.sources_for(params)
        if not sources:
            raise JobError(
                "no successful discovery trajectories to rewrite (reward >= 1.0) for the given "
                "--task/--source; ingest or discover some first"
            )
        job_id = f"job-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        scripted = any(
            m.startswith("scripted")
            for m in (params.planner_model, params.critic_model, params.executor_model)
        )
        with self.store.transaction() as cur:
            jobs_sql.create_job(cur, job_id, params.model_dump(), scripted)
            jobs_sql.add_units(
                cur, job_id, [self._plan_unit(job_id, s, v, 1) for s in sources for v in range(params.k)]
            )
        return job_id

    def create_discovery(self, params: DiscoverParams) -> str:
        """A new discovery job: one unit per task x harness x run."""
        job_id = f"job-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
        with self.store.transaction() as cur:
            jobs_sql.create_job(cur, job_id, params.model_dump(), params.model.startswith("scripted"))
            jobs_sql.add_units(cur, job_id, params.unit_ids(job_id))
        return job_id

    def _plan_unit(
        self,
        job_id: str,
        source: str,
        variant: int,
        round_: int,
        parent: str | None = None,
        critique: str | None = None,
    ) -> tuple[str, str, dict]:
        lineage = stable_id("rb", job_id, source, str(variant))
        payload = {
            "source_trajectory_id": source,
            "variant": variant,
            "round": round_,
            "lineage_id": lineage,
            "runbook_id": f"{lineage}-r{round_}",
            "parent_runbook_id": parent,
            "critique": critique,
        }
        return f"{job_id}/plan/{source}/{variant}/{round_}", "plan", payload

    # -- running --------------------------------------------------------------------------------
    def resume(
        self, job_id: str, on_requeued: Callable[[str, dict[str, dict[str, int]]], None] | None = None
    ) -> str:
        """Re-queue units a crash left running (and failed or cancelled ones), clean up the job's orphaned
        containers, then run it to the end. A job whose runner is still alive is not resumed (its units would
        run twice)."""
        with self.store.transaction() as cur:
            job = jobs_sql.get_job(cur, job_id)
            if job is None:
                raise JobError(f"no job {job_id!r}")
            if job["status"] == "running" and runner_alive(job):
                raise JobError(
                    f"job {job_id} is running in PID {job['owner_pid']} on {job['owner_host']}; "
                    f"cancel it first (`rsr jobs cancel {job_id}`)"
                )
            self.requeued = jobs_sql.requeue(cur, job_id, ("running", "failed", "cancelled"))
        if on_requeued is not None:
            on_requeued(job_id, self.requeued)
        if self.gc is not None:
            self.gc(job_id)
        return self.run(job_id)

    def run(self, job_id: str) -> str:
        """Run until no unit is left; returns the final status. The store is opened per scheduling round and per
        result (one transaction each), never held while units run."""
        with self.store.transaction() as tx:
            params = params_of(present(jobs_sql.get_job(tx, job_id), f"job {job_id}")["params"])
            jobs_sql.set_status(tx, job_id, "running", owner_pid=os.getpid(), owner_host=socket.gethostname())
        inflight: dict[Any, dict] = {}
        failed = False
        try:
            while True:
                for unit, inputs in self._next_units(job_id, params, self.backend.slots - len(inflight)):
                    inflight[self.backend.submit(unit["kind"], inputs)] = unit
                if not inflight:
                    break
                finished = self.backend.wait(list(inflight), timeout=1.0)
                for handle, result, error in finished:
                    unit = inflight.pop(handle)
                    try:
                        if error is not None:
                            raise error
                        assert result is not None
                        self._apply(unit, result, params, job_id)
                        if self.on_unit:
                            self.on_unit(unit, result, None)
                    except Exception as exc:  # noqa: BLE001 - recorded on the unit; resume retries it
                        failed = True
                        message = f"{type(exc).__name__}: {exc}"
                        with self.store.transaction() as tx:
                            jobs_sql.mark_failed(tx, unit["unit_id"], message)
                        if self.on_unit:
                            self.on_unit(unit, None, message)
                if finished:
                    self._progress(job_id)
        finally:
            self.backend.close()
        return self._finish(job_id, failed, getattr(params, "gate", "critic"))

    def _next_units(self, job_id: str, params: JobParams, free: int) -> list[tuple[dict, dict[str, Any]]]:
        """One scheduling round in one transaction: notice a cancel request, add executions of newly approved
        runbooks (human gate), mark up to `free` pending units running and read their inputs."""
        picked: list[tuple[dict, dict[str, Any]]] = []
        with self.store.transaction() as tx:
            if jobs_sql.cancel_requested(tx, job_id):
                self.cancel_event.set()
            if self.cancel_event.is_set():
                return picked
            if isinstance(params, RewriteParams):
                self._schedule_reviewed(tx, job_id, params)
            for unit in jobs_sql.pending_units(tx, job_id, free) if free > 0 else []:
                jobs_sql.mark_running(tx, unit["unit_id"])
                picked.append((unit, self._inputs(unit, params, job_id)))
        return picked

    def _finish(self, job_id: str, failed: bool, gate: str) -> str:
        with self.store.transaction() as cur:
            if self.cancel_event.is_set():
                jobs_sql.cancel_pending(cur, job_id)
                status = "cancelled"
            elif failed:
                status = "failed"
            elif gate == "human" and jobs_sql.pending_review(cur, job_id):
                status = "waiting_review"
            else:
                status = "done"
            jobs_sql.set_status(cur, job_id, status)
        self._progress(job_id)
        return status

    def _progress(self, job_id: str) -> None:
        if self.on_progress:
            with self.store.reading() as cur:
                counts = jobs_sql.unit_counts(cur, job_id)
            self.on_progress(job_id, counts)

    def _schedule_reviewed(self, cur: duckdb.DuckDBPyConnection, job_id: str, params: RewriteParams) -> None:
        if params.gate != "human":
            return
        approved = jobs_sql.approved_without_executions(cur, job_id)
        if approved:
            jobs_sql.add_units(
                cur, job_id, [u for rb in approved for u in self._exec_units(job_id, rb, params)]
            )

    def _exec_units(self, job_id: str, runbook_id: str, params: RewriteParams) -> list[tuple[str, str, dict]]:
        return [
            (f"{job_id}/exec/{runbook_id}/{m}", "execute", {"runbook_id": runbook_id, "run_index": m})
            for m in range(params.m)
        ]

    # -- inputs and results ----------------------------------------------------------------------
    def _inputs(self, unit: dict, params: JobParams, job_id: str) -> dict[str, Any]:
        with self.store.reading() as cur:
            if isinstance(params, DiscoverParams):
                task = self.store.get_task(unit["payload"]["task_id"], with_hidden=True)
                if task is None:
                    raise JobError(f"job {job_id}: task {unit['payload']['task_id']!r} is not in the store")
                return {
                    **unit["payload"],
                    "unit_id": unit["unit_id"],
                    "job_id": job_id,
                    "params": params.model_dump(),
                    "task": task.model_dump(mode="json"),
                }
            return self._inputs_from(cur, unit, params, job_id)

    def _inputs_from(
        self, cur: duckdb.DuckDBPyConnection, unit: dict, params: RewriteParams, job_id: str
    ) -> dict[str, Any]:
        p = unit["payload"]
        runbook = pipeline_sql.get_runbook(cur, p["runbook_id"]) if unit["kind"] != "plan" else None
        source_id = p["source_trajectory_id"] if runbook is None else runbook.source_trajectory_id
        source = (
            present(self.store.get_trajectory(source_id), f"trajectory {source_id}")
            if unit["kind"] != "execute"
            else None
        )
        task_id = present(
            runbook.task_id if runbook is not None else present(source, "the source").task_id,
            f"the task of unit {unit['unit_id']}",
        )
        task = present(self.store.get_task(task_id, with_hidden=unit["kind"] != "plan"), f"task {task_id}")
        inputs = {**p, "job_id": job_id, "params": params.model_dump(), "task": task.model_dump(mode="json")}
        if source is not None:
            inputs["source"] = source.model_dump(mode="json")
        if runbook is not None:
            inputs["runbook"] = runbook.model_dump(mode="json")
        if unit["kind"] == "filter":
            rewrite = present(
                self.store.get_trajectory(p["trajectory_id"]), f"trajectory {p['trajectory_id']}"
            )
            inputs["rewrite"] = rewrite.model_dump(mode="json")
        return inputs

    def _apply(self, unit: dict, result: dict[str, Any], params: JobParams, job_id: str) -> None:
        p, kind = unit["payload"], unit["kind"]
        with self.store.transaction() as cur:
            follow: list[tuple[str, str, dict]] = []
            summary: dict[str, Any] = {}
            if kind == "discover":
                traj = Trajectory(**result["trajectory"])
                self.store.write_trajectories([traj], cur)
                summary = {
                    "trajectory_id": traj.trajectory_id,
                    "reward": traj.reward,
                    "verifier_tampered": traj.verifier_tampered,
                    "turns": result["turns"],
                    "claimed": result["claimed"],
                    "stop_reason": result["stop_reason"],
                }
            elif kind == "plan":
                rb = Runbook(**result["runbook"])
                pipeline_sql.insert_runbook(cur, rb)
                follow.append((f"{job_id}/critic/{rb.runbook_id}", "critic", {"runbook_id": rb.runbook_id}))
                summary = {"runbook_id": rb.runbook_id}
            elif kind == "critic":
                flags = [CriticFlag(**f) for f in result["flags"]]
                pipeline_sql.insert_flags(cur, flags)
                pipeline_sql.set_critic_verdict(cur, p["runbook_id"], result["verdict"])
                rb = present(pipeline_sql.get_runbook(cur, p["runbook_id"]), f"runbook {p['runbook_id']}")
                if not isinstance(params, RewriteParams):
                    raise JobError(f"unit {unit['unit_id']}: a critic unit in a discovery job")
                if result["verdict"] == "pass" and params.gate == "critic":
                    follow += self._exec_units(job_id, rb.runbook_id, params)
                elif result["verdict"] == "reject" and rb.round < params.rounds:
                    follow.append(
                        self._plan_unit(
                            job_id,
                            rb.source_trajectory_id,
                            rb.variant,
                            rb.round + 1,
                            rb.runbook_id,
                            critique_text(flags),
                        )
                    )
                summary = {"verdict": result["verdict"], "flags": len(flags)}
            elif kind == "execute":
                traj = Trajectory(**result["trajectory"])
                self.store.write_trajectories([traj], cur)
                if solved(traj.reward, traj.verifier_tampered):
                    follow.append(
                        (
                            f"{job_id}/filter/{traj.trajectory_id}",
                            "filter",
                            {"trajectory_id": traj.trajectory_id, "runbook_id": traj.runbook_id},
                        )
                    )
                summary = {
                    "trajectory_id": traj.trajectory_id,
                    "reward": traj.reward,
                    "turns": result["turns"],
                }
            elif kind == "filter":
                verdict = TransferVerdict(**result["transfer"])
                pipeline_sql.insert_transfer(cur, verdict)
                summary = {"answer_transfer": verdict.answer_transfer}
            jobs_sql.add_units(cur, job_id, follow)
            jobs_sql.mark_done(cur, unit["unit_id"], summary, result.get("usage"), result.get("worker"))
