"""Harbor's own trace export of job dirs. Runs inside the harbor-traces side venv (harbor with its `huggingface`
extra, Python >= 3.12), not ours.

Usage: python harbor_traces.py PATH ; prints one JSON object {"rows": [...]}, the rows of the dataset harbor's
`export_traces` (what `harbor traces export --path PATH` builds) makes of every trial under PATH: each with
`agent`, `trial_name`, `episode` and `conversations` ([{role, content}]). harbor's own progress lines go to
stderr. An error harbor raises (an agent it does not know, a trajectory it cannot read) fails with its
message, as the CLI does.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from harbor.utils.traces_utils import export_traces

    with contextlib.redirect_stdout(sys.stderr):
        dataset = export_traces(
            root=Path(argv[0]),
            recursive=True,
            episodes="all",
            export_subagents=False,
            use_rich_progress=False,
        )
    keys = ("agent", "trial_name", "episode", "conversations")
    rows = [{k: row.get(k) for k in keys} for row in dataset.to_list()]
    print(json.dumps({"rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
