"""Worker processes that end with the process that started them, however it ends (kill -9 included): ingest's
parsers, and the second scorer of a large similarity refresh.

A pool's workers wait for work on a pipe that they themselves hold open, so a parent that dies without
shutting the pool down leaves them waiting forever, each holding what it had parsed. On Linux the kernel
kills a worker when its parent dies (`PR_SET_PDEATHSIG`); elsewhere a thread in the worker watches its
parent. Either way the worker first checks that its parent is still the process that started the pool: the
parent may have died before the worker could ask to die with it.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

_PR_SET_PDEATHSIG = 1
WATCH_INTERVAL_S = 0.5


def _die_with_parent_linux() -> bool:
    """Ask the kernel to SIGKILL this process when its parent ends; False when that cannot be done."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(WATCH_INTERVAL_S)
    os._exit(1)


def _leave_signals_to_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


_at_fork = False


def start_worker(parent_pid: int) -> None:
    """Pool initializer: tie this worker's life to `parent_pid`'s, and leave signals to the parent.

    A signal sent to the whole process group (Ctrl-C, a closed terminal, `kill -TERM -PGID`) reaches the
    workers too: they ignore SIGINT (the parent unwinds and shuts the pool down) and end quietly on SIGTERM and
    SIGHUP, instead of each printing the traceback of the handler they inherited from the parent. The cyclic
    garbage collector runs in the worker whatever the parent's state when it forked."""
    _leave_signals_to_parent()
    gc.enable()  # the parent may have forked this worker with its collector paused (ingest does)
    if not _die_with_parent_linux():
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True, name="parent-watch").start()
    if os.getppid() != parent_pid:  # the parent ended before the request above took effect
        os._exit(1)


def child_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of `workers` processes that end when this process ends.

    Workers are forked where fork exists: `start_worker` needs them to be children of this process (a
    forkserver's children are not), and forking spares each worker re-importing what it runs.
    """
    global _at_fork
    if not _at_fork and hasattr(os, "register_at_fork"):
        # Also right after the fork, before the pool's own start-up code: a signal may come in between.
        os.register_at_fork(after_in_child=_leave_signals_to_parent)
        _at_fork = True
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=start_worker, initargs=(os.getpid(),)
    )
