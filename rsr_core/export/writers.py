"""Streaming writers, one per format. Rows are written as they come (JSONL line by line, Parquet by row
group, ATIF file by file) under a temporary name that replaces the output only when the export completes
(rsr_core/outputs.py: existing paths are replaced only with `force`, and never when they are not outputs)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from rsr_core.export import schema
from rsr_core.export.schema import Conversation
from rsr_core.formats.atif_write import relative_path, trajectory_document
from rsr_core.formats.training import training_steps
from rsr_core.models import Review, Trajectory, TransferVerdict
from rsr_core.outputs import AtomicDir, AtomicFile, OutputError

CARD_MARKER = "<!-- rsr-studio export dataset card -->"


class ExportError(OutputError):
    """The export cannot be written where asked (the message says why)."""


class RowWriter(Protocol):
    """Receives exported trajectories in order; `close` makes the output appear, `abort` removes it."""

    per_trajectory: bool
    """It writes a trajectory once (a file each), not a row per training conversation."""

    @property
    def calls(self) -> bool:
        """A row it wrote holds a tool call (the card types `tool_calls` by it, rsr_core/export/schema.py)."""
        ...

    def write(
        self, trajectory: Trajectory, messages: list[dict[str, str]], carried: Carried | None
    ) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


Carried = tuple[TransferVerdict | None, list[Review]]


def _json_line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


class _FileWriter:
    per_trajectory = False

    def __init__(self, out: Path, force: bool, binary: bool = False):
        if out.is_dir() and not out.is_symlink():
            raise ExportError(f"{out}: is a directory; this format writes one file")
        self.out = out
        self.file = AtomicFile(out, force, binary=binary)

    def close(self) -> None:
        self.file.commit()

    def abort(self) -> None:
        self.file.abort()


class JsonlWriter(_FileWriter):
    """SFT chat JSONL: {"messages": [{role, content}], task_id, trajectory_id, …} per line; or ShareGPT
    ({"conversations": [{from, value}], …}) — as JSONL, or as one JSON array when the file ends in .json.
    Every row has every column of the schema (rsr_core/export/schema.py), in its order."""

    def __init__(self, out: Path, force: bool, sharegpt: bool = False):
        super().__init__(out, force)
        self.conversation: Conversation = "conversations" if sharegpt else "messages"
        self.array = sharegpt and out.suffix.lower() == ".json"
        self.rows = 0
        self.calls = False
        self.fh = self.file.handle
        if self.array:
            self.fh.write("[\n")

    def write(self, trajectory: Trajectory, messages: list[dict[str, str]], carried: Carried | None) -> None:
        """Write one row."""
        line = _json_line(schema.row(trajectory, messages, self.conversation))
        self.calls = self.calls or schema.has_calls(messages)
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
        super().close()


ROW_GROUP_BYTES = 64 << 20
"""A row group is written at this much text, whatever its rows: `string` offsets are 32-bit, so one column chunk
must stay under 2 GiB (long observations make a thousand rows far more than a thousand small ones)."""


class _ParquetRows:
    """Rows of the schema to an open binary file at `path`, one row group at a time. Written with `tool_calls`
    typed as JSON loads an export without a call (rsr_core/export/schema.py) until a row holds one: then what
    was written is copied, cast to the declared type of calls, into a file that replaces this one at `close`."""

    def __init__(self, handle: IO[Any], path: Path, row_group_rows: int):
        self.row_group_rows = row_group_rows
        self.handle, self.path = handle, path
        self.buffer: list[dict[str, Any]] = []
        self.size = 0
        self.calls = False
        self.schema = schema.arrow_schema(calls=False)
        self.pq = pq.ParquetWriter(handle, self.schema, compression="zstd")
        self.typed: AtomicFile | None = None

    def write(self, trajectory: Trajectory, messages: list[dict[str, str]]) -> None:
        if not self.calls and schema.has_calls(messages):
            self._type_calls()
        self.buffer.append(schema.row(trajectory, messages))
        self.size += sum(len(m["content"]) for m in messages)
        if len(self.buffer) >= self.row_group_rows or self.size >= ROW_GROUP_BYTES:
            self.flush()

    def _type_calls(self) -> None:
        """The first row with a tool call: go on in a file whose `tool_calls` are OpenAI's calls."""
        self.flush()
        self.pq.close()
        if not self.handle.closed:
            self.handle.flush()
        self.calls, self.schema = True, schema.arrow_schema()
        self.typed = AtomicFile(self.path, force=True, binary=True)
        self.pq = pq.ParquetWriter(self.typed.handle, self.schema, compression="zstd")
        with pq.ParquetFile(self.path) as written:
            for i in range(written.num_row_groups):
                self.pq.write_table(written.read_row_group(i).cast(self.schema))

    def flush(self) -> None:
        if self.buffer:
            self.pq.write_table(pa.Table.from_pylist(self.buffer, schema=self.schema))
            self.buffer, self.size = [], 0

    def close(self) -> None:
        """Write the last row group and the footer (and put the file with typed calls in place)."""
        self.flush()
        self.pq.close()
        if self.typed is not None:
            self.typed.commit()

    def abort(self) -> None:
        """Stop writing; remove the file with typed calls, if any (the caller removes its own)."""
        try:
            self.pq.close()
        finally:
            if self.typed is not None:
                self.typed.abort()


class ParquetRowWriter(_FileWriter):
    """Parquet with the SFT JSONL columns, written one row group at a time."""

    def __init__(self, out: Path, force: bool, row_group_rows: int = 1000):
        super().__init__(out, force, binary=True)
        self.rows = _ParquetRows(self.file.handle, self.file.temp, row_group_rows)

    @property
    def calls(self) -> bool:
        """A row written holds a tool call."""
        return self.rows.calls

    def write(self, trajectory: Trajectory, messages: list[dict[str, str]], carried: Carried | None) -> None:
        """Buffer one row; a full buffer becomes a row group."""
        self.rows.write(trajectory, messages)

    def close(self) -> None:
        """Write the last row group and the footer, and move the file into place."""
        self.rows.close()
        super().close()

    def abort(self) -> None:
        """Remove what was written."""
        try:
            self.rows.abort()
        finally:
            super().abort()


HF_DATA_FILE = "data/train-00000-of-00001.parquet"
"""Where an `hf` directory keeps its rows (the name `datasets`' `push_to_hub` gives a one-shard train split)."""


class HfDirWriter:
    """A Hugging Face dataset directory: the rows as Parquet under data/, the card as README.md; ready for
    `huggingface-cli upload`, and `datasets.load_dataset(<dir>)` reads it with the card's features."""

    per_trajectory = False

    def __init__(self, out: Path, force: bool, row_group_rows: int = 1000):
        self.out = out
        self.dir = AtomicDir(out, force, ours=lambda path: is_dir_export(path, "hf"))
        self.partial = self.dir.temp
        try:
            data = self.partial / HF_DATA_FILE
            data.parent.mkdir()
            self.handle = data.open("wb")
            self.rows = _ParquetRows(self.handle, data, row_group_rows)
        except BaseException:
            self.dir.abort()
            raise

    @property
    def calls(self) -> bool:
        """A row written holds a tool call."""
        return self.rows.calls

    def write(self, trajectory: Trajectory, messages: list[dict[str, str]], carried: Carried | None) -> None:
        """Buffer one row; a full buffer becomes a row group."""
        self.rows.write(trajectory, messages)

    def add_card(self, text: str) -> None:
        """The dataset card goes inside the directory (the Hub shows it; `datasets` reads its features)."""
        (self.partial / "README.md").write_text(text, encoding="utf-8")

    def close(self) -> None:
        """Finish the data file and move the directory into place."""
        self.rows.close()
        self.handle.close()
        self.dir.commit()

    def abort(self) -> None:
        """Remove what was written."""
        try:
            self.rows.abort()
            self.handle.close()
        finally:
            self.dir.abort()


class AtifDirWriter:
    """One ATIF file per trajectory under <out>/<task>/; the training view (steps that train only) unless
    `full`, which keeps every step and carries the pipeline verdicts (the lossless archive)."""

    per_trajectory = True
    calls = False  # no rows, no row schema

    def __init__(self, out: Path, full: bool, force: bool):
        self.out = out
        self.full = full
        self.dir = AtomicDir(out, force, ours=is_atif_export)
        self.partial = self.dir.temp

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

    def add_card(self, text: str) -> None:
        """The dataset card goes inside the directory."""
        (self.partial / "README.md").write_text(text, encoding="utf-8")

    def close(self) -> None:
        """Move the directory into place."""
        self.dir.commit()

    def abort(self) -> None:
        """Remove what was written."""
        self.dir.abort()


def is_dir_export(path: Path, fmt: str) -> bool:
    """Is this directory an earlier export of this tool in `fmt` (its dataset card says so)?"""
    card = path / "README.md"
    try:
        with card.open(encoding="utf-8", errors="replace") as fh:
            head = fh.read(1 << 20)  # the front matter before the marker grows with the card's tags
    except OSError:
        return False
    at = head.find(CARD_MARKER)
    return at >= 0 and f"- Format: `{fmt}`" in head[at : at + 4000]


def is_atif_export(path: Path) -> bool:
    """Is this directory an earlier `atif` export of this tool (its dataset card says so)?"""
    return is_dir_export(path, "atif")


WRITERS: dict[str, Callable[[Path, bool, bool], RowWriter]] = {
    "sft-jsonl": lambda out, full, force: JsonlWriter(out, force),
    "sharegpt": lambda out, full, force: JsonlWriter(out, force, sharegpt=True),
    "parquet": lambda out, full, force: ParquetRowWriter(out, force),
    "atif": lambda out, full, force: AtifDirWriter(out, full, force),
    "hf": lambda out, full, force: HfDirWriter(out, force),
}
"""The writer of every export format (rsr_core/vocabulary.py's EXPORT_FORMATS), from (out, full, force)."""


def open_writer(fmt: str, out: Path, full: bool = False, force: bool = False) -> RowWriter:
    """The writer of a format (`full`: an archive, every step and the verdicts; `force`: replace an earlier
    output, see rsr_core/outputs.py)."""
    make = WRITERS.get(fmt)
    if make is None:
        raise ExportError(f"unknown format {fmt!r}")
    return make(out, full, force)
