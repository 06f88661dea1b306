"""Reading the reward a harbor `tests/test.sh` wrote, defensively.

`/logs/verifier/reward.txt` (a number) wins over `reward.json` (a number, or an object: its `reward` key, else
its only numeric value, else no reward). A reward that is not a finite number in [0, 1] counts as 0; an object
that names no reward leaves the run unscored (None). Either way the reason is said. The files are read through
the engine, only when they are regular files of at most 64 KiB: a FIFO, a symlink (to /dev/zero or anywhere)
or a huge file is refused with its reason, never followed or read.
"""

from __future__ import annotations

import json
import math

from rsr_core.sandbox.fs import ContainerFS

REWARD_DIR = "/logs/verifier"
MAX_REWARD_BYTES = 64 * 1024


def checked_reward(value: float, source: str) -> tuple[float, str | None]:
    """(reward, why it was changed): NaN, ±Infinity and values outside [0, 1] give 0."""
    if math.isnan(value) or math.isinf(value):
        return 0.0, f"{source} holds {value}, not a finite number: reward 0"
    if not 0.0 <= value <= 1.0:
        return 0.0, f"{source} holds {value:g}, outside [0, 1]: reward 0"
    return value, None


def _numeric(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def reward_from_text(text: str) -> tuple[float | None, str | None]:
    """The reward in reward.txt's text, with the reason when it is not usable as is."""
    try:
        value = float(text.strip())
    except ValueError:
        return 0.0, f"reward.txt holds {text.strip()[:80]!r}, not a number: reward 0"
    return checked_reward(value, "reward.txt")


def reward_from_json(text: str) -> tuple[float | None, str | None]:
    """The reward in reward.json's text: a number, or an object's `reward` key, else its only numeric value."""
    try:
        obj = json.loads(text)
    except ValueError:
        return 0.0, "reward.json is not valid JSON: reward 0"
    if _numeric(obj):
        return checked_reward(float(obj), "reward.json")
    if isinstance(obj, dict) and set(obj) == {"rewards"} and isinstance(obj["rewards"], dict):
        obj = obj["rewards"]  # the harbor result layout, {"rewards": {...}}
    if not isinstance(obj, dict):
        return 0.0, "reward.json is neither a number nor an object: reward 0"
    if "reward" in obj:
        if not _numeric(obj["reward"]):
            return (
                None,
                f"reward.json's 'reward' is {json.dumps(obj['reward'])[:80]}, not a number: no reward",
            )
        return checked_reward(float(obj["reward"]), "reward.json 'reward'")
    numbers = {k: v for k, v in obj.items() if _numeric(v)}
    if len(numbers) == 1:
        key, value = next(iter(numbers.items()))
        return checked_reward(float(value), f"reward.json {key!r}")
    return None, (
        f"reward.json has no 'reward' key and {len(numbers)} numeric values "
        f"({', '.join(sorted(numbers)[:10]) or 'none'}): no reward"
    )


def read_reward(fs: ContainerFS, directory: str = REWARD_DIR) -> tuple[float | None, str | None]:
    """(reward, note) from the reward files in the container; the note says why the reward is 0 or None."""
    for name, parse in (("reward.txt", reward_from_text), ("reward.json", reward_from_json)):
        content, problem = fs.read_regular(f"{directory}/{name}", MAX_REWARD_BYTES)
        if problem == "missing":
            continue
        if problem is not None:
            return 0.0, f"{directory}/{name} is {problem}: reward 0"
        if name == "reward.txt" and not (content or b"").strip():
            continue  # an empty reward.txt beside a reward.json: the JSON holds the reward
        return parse((content or b"").decode(errors="replace"))
    return 0.0, "test.sh wrote no /logs/verifier/reward.txt or reward.json: reward 0"
