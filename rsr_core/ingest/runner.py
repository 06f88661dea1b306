"""`rsr ingest`: detect, parse (in worker processes when there is a lot), deduplicate, bulk-write."""

from __future__ import annotations

import gc
import json
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from rsr_core.children import child_pool
from rsr_core.formats.atif_read import carried_hash, is_atif, parse_atif
from rsr_core.formats.provenance import carried_verdicts
from rsr_core.formats.reading import FormatError, parse_json_bytes, sha256
from rsr_core.ingest.detect import EXPECTED, Unit, detect_units
from rsr_core.ingest.fs import read_input, real_root
from rsr_core.ingest.harbor import read_trial
from rsr_core.ingest.rows import Rows, build_rows, gather
from rsr_core.ingest.signatures import SIGNED_KINDS, remembered
from rsr_core.ingest.tasks import content_hash, read_harbor_task, read_tb1_task
from rsr_core.ingest.tb1 import read_tb1_trial
from rsr_core.models import IngestRefusal, IngestReport, Review, Task, Trajectory, TransferVerdict, as_kind
from rsr_core.store import ingest_signatures
from rsr_core.store.pipeline import store_carried_verdicts
from rsr_core.store.store import Store

# A batch of trajectories is one transaction. DuckDB writes the full row groups (122,880 rows) of a large
# transaction straight into the file; small batches go through its log and are compressed again at each
# checkpoint (the figures: benchmarks/RESULTS.md, "Ingest profile"). BATCH_BYTES bounds what a batch holds in
# memory.
BATCH_STEPS = 150_000
BATCH_FILES = 3000
BATCH_BYTES = 64 * 2**20
"""A batch is written once its files total this much: a parsed file holds many times its size in memory until
its batch is written."""
HOLD_S = 2.0
"""Longest time the store's file is kept open across batches before it is let go (and others get their turn);
letting it go after every batch would cost a checkpoint a batch."""
BATCH_TASKS = 256
"""Task directories written in one transaction (a transaction, and an open of the file, for each task cost
many times what storing the task does)."""
PARALLEL_MIN_UNITS = 64
# Units parsed per worker call: their rows travel back as one set of Arrow tables. A chunk also holds at most
# CHUNK_BYTES of trajectory files (a file of many small steps costs tens of times its size once parsed), so
# 32 large files are never in memory at once.
CHUNK_UNITS = 32
CHUNK_BYTES = 4 * 2**20
WINDOW_CHUNKS = 16
"""Chunks in flight per parser process (fewer when they reach BATCH_BYTES of input). While this process
writes a batch (about 0.7 s at paper scale) it hands out no new chunks: the parsers must hold enough work to
keep going meanwhile. Four a parser left them idle for most of every write (benchmarks/RESULTS.md)."""
MAX_ERROR_CHARS = 600


@dataclass
class Parsed:
    """What one unit became: a trajectory, a task, or an error."""

    unit: Unit
    trajectory: Trajectory | None = None
    task: Task | None = None
    task_hash: str | None = None
    error: str | None = None
    transfer: TransferVerdict | None = None
    reviews: list[Review] = field(default_factory=list)
    rows: Rows | None = None
    signed: tuple[str, str] | None = None
    """(the path the unit is remembered by, its signature before it was read), when taken in the parser."""


@dataclass
class Ready:
    """A parsed trajectory with its rows, on its way to the store."""

    unit: Unit
    trajectory: Trajectory
    rows: Rows
    transfer: TransferVerdict | None
    reviews: list[Review]


def _read_atif(path: Path, root: Path, harness: str | None, kind: str | None) -> tuple[Trajectory, dict]:
    data = read_input(path, root, path.name)
    obj = parse_json_bytes(data, "ATIF JSON")
    if not is_atif(obj):
        if isinstance(obj, dict) and "schema_version" in obj:
            parse_atif(obj)  # raises the precise schema_version error
        shape = type(obj).__name__ if not isinstance(obj, dict) else "an object without schema_version"
        raise FormatError(f"root: got {shape}; {EXPECTED}")
    traj, rsr = parse_atif(obj)
    if harness:
        traj.harness = harness
    if kind:
        traj.kind = as_kind(kind)
    traj.content_hash = carried_hash(rsr) or sha256(data)
    return traj, rsr


def parse_unit(unit: Unit, harness: str | None = None, kind: str | None = None) -> Parsed:
    """Parse one unit; never raises for bad input (the error is returned, one line, bounded)."""
    if unit.kind == "error":
        return Parsed(unit, error=unit.error)
    try:
        return _parse(unit, harness, kind)
    except FormatError as exc:
        return Parsed(unit, error=one_line(str(exc)))
    except OSError as exc:
        return Parsed(unit, error=one_line(f"cannot read: {exc.strerror or exc}"))
    except RecursionError:
        return Parsed(unit, error="nested too deeply")
    except ValueError as exc:  # a model refusing a value (pydantic's ValidationError is a ValueError)
        return Parsed(unit, error=one_line(f"invalid value: {_first_line(exc)}"))
    except Exception as exc:  # noqa: BLE001 - a stranger's file must not end the ingest of the others
        return Parsed(unit, error=one_line(f"could not be read ({type(exc).__name__}): {exc}"))


def _parse(unit: Unit, harness: str | None, kind: str | None) -> Parsed:
    root = unit.root or (unit.path if unit.kind != "atif" else unit.path.parent)
    if unit.kind in ("harbor_task", "tb1_task"):
        task = read_harbor_task(unit.path) if unit.kind == "harbor_task" else read_tb1_task(unit.path)
        return Parsed(unit, task=task, task_hash=content_hash(unit.path))
    if unit.kind == "harbor_trial":
        traj = read_trial(unit.path, harness, kind, root)
    elif unit.kind == "tb1_trial":
        traj = read_tb1_trial(unit.path, harness, kind, root)
    else:
        traj, rsr = _read_atif(unit.path, root, harness, kind)
        transfer, reviews = carried_verdicts(rsr, traj.trajectory_id)
        traj.origin = str(unit.path)
        return Parsed(unit, trajectory=traj, transfer=transfer, reviews=reviews)
    traj.origin = str(unit.path)
    return Parsed(unit, trajectory=traj)


def one_line(message: str, limit: int = MAX_ERROR_CHARS) -> str:
    """An error as one line of bounded length."""
    flat = " ".join(message.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _first_line(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        return f"{'.'.join(str(x) for x in first['loc'])}: {first['msg']}"
    return str(exc)


def _signed_parse(unit: Unit, harness: str | None, kind: str | None) -> Parsed:
    """`parse_unit`, with the unit's signature taken just before its files are read."""
    signed = remembered(unit, harness, kind)
    parsed = parse_unit(unit, harness, kind)
    parsed.signed = signed
    return parsed


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (as it was, after).

    Parsing allocates millions of small dicts, lists and models, and the process that stores them receives
    as many: they are freed by reference counting and none forms a cycle, so each pass of the collector would
    only rescan them (in the storing process, the parsed units waiting for their batch as well).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def parse_chunk(
    units: list[Unit], harness: str | None = None, kind: str | None = None, sign: bool = False
) -> list[Parsed]:
    """Parse units and build their trajectories' Arrow rows (`Parsed.rows`); runs in a parser process.
    With `sign`, each unit's signature is taken before it is read (`Parsed.signed`).

    A trajectory whose values Arrow cannot take (e.g. an integer beyond 64 bits) fails alone, with the error
    storing it would give.
    """
    with collector_paused():
        parse = _signed_parse if sign else parse_unit
        parsed = [parse(unit, harness, kind) for unit in units]
        found = [(p, p.trajectory) for p in parsed if p.trajectory is not None]
        try:
            located = build_rows([t for _, t in found])
        except Exception:  # noqa: BLE001 - found file by file below, where each fails alone
            located = []
            kept = []
            for p, traj in found:
                try:
                    located.extend(build_rows([traj]))
                    kept.append((p, traj))
                except Exception as exc:  # noqa: BLE001 - a stranger's file must not end the ingest
                    p.trajectory, p.error = None, one_line(f"could not be stored: {_stored_error(exc)}")
            found = kept
    for (p, _), rows in zip(found, located, strict=True):
        p.rows = rows
    return parsed


def chunked(units: list[Unit]) -> list[list[Unit]]:
    """Units in order, cut into chunks of at most CHUNK_UNITS units and (but for a single unit) CHUNK_BYTES."""
    chunks: list[list[Unit]] = []
    current: list[Unit] = []
    weight = 0
    for unit in units:
        size = unit.size
        if current and (len(current) >= CHUNK_UNITS or weight + size > CHUNK_BYTES):
            chunks.append(current)
            current, weight = [], 0
        current.append(unit)
        weight += size
    if current:
        chunks.append(current)
    return chunks


def in_parallel(workers: int, units: int) -> bool:
    """Are `units` parsed in `workers` parser processes (rather than in this one)?"""
    return workers > 1 and units >= PARALLEL_MIN_UNITS


def _stored_error(exc: Exception) -> str:
    """What a value the store cannot take gives, for the error line (a wrong type is named as such)."""
    if isinstance(exc, (AttributeError, KeyError, IndexError)):
        return f"a value of an unexpected type ({type(exc).__name__}: {exc})"
    return str(exc)


def _parse_all(
    units: list[Unit], harness: str | None, kind: str | None, workers: int, sign: bool = False
) -> Iterator[Parsed]:
    chunks = chunked(units)
    if not in_parallel(workers, len(units)):
        for chunk in chunks:
            yield from parse_chunk(chunk, harness, kind, sign)
        return
    # A bounded window of chunks in flight (in number and in bytes of input): parsed rows never pile up
    # faster than they are written.
    # Interrupted (a signal, an error while storing), the pool is not waited for: its workers may be gone
    # with the same signal, and they end with this process anyway (rsr_core/children.py).
    pool = child_pool(workers)
    try:
        pending: deque = deque()
        weight = 0
        for chunk in chunks:
            pending.append((pool.submit(parse_chunk, chunk, harness, kind, sign), sum(u.size for u in chunk)))
            weight += pending[-1][1]
            while pending and (
                len(pending) >= WINDOW_CHUNKS * workers or (len(pending) > 1 and weight >= BATCH_BYTES)
            ):
                future, size = pending.popleft()
                weight -= size
                yield from future.result()
        while pending:
            yield from pending.popleft()[0].result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


class Ingestor:
    """Stores parsed units: whole files only, duplicates skipped, trajectories written in bulk batches."""

    def __init__(self, store: Store, on_progress: Callable[[int, int], None] | None = None):
        self.store = store
        self.report = IngestReport()
        self._pending: list[Ready] = []
        self._pending_steps = 0
        self._pending_bytes = 0
        self._seen: dict[str, str] = {}
        self._on_progress = on_progress
        self._instructions: dict[str, str | None] = {}
        self._pending_tasks: list[tuple[Path, Task, str]] = []
        self._held = ExitStack()
        self._held_since: float | None = None
        self._signed: dict[Path, tuple[str, str]] = {}
        """Unit path -> (the path it is remembered by, its signature before it was read)."""
        self._sign_in_parse = False
        """Nothing is remembered yet: signatures are taken where the units are parsed, not all beforehand."""

    def run(
        self,
        paths: list[Path],
        harness: str | None = None,
        kind: str | None = None,
        workers: int | None = None,
    ) -> IngestReport:
        """Ingest every unit under `paths`."""
        real_root.cache_clear()  # a root resolved by an earlier ingest of this process may lead elsewhere now
        # Task directories first: a trajectory parsed later can then take its instruction from its task.
        units = sorted(detect_units(paths), key=lambda u: u.kind not in ("harbor_task", "tb1_task"))
        workers = workers if workers is not None else min(4, os.cpu_count() or 1)
        todo = self._unchanged_skipped(units, harness, kind)
        try:
            # The parsers take the cores: the engine's writes run on one thread beside them.
            with self.store.engine_threads(1) if in_parallel(workers, len(todo)) else nullcontext():
                self._parse_and_store(units, todo, harness, kind, workers)
        finally:
            self._held.close()
        return self.report

    def _parse_and_store(
        self, units: list[Unit], todo: list[Unit], harness: str | None, kind: str | None, workers: int
    ) -> None:
        skipped = len(units) - len(todo)
        with collector_paused():
            self._store_parsed(
                _parse_all(todo, harness, kind, workers, self._sign_in_parse), skipped, len(units)
            )
            self._flush_tasks()
            self._flush()

    def _store_parsed(self, parsing: Iterator[Parsed], skipped: int, total: int) -> None:
        for done, parsed in enumerate(parsing, skipped + 1):
            self.report.files += 1
            if parsed.signed is not None:
                self._signed[parsed.unit.path] = parsed.signed
            if parsed.error is not None:
                self._fail(parsed.unit.path, parsed.error)
            elif parsed.task is not None:
                self._store_task(parsed.unit.path, parsed.task, parsed.task_hash or "")
            elif parsed.trajectory is not None and parsed.rows is not None:
                self._queue(
                    Ready(parsed.unit, parsed.trajectory, parsed.rows, parsed.transfer, parsed.reviews)
                )
            if self._on_progress:
                self._on_progress(done, total)

    def _hold(self) -> None:
        """Keep the store's file open across batches, letting it go once it has been held for HOLD_S."""
        now = time.monotonic()
        if self._held_since is not None and now - self._held_since < HOLD_S:
            return
        self._held.close()
        self._held = ExitStack()
        self._held.enter_context(self.store.kept_open())
        self._held_since = now

    def _unchanged_skipped(self, units: list[Unit], harness: str | None, kind: str | None) -> list[Unit]:
        """The units to read: those not stored before with the signature they have now. Each unit skipped
        counts as a file and a duplicate, as reading it again would have found. When no unit is remembered at
        all, every unit is read, and each is signed in the parser right before it is read."""
        if not any(unit.kind in SIGNED_KINDS for unit in units):
            return units
        with self.store.reading() as cur:
            self._sign_in_parse = not ingest_signatures.any_recorded(cur)
        if self._sign_in_parse:
            return units
        for unit in units:
            signed = remembered(unit, harness, kind)
            if signed is not None:
                self._signed[unit.path] = signed
        if not self._signed:
            return units
        with self.store.reading() as cur:
            same = ingest_signatures.unchanged(cur, dict(self._signed.values()))
        todo = []
        for unit in units:
            key = self._signed.get(unit.path)
            if key is None or key[0] not in same:
                todo.append(unit)
                continue
            self.report.files += 1
            self.report.duplicates += 1
        if self._on_progress and len(todo) < len(units):
            self._on_progress(len(units) - len(todo), len(units))
        return todo

    def _signature_rows(self, batch: list[tuple[Ready, str]]) -> list[tuple[str, str, str, str]]:
        """(unit path, signature, trajectory id, content hash) of the signed units of `batch`."""
        rows = []
        for parsed, trajectory_id in batch:
            signed = self._signed.get(parsed.unit.path)
            if signed is not None:
                rows.append((*signed, trajectory_id, parsed.trajectory.content_hash))
        return rows

    def _fail(self, path: Path, error: str) -> None:
        self.report.errors.append(IngestRefusal(path=str(path), error=error))

    def _store_task(self, path: Path, task: Task, task_hash: str) -> None:
        self._pending_tasks.append((path, task, task_hash))
        if len(self._pending_tasks) >= BATCH_TASKS:
            self._flush_tasks()

    def _flush_tasks(self) -> None:
        """Write the task directories parsed so far in one transaction; when it fails, each alone (the one
        that cannot be stored is reported, every other is stored)."""
        batch, self._pending_tasks = self._pending_tasks, []
        if not batch:
            return
        self._hold()
        statuses: list[str | None]
        try:
            with self.store.transaction() as cur:
                statuses = [*self.store.write_tasks([(task, task_hash) for _, task, task_hash in batch], cur)]
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            statuses = [self._write_task(path, task, task_hash) for path, task, task_hash in batch]
        for (_, task, _), status in zip(batch, statuses, strict=True):
            if status is None:
                continue
            self._instructions[task.task_id] = task.instruction
            if status == "added":
                self.report.tasks_added += 1

    def _write_task(self, path: Path, task: Task, task_hash: str) -> str | None:
        try:
            return self.store.write_task(task, task_hash)
        except (pa.ArrowException, OverflowError, TypeError, ValueError) as exc:
            self._fail(path, one_line(f"could not be stored: {exc}"))
            return None

    def _queue(self, parsed: Ready) -> None:
        self._flush_tasks()  # tasks come first: a trajectory may take its instruction from one
        if parsed.unit.kind == "tb1_trial":
            self._task_instruction(parsed)
        self._pending.append(parsed)
        self._pending_steps += parsed.rows.steps
        self._pending_bytes += parsed.unit.size
        if (
            self._pending_steps >= BATCH_STEPS
            or len(self._pending) >= BATCH_FILES
            or self._pending_bytes >= BATCH_BYTES
        ):
            self._flush()

    def _task_instruction(self, parsed: Ready) -> None:
        """A Terminal-Bench run whose results.json has no instruction takes its known task's (which is surer
        than one read out of a prompt)."""
        traj = parsed.trajectory
        if traj.extra.get("instruction_source") == "results.json" or not traj.task_id:
            return
        if traj.task_id not in self._instructions:
            task = self.store.get_task(traj.task_id)
            known = task is not None and task.source_format != "trajectory-only"
            self._instructions[traj.task_id] = task.instruction if task is not None and known else None
        instruction = self._instructions[traj.task_id]
        if not instruction:
            return
        traj.instruction = instruction
        traj.extra["instruction_source"] = "task"
        parsed.rows.overrides = {
            "instruction": instruction,
            "extra": json.dumps(traj.extra, ensure_ascii=False, default=str),
        }

    def _flush(self) -> None:
        batch, self._pending, self._pending_steps, self._pending_bytes = self._pending, [], 0, 0
        if not batch:
            return
        self._hold()
        existing = self.store.existing_hashes(
            [p.trajectory.trajectory_id for p in batch] + [_alt_id(p.trajectory) for p in batch]
        )
        known = {**existing, **self._seen}
        fresh: list[Ready] = []
        stored_before: list[tuple[Ready, str]] = []
        for parsed in batch:
            traj = parsed.trajectory
            same = next(
                (i for i in (traj.trajectory_id, _alt_id(traj)) if known.get(i) == traj.content_hash), None
            )
            if same is not None:
                stored_before.append((parsed, same))
                self.report.duplicates += 1
                continue
            if traj.trajectory_id in known:
                traj.trajectory_id = _alt_id(traj)  # same id, other content: keep both
            self._seen[traj.trajectory_id] = known[traj.trajectory_id] = traj.content_hash
            fresh.append(parsed)
        self._write_or_split(fresh)
        if rows := self._signature_rows(stored_before):
            with self.store.transaction() as cur:
                ingest_signatures.record(cur, rows)

    def _write_or_split(self, batch: list[Ready]) -> None:
        """Write the batch; when the store refuses it, each half on its own, down to the file it cannot take
        (reported, nothing of it stored): every other file is stored, in a few transactions however large the
        batch."""
        if not batch:
            return
        try:
            self.report.tasks_added += self._write(batch)
            self.report.trajectories_added += len(batch)
        except Exception as exc:  # noqa: BLE001 - found by halving, reported per file
            if len(batch) > 1:
                half = len(batch) // 2
                self._write_or_split(batch[:half])
                self._write_or_split(batch[half:])
                return
            parsed = batch[0]
            self._seen.pop(parsed.trajectory.trajectory_id, None)
            self._fail(parsed.unit.path, f"could not be stored: {exc}")

    def _write(self, batch: list[Ready]) -> int:
        """Trajectories and the verdicts they carry, in one transaction; returns tasks added."""
        with self.store.transaction() as cur:
            tables = gather([(p.rows, p.trajectory.trajectory_id) for p in batch])
            added = self.store.write_tables(tables, [p.trajectory for p in batch], cur)
            for parsed in batch:
                if parsed.transfer is not None:
                    parsed.transfer.trajectory_id = parsed.trajectory.trajectory_id
                store_carried_verdicts(cur, parsed.transfer, parsed.reviews)
            ingest_signatures.record(
                cur, self._signature_rows([(p, p.trajectory.trajectory_id) for p in batch])
            )
        return added


def _alt_id(traj: Trajectory) -> str:
    return f"{traj.trajectory_id}~{traj.content_hash[:10]}"


def ingest_paths(
    store: Store,
    paths: list[str | Path],
    harness: str | None = None,
    kind: str | None = None,
    workers: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Ingest files and directories into the store; see `Ingestor`. `on_progress(done, total)` is called as
    units are stored."""
    return Ingestor(store, on_progress).run([Path(p) for p in paths], harness, kind, workers)
