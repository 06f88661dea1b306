"""`rsr export`: fine-tuning data (SFT chat JSONL, ShareGPT, Parquet, a Hugging Face dataset directory, ATIF), only
what should train."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from rsr_core.commands.common import TerminalProgress, add_db, add_json, emit, open_store
from rsr_core.errors import printable
from rsr_core.outputs import OutputError
from rsr_core.vocabulary import EXPORT_FORMATS as FORMATS
from rsr_core.vocabulary import KINDS, LEFT_OUT, spoken_list

if TYPE_CHECKING:
    from rsr_core.export import ExportSummary
    from rsr_core.settings import Settings


def _kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated list of {', '.join(KINDS)}, got {text!r}"
        )
    return kinds


def _checked(check: str) -> Callable[[str], str]:
    """An argparse type from a card metadata check of rsr_core.export.models (its ValueError becomes argparse's
    one-line error); imported when an argument is parsed, so that building the parser stays light."""

    def parse(text: str) -> str:
        from rsr_core.export import models

        checker: Callable[[str], str] = getattr(models, check)
        try:
            return checker(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command."""
    p = sub.add_parser(
        "export",
        help=f"write fine-tuning data: {spoken_list(FORMATS)}",
        description=(
            "Export what should train, with provenance: rewrites that passed the verifier, show no answer "
            "transfer and whose runbook no human rejected, plus terminus-2 discovery successes unchanged; never "
            "other harnesses' discovery runs, runs that tampered with the verifier or (unless "
            "--include-scripted) runs of the scripted demo model. Exact duplicates are dropped and a dataset card "
            "is written with the output (<stem>.card.md beside a file, README.md inside an atif or hf directory). An "
            "existing output is replaced only with --force. --all turns the training filters off (archiving, "
            "moving data)."
        ),
    )
    p.add_argument("--format", required=True, choices=FORMATS, help="output format")
    p.add_argument(
        "--out",
        required=True,
        help="output file (a new or empty directory for atif and hf; ShareGPT .json = array)",
    )
    p.add_argument(
        "--kind",
        type=_kinds,
        default=None,
        metavar="KIND[,KIND]",
        help="trajectory kinds to select (default rewrite,discovery; with --all every kind)",
    )
    p.add_argument(
        "--include-direct-terminus",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="include terminus-2 discovery successes unchanged, as in the paper (default: yes)",
    )
    p.add_argument("--task", nargs="+", action="extend", default=[], metavar="ID", help="only these task ids")
    p.add_argument(
        "--include-scripted",
        action="store_true",
        help="keep runs whose model answers were scripted (the demo); training exports leave them out",
    )
    p.add_argument(
        "--reasoning",
        choices=("drop", "keep"),
        default="drop",
        help="the model's thinking in assistant turns: drop (default) or keep, as <think>...</think> before "
        "each answer",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an existing output (a regular file, or an earlier atif export directory)",
    )
    p.add_argument(
        "--all",
        dest="all_trajectories",
        action="store_true",
        help="training filters off: every selected trajectory (atif: every step, with verdicts and reviews)",
    )
    p.add_argument(
        "--license",
        type=_checked("check_license"),
        default=None,
        metavar="ID",
        help="license id for the dataset card, e.g. apache-2.0 (default: none written)",
    )
    p.add_argument(
        "--task-category",
        dest="task_categories",
        type=_checked("check_category"),
        nargs="+",
        action="extend",
        default=None,
        metavar="CATEGORY",
        help="the card's Hub task categories (default: text-generation)",
    )
    p.add_argument(
        "--tag",
        dest="tags",
        type=_checked("check_tag"),
        nargs="+",
        action="extend",
        default=None,
        metavar="TAG",
        help="the card's Hub tags (default: rsr-studio agents terminal)",
    )
    add_db(p)
    add_json(p)
    p.set_defaults(handler=export_cmd)


def describe(summary: ExportSummary) -> str:
    """The human summary: what was written, how many were left out and why."""
    left = summary.left_out
    counts = ((r.words, getattr(left, r.name)) for r in LEFT_OUT)
    reasons = ", ".join(f"{words} {n}" for words, n in counts if n)
    return "\n".join(
        [
            f"exported {summary.exported} of {summary.selected} selected trajectories to {summary.out} "
            f"({summary.format}{', ' + summary.atif_version if summary.atif_version else ''})",
            f"left out {left.total}" + (f": {reasons}" if reasons else ""),
            f"exact duplicates dropped {summary.duplicates}",
            f"dataset card {summary.card}",
        ]
    )


def export_cmd(args: argparse.Namespace, settings: Settings) -> int:
    """Run the export."""
    from rsr_core.export import ExportFilters, export
    from rsr_core.export.models import CardMeta

    filters = ExportFilters(
        kinds=args.kind,
        task_ids=args.task,
        include_direct_terminus=args.include_direct_terminus,
        all_trajectories=args.all_trajectories,
        include_scripted=args.include_scripted,
        keep_reasoning=args.reasoning == "keep",
    )
    meta = CardMeta(license=args.license)
    if args.task_categories is not None:
        meta.task_categories = args.task_categories
    if args.tags is not None:
        meta.tags = args.tags
    store = open_store(args, settings, read_only=True)
    progress = TerminalProgress(args, "export", "trajectory")
    try:
        summary = export(
            store, args.format, args.out, filters, on_progress=progress, force=args.force, meta=meta
        )
    except OutputError as exc:
        print(f"rsr: {printable(str(exc))}", file=sys.stderr)
        return 1
    finally:
        progress.close()
    emit(args, summary.model_dump(mode="json"), describe(summary))
    return 0
