"""Streaming writers, one per format. Rows are written as they come (JSONL line by line, Parquet by row
group, ATIF file by file) into a `.partial` path that replaces the output only when the export completes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from rsr_core.export.atif import relative_path, trajectory_document
from rsr_core.export.messages import ROW_COLUMNS, row_metadata, sharegpt_conversation, training_steps
from rsr_core.models import Review, Trajectory, TransferVerdict


class ExportError(RuntimeError):
    """The export cannot be written where asked (the message says why)."""


class RowWriter(Protocol):
    """Receives exported trajectories in order; `close` makes the output appear, `abort` removes it."""

    def write(
        self, trajectory: Trajectory, messages: list[dict[str, str]], carried: Carried | None
    ) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


Carried = tuple[TransferVerdict | None, list[Review]]


def _json_line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


class _FileWriter:
    def __init__(self, out: Path):
        if out.is_dir():
            raise ExportError(f"{out} is a directory; this format writes one file")
        out.parent.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.partial = out.with_name(out.name + ".partial")

    def close(self) -> None:
        os.replace(self.partial, self.out)

    def abort(self) -> None:
        self.partial.unlink(missing_ok=True)


class JsonlWriter(_FileWriter):
    """SFT chat JSONL: {"messages": [{role, content}], task_id, trajectory_id, …} per line; or ShareGPT
    ({"conversations": [{from, value}], …}) — as JSONL, or as one JSON array when the file ends in .json."""

    def __init__(self, out: Path, sharegpt: bool = False):
        super().__init__(out)
        self.sharegpt = sharegpt
        self.array = sharegpt and out.suffix.lower() == ".json"
        self.rows = 0
        self.fh = self.partial.open("w", encoding="utf-8")
        if self.array:
            self.fh.write("[\n")

    def write(self, trajectory: Trajectory, messages: list[dict[str, str]], carried: Carried | None) -> None:
        """Write one row."""
        if self.sharegpt:
            row = {"conversations": sharegpt_conversation(messages), **row_metadata(trajectory)}
        else:
            row = {"messages": messages, **row_metadata(trajectory)}
        line = _json_line(row)
        if self.array and self.rows:
            line = ",\n" + line.rstrip("\n")
        elif self.array:
            line = line.rstrip("\n")
        self.fh.write(line)
        self.rows += 1

    def close(self) -> None:
        """Finish the file and move it into place."""
        if self.array:
            self.fh.write("\n]\n")
        self.fh.close()
        super().close()

    def abort(self) -> None:
        """Remove what was written."""
        self.fh.close()
        super().abort()


MESSAGE_TYPE = pa.struct([("role", pa.string()), ("content", pa.large_string())])
PARQUET_SCHEMA = pa.schema(
    [("messages", pa.list_(MESSAGE_TYPE))]
    + [(c, pa.float64() if c == "reward" else pa.string()) for c in ROW_COLUMNS]
)


class ParquetRowWriter(_FileWriter):
    """Parquet with the SFT JSONL columns, written one row group at a time."""

    def __init__(self, out: Path, row_group_rows: int = 1000):
        super().__init__(out)
        self.row_group_rows = row_group_rows
        self.buffer: list[dict[str, Any]] = []
        self.pq = pq.ParquetWriter(self.partial, PARQUET_SCHEMA, compression="zstd")

    def write(self, trajectory: Trajectory, messages: list[dict[str, str]], carried: Carried | None) -> None:
        """Buffer one row; a full buffer becomes a row group."""
        self.buffer.append({"messages": messages, **row_metadata(trajectory)})
        if len(self.buffer) >= self.row_group_rows:
            self._flush()

    def _flush(self) -> None:
        if self.buffer:
            self.pq.write_table(pa.Table.from_pylist(self.buffer, schema=PARQUET_SCHEMA))
            self.buffer = []

    def close(self) -> None:
        """Write the last row group and the footer, and move the file into place."""
        self._flush()
        self.pq.close()
        super().close()

    def abort(self) -> None:
        """Remove what was written."""
        self.pq.close()
        super().abort()


class AtifDirWriter:
    """One ATIF file per trajectory under <out>/<task>/; the training view (steps that train only) unless
    `full`, which keeps every step and carries the pipeline verdicts (the lossless archive)."""

    def __init__(self, out: Path, full: bool):
        if out.exists() and not (out.is_dir() and not any(out.iterdir())):
            raise ExportError(
                f"{out} exists and is not an empty directory; the atif format writes a new directory"
            )
        self.out = out
        self.full = full
        self.partial = out.with_name(out.name + ".partial")
        shutil.rmtree(self.partial, ignore_errors=True)
        self.partial.mkdir(parents=True)

    def write(self, trajectory: Trajectory, messages: list[dict[str, str]], carried: Carried | None) -> None:
        """Write one trajectory file."""
        transfer, reviews = carried or (None, [])
        if self.full:
            doc = trajectory_document(trajectory, None, transfer, reviews)
        else:
            kept = training_steps(trajectory.steps)
            steps = [s.model_copy(update={"index": i}) for i, s in enumerate(kept, 1)]
            doc = trajectory_document(trajectory, steps)
            doc["extra"]["rsr"]["training_view"] = {"steps_removed": len(trajectory.steps) - len(steps)}
        path = self.partial / relative_path(trajectory)
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")

    def close(self) -> None:
        """Move the directory into place."""
        if self.out.exists():
            self.out.rmdir()
        os.replace(self.partial, self.out)

    def abort(self) -> None:
        """Remove what was written."""
        shutil.rmtree(self.partial, ignore_errors=True)


def open_writer(fmt: str, out: Path, full: bool = False) -> RowWriter:
    """The writer of a format."""
    if fmt == "sft-jsonl":
        return JsonlWriter(out)
    if fmt == "sharegpt":
        return JsonlWriter(out, sharegpt=True)
    if fmt == "parquet":
        return ParquetRowWriter(out)
    if fmt == "atif":
        return AtifDirWriter(out, full)
    raise ExportError(f"unknown format {fmt!r}")
