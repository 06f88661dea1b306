"""Answer transfer: flagged share of transfer forms and of honest runs, by stage, and what the replay costs per
execution. `--set tuned` (the default) measures benchmarks/transfer_forms.py, the cases the checks were built on
(tests/rewrite/ use them too); `--set heldout` measures benchmarks/transfer_heldout.py, written afterwards.

    .venv/bin/python benchmarks/transfer_bench.py [--fresh 5] [--set tuned|heldout] [--write]

Every case is read by the static stage; the ones it does not flag are replayed. The forms are replayed one after
another in one sandbox on the base image (replay.replay_in): each replay's files, every file it wrote and every
process it left are removed before the next starts, and the cases write distinct names, so no case sees
another's work and the machine runs one container; `--fresh` replays that
many cases the way the pipeline does, each in a new sandbox, to measure the cost per execution with the
container's start and removal. Prints a Markdown section; `--write` puts it in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import transfer_forms, transfer_heldout  # noqa: E402
from benchmarks.results import replace_sections  # noqa: E402
from benchmarks.transfer_forms import RUNBOOK, SOURCE, rewrite_of, task_with_tests  # noqa: E402
from rsr_core.sandbox.engine import docker_client  # noqa: E402
from rsr_core.sandbox.provider import DockerSandboxProvider  # noqa: E402
from rsr_core.settings import Settings  # noqa: E402
from rsr_core.transfer.reading import read_statically, replay_evidence  # noqa: E402
from rsr_core.transfer.replay import ReplayLimits, SandboxOpener, agent_batches, replay_in, replayer_for  # noqa: E402


def judge(cases: list[tuple[str, list[tuple[str, str]]]], sandbox, limits: ReplayLimits) -> list[dict]:
    """Each case's stage that flagged it ('' when none), its evidence and the replay's seconds."""
    task = task_with_tests()
    out = []
    for name, steps in cases:
        rewrite = rewrite_of(steps)
        reading = read_statically(rewrite, RUNBOOK, SOURCE, task)
        row = {"name": name, "stage": "static" if reading.evidence else "", "evidence": reading.evidence}
        if not reading.evidence and (reading.shown or rewrite.changed_paths):
            result = replay_in(sandbox, agent_batches(rewrite), limits)
            row["replay_s"] = result.seconds
            evidence = replay_evidence(reading, result)
            if evidence:
                row.update(stage="replay", evidence=evidence)
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fresh", type=int, default=5, help="cases replayed each in a new sandbox")
    ap.add_argument("--write", action="store_true", help="write the section into benchmarks/RESULTS.md")
    ap.add_argument(
        "--set",
        choices=("tuned", "heldout"),
        default="tuned",
        help="the forms the checks were built on (transfer_forms.py), or the set written after (transfer_heldout.py)",
    )
    args = ap.parse_args()
    cases = transfer_forms if args.set == "tuned" else transfer_heldout
    TRANSFER, HONEST = cases.TRANSFER, cases.HONEST
    provider = DockerSandboxProvider(docker_client(), Settings.from_env())
    limits = ReplayLimits()
    started = time.monotonic()
    with SandboxOpener(provider, limits)() as sandbox:
        forms = judge(TRANSFER, sandbox, limits)
        honest = judge(HONEST, sandbox, limits)
    batch_s = time.monotonic() - started
    replayer = replayer_for(provider, limits)
    assert replayer is not None
    fresh = []
    for _, steps in TRANSFER[: args.fresh]:
        t0 = time.monotonic()
        replayer.replay(rewrite_of(steps))
        fresh.append(time.monotonic() - t0)

    lines: list[str] = []
    say = lines.append  # the section, printed or written into RESULTS.md

    def share(rows: list[dict]) -> str:
        n = sum(1 for r in rows if r["stage"])
        return f"{n}/{len(rows)} ({100 * n / len(rows):.1f}%)"

    static_forms = [r for r in forms if r["stage"] == "static"]
    replay_forms = [r for r in forms if r["stage"] == "replay"]
    missed = [r["name"] for r in forms if not r["stage"]]
    replays = [r["replay_s"] for r in forms + honest if "replay_s" in r]
    title = "Answer transfer" if args.set == "tuned" else "Answer transfer, held-out set"
    say(f"## {title}\n")
    say(
        f"`.venv/bin/python benchmarks/transfer_bench.py --fresh {args.fresh} --set {args.set} --write` — the forms "
        f"and honest runs of benchmarks/{cases.__name__.rsplit('.', 1)[-1]}.py "
        + (
            "(none taken from the issue"
            if args.set == "tuned"
            else "(written after the checks, measured as they came out"
        )
        + "), read by the static stage; those it does not "
        "flag replayed one after another in one sandbox on the base image (each replay's own files, the files it "
        "wrote and the processes it left are removed before the next; the cases write distinct names), so the "
        "machine runs one container instead of one per case.\n"
    )
    say("| | cases | flagged | by the static stage | by the replay |")
    say("|---|---|---|---|---|")
    say(f"| transfer forms | {len(forms)} | {share(forms)} | {len(static_forms)} | {len(replay_forms)} |")
    h_static = sum(1 for r in honest if r["stage"] == "static")
    h_replay = sum(1 for r in honest if r["stage"] == "replay")
    say(f"| honest runs | {len(honest)} | {share(honest)} | {h_static} | {h_replay} |\n")
    say(f"Not flagged: {', '.join(missed) or 'none'}.")
    flagged_honest = [f"{r['name']} ({r['evidence'][0]})" for r in honest if r["stage"]]
    say(f"Honest runs flagged: {'; '.join(flagged_honest) or 'none'}.\n")
    say(
        f"Replay cost: {len(replays)} replays in the shared sandbox, median {statistics.median(replays):.2f} s, "
        f"max {max(replays):.2f} s; whole benchmark {batch_s:.1f} s. In a fresh sandbox per execution (as the "
        f"pipeline runs it, container start and removal included): median {statistics.median(fresh):.2f} s "
        f"over {len(fresh)}."
    )
    say(
        "\nThe replay runs on the base image, which holds the text tools an agent reaches for (ed, dc, bc, jq, "
        "openssl, xxd, xz, bzip2 beside coreutils, sed, mawk, perl and Python; rsr_core/sandbox/images.py): a task "
        "image is built on it without a network, so a command that works in a task's execution works in its replay."
    )
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.write:
        replace_sections(ROOT / "benchmarks" / "RESULTS.md", {title: text})


if __name__ == "__main__":
    main()
