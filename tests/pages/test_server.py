"""The studio server's process settings for pages drawn beside background work (rsr_core/ui/server.py,
data.background_priority)."""

from __future__ import annotations

import gc
import os
import sys
import threading

from rsr_core.ui.data import background_priority
from rsr_core.ui.server import SWITCH_INTERVAL_S, warm


def test_background_work_runs_at_the_lowest_priority_and_only_that_thread():
    seen: dict[str, int] = {}

    def work() -> None:
        background_priority()
        seen["worker"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["worker"] == 19
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before  # this thread untouched


def test_the_warmed_up_server_switches_threads_often():
    default = sys.getswitchinterval()
    try:
        warm(steps=(lambda: None,))
        assert sys.getswitchinterval() == SWITCH_INTERVAL_S < default
    finally:
        gc.unfreeze()
        sys.setswitchinterval(default)
