"""Command modules of `rsr`; each exposes `register(subparsers)`."""

from rsr_core.commands import analysis, browse, export, ingest, stats

COMMAND_MODULES = [ingest, stats, browse, analysis, export]
