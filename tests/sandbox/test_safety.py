"""Sandbox safety in real containers."""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import threading
import time

import docker
import pytest

from rsr_core.harness import Terminus2Harness
from rsr_core.llm.client import LLMError
from rsr_core.sandbox.docker_sandbox import LABEL, DockerSandbox, Limits
from rsr_core.sandbox.gc import gc_containers
from tests.conftest import answer

pytestmark = pytest.mark.docker
BASE = "rsr-base:bookworm"


def _ours(engine, **labels):
    filters = [f"{LABEL}=1", *[f"{k}={v}" for k, v in labels.items()]]
    return engine.containers.list(all=True, filters={"label": filters})


def test_no_network(docker_engine):
    with DockerSandbox(docker_engine, BASE) as sb:
        res = sb.exec("python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\"")
        assert res.exit_code != 0 and "unreachable" in res.output.lower()
        assert sb.exec("ls /sys/class/net").output.split() == ["lo"]


def test_fork_bomb_is_contained_by_the_pids_limit(docker_engine):
    with DockerSandbox(docker_engine, BASE, Limits(pids=64)) as sb:
        t0 = time.monotonic()
        res = sb.exec("bomb() { bomb | bomb & }; bomb; sleep 2; echo survived", timeout_s=15)
        assert time.monotonic() - t0 < 30
        assert "Resource temporarily unavailable" in res.output or "retry" in res.output
        sb.container.reload()
        assert sb.container.attrs["HostConfig"]["PidsLimit"] == 64
        assert sb.container.status == "running"  # the bomb hit the limit; the sandbox itself is intact


def test_memory_hog_is_killed(docker_engine):
    with DockerSandbox(docker_engine, BASE, Limits(memory_mb=128)) as sb:
        res = sb.exec("python3 -c \"x = bytearray(600 * 1024 * 1024); print('allocated')\"", timeout_s=60)
        assert res.exit_code != 0 and "allocated" not in res.output
        assert sb.exec("echo still-here").output.strip() == "still-here"


def test_long_command_with_short_duration_does_not_block(sandboxes, scripted, csv_task):
    _, llm = scripted(
        [
            {
                "model": "sleeper",
                "turns": [
                    answer("x", "y", "sleep 1000\n", duration=0.5),
                    answer("stuck", "interrupt", "C-c", "printf 'a,1\\n' > /app/out.txt\n"),
                    answer(done=True),
                    answer(done=True),
                ],
            }
        ]
    )
    t0 = time.monotonic()
    r = Terminus2Harness(llm, sandboxes, "sleeper").run(csv_task)
    assert time.monotonic() - t0 < 60
    assert r.reward == 1.0 and r.turns == 4


def test_container_is_gone_after_an_exception_in_the_harness(docker_engine, sandboxes, scripted, csv_task):
    _, llm = scripted([{"model": "other", "response": "x"}])
    with pytest.raises(LLMError):
        Terminus2Harness(llm, sandboxes, "unscripted-model").run(csv_task, labels={"rsr.test": "exception"})
    assert _ours(docker_engine, **{"rsr.test": "exception"}) == []


def test_container_is_gone_after_an_interrupt(docker_engine, sandboxes, scripted, csv_task):
    _, llm = scripted([{"model": "slow", "response": answer()}], latency_ms=3000)
    # interrupt_main does nothing while SIGINT is ignored, as in a test run started in the background
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(2.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            Terminus2Harness(llm, sandboxes, "slow").run(csv_task, labels={"rsr.test": "interrupt"})
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert _ours(docker_engine, **{"rsr.test": "interrupt"}) == []


def test_hidden_tests_are_not_visible_before_verification(sandboxes, scripted, csv_task):
    _, llm = scripted(
        [
            {
                "model": "snoop",
                "turns": [
                    answer(
                        "look",
                        "for tests",
                        "ls /tests /solution /logs/verifier 2>&1; find / -name 'test_*.py' -not -path "
                        "'/proc/*' -not -path '/usr/*' 2>/dev/null | sed 's/^/F''OUND:/'; echo END\n",
                        duration=2.0,
                    ),
                    answer(done=True),
                    answer(done=True),
                ],
            }
        ]
    )
    r = Terminus2Harness(llm, sandboxes, "snoop").run(csv_task)
    seen = r.trajectory.steps[1].observation
    assert seen.count("No such file or directory") == 3 and "END" in seen
    assert "\nFOUND:" not in seen
    # the verifier did run afterwards, with the hidden tests: they fail because out.txt was never written
    assert r.reward == 0.0 and "failed" in r.trajectory.verifier_output


def test_gc_removes_orphans_of_dead_owners(docker_engine):
    orphan = DockerSandbox(docker_engine, BASE, labels={"rsr.owner_pid": "999999", "rsr.test": "orphan"})
    orphan.start()
    live = DockerSandbox(docker_engine, BASE, labels={"rsr.test": "live"})
    live.start()
    try:
        removed = gc_containers(docker_engine)
        assert orphan.name in removed and live.name not in removed
        assert _ours(docker_engine, **{"rsr.test": "orphan"}) == []
    finally:
        live.remove()
        orphan.remove()


def test_gc_tolerates_containers_removed_by_someone_else_meanwhile(docker_engine):
    # Every node of a one-machine cluster runs the job's gc against the same engine at once, and sandboxes
    # remove themselves: a container removed by someone else between the gc's listing and its removal used to
    # raise NotFound out of `rsr jobs resume`. Here another client of the engine removes the same containers,
    # released at the same moment as the gc, round after round.
    labels = {LABEL: "1", "rsr.job": "gc-race", "rsr.owner_pid": str(os.getpid())}
    other_node = docker.from_env()
    try:
        for _ in range(5):
            made = [docker_engine.containers.create(BASE, "sleep 60", labels=labels) for _ in range(4)]
            start = threading.Barrier(2)

            def remove_them(ids=[c.id for c in made], go=start) -> None:  # noqa: B006 - this round's
                go.wait()
                for cid in ids:
                    with contextlib.suppress(docker.errors.APIError):  # the gc may have been first
                        other_node.api.remove_container(cid, force=True)

            remover = threading.Thread(target=remove_them)
            remover.start()
            start.wait()
            removed = gc_containers(docker_engine, job_id="gc-race")
            remover.join()
            assert set(removed) <= {c.name for c in made}  # none reported that it did not remove
            assert _ours(docker_engine, **{"rsr.job": "gc-race"}) == []
    finally:
        other_node.close()


def test_gc_on_nodes_sharing_one_engine_all_at_once(docker_engine):
    labels = {LABEL: "1", "rsr.job": "gc-race", "rsr.owner_pid": str(os.getpid())}
    made = {docker_engine.containers.create(BASE, "sleep 60", labels=labels).name for _ in range(20)}
    errors: list[BaseException] = []
    removed: list[str] = []
    start = threading.Barrier(4)

    def gc() -> None:
        node = docker.from_env()  # a client of its own, as on a node
        start.wait()
        try:
            removed.extend(gc_containers(node, job_id="gc-race"))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)
        finally:
            node.close()

    threads = [threading.Thread(target=gc) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert set(removed) == made  # (the engine may grant two simultaneous removals of one container)
    assert _ours(docker_engine, **{"rsr.job": "gc-race"}) == []
