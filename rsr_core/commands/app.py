"""`rsr app`: start the studio (the Streamlit app shipped inside the package) on a database."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rsr_core.commands.common import bounded_int

if TYPE_CHECKING:
    from rsr_core.settings import Settings

# The studio is an app, not a script under edit: no file watching, no usage statistics, no developer menu
# ("Deploy", "Rerun"), and no exception details in the browser (pages show their own error box; the server's
# log keeps the traceback).
STREAMLIT_FLAGS = (
    "--client.toolbarMode=viewer",
    "--client.showErrorDetails=none",
    "--server.headless=true",
    "--server.fileWatcherType=none",
    "--server.runOnSave=false",
    "--browser.gatherUsageStats=false",
)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the command."""
    p = sub.add_parser(
        "app",
        help="start the studio (Streamlit) on a database",
        description="Start RSR Studio on a database: browse, compare, review, rewrite and export. The database "
        "is opened per page run and never held, so `rsr` commands can use it at the same time.",
    )
    p.add_argument("--db", help="DuckDB file (default: $RSR_DB, else data/rsr.duckdb)")
    p.add_argument(
        "--port", type=bounded_int(1, 65_535), default=8501, help="port to serve on (default 8501)"
    )
    p.add_argument("--address", default="localhost", help="address to serve on (default localhost)")
    p.set_defaults(handler=run)


def app_script() -> Path:
    """The studio's app module inside the installed package (rsr_core/ui/app.py: the ASGI app `streamlit run`
    serves, which runs the navigation script for every page run)."""
    import rsr_core.ui

    return Path(rsr_core.ui.__file__).resolve().parent / "app.py"


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Replace this process with `streamlit run` of the packaged app (signals go straight to Streamlit)."""
    env = {**os.environ, "RSR_DB": str(Path(args.db or settings.db_path).resolve())}
    argv = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app_script()),
        f"--server.port={args.port}",
        f"--server.address={args.address}",
        *STREAMLIT_FLAGS,
    ]
    sys.stdout.flush()
    os.execve(sys.executable, argv, env)
    return 0  # not reached
