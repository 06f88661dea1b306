"""Questions about this machine's processes and paths, asked in one way everywhere."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Is process `pid` of this host alive? (One we may not signal counts as alive: it exists.)"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def inside(path: Path, root: Path) -> bool:
    """Is `path` the directory `root` or under it? Both must already be resolved: no link is looked at."""
    return path == root or path.is_relative_to(root)
