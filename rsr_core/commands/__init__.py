"""Command modules of `rsr`; each exposes `register(subparsers)`."""

from rsr_core.commands import analysis, browse, ingest, stats

COMMAND_MODULES = [ingest, stats, browse, analysis]
