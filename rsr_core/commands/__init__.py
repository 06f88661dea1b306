"""Command modules of `rsr`; each exposes `register(subparsers)`."""

from rsr_core.commands import (
    analysis,
    app,
    browse,
    demo,
    discover,
    export,
    ingest,
    rewrite,
    runbooks,
    sandbox,
    stats,
    worker,
)

COMMAND_MODULES = [
    app,
    ingest,
    stats,
    browse,
    analysis,
    export,
    discover,
    rewrite,
    runbooks,
    sandbox,
    worker,
    demo,
]
