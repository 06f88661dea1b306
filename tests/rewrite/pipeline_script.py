"""Scripted planner, critic and executor answers for the json-to-env demo task (distinct model names)."""

from __future__ import annotations

from tests.conftest import answer

ENV_GOOD = (
    "python3 -c \"import json; c = json.load(open('/app/config.json')); open('/app/app.env', 'w').write("
    "''.join(f'{k.upper()}={str(v).lower() if isinstance(v, bool) else v}' + chr(10) "
    'for k, v in sorted(c.items())))"\n'
)
ENV_HARDCODED = (
    "printf 'DB_URL=sqlite:///app.db\\nDEBUG=false\\nHOST=0.0.0.0\\nLOG_LEVEL=info\\nPORT=8080\\n"
    "WORKERS=4\\n' > /app/app.env\n"
)
LEAKY = "app.env must read DB_URL=sqlite:///app.db first and WORKERS=4 last, as test_outputs.py expects."


def runbook(target: str, marker: str) -> dict:
    return {
        "target_end_state": target,
        "key_milestones": [f"Read the JSON config ({marker}).", "Write the file."],
        "useful_checks": ["cat the written file"],
        "recovery_strategies": ["regenerate the file"],
        "pitfalls": ["Python prints booleans as True/False."],
    }


DISCOVERY = [
    answer("read", "cat", "cat /app/config.json\n"),
    answer("write", "python3", ENV_GOOD),
    answer(done=True),
    answer(done=True),
]
GOOD_RUN = [
    answer("read", "cat", "cat /app/config.json\n"),
    answer("write", "python3", ENV_GOOD),
    answer(done=True),
    answer(done=True),
]
TRANSFER_RUN = [answer("write", "from memory", ENV_HARDCODED), answer(done=True), answer(done=True)]


def rules(planner: str = "p", critic: str = "c", executor: str = "e") -> list[dict]:
    return [
        {"model": "disc", "turns": DISCOVERY},
        {
            "model": planner,
            "when": {"seed": 0, "last_user": "rejected"},
            "response": runbook(
                "app.env holds one upper-cased KEY=VALUE line per config entry, sorted.", "route A"
            ),
        },
        {"model": planner, "when": {"seed": 0}, "response": runbook(LEAKY, "route A")},
        {
            "model": planner,
            "when": {"seed": 1},
            "response": runbook("app.env mirrors config.json as sorted KEY=VALUE lines.", "route B"),
        },
        {
            "model": critic,
            "when": {"system": "audit"},
            "response": {"answer_transfer": False, "evidence": []},
        },
        {"model": critic, "response": {"verdict": "pass", "flags": []}},
        {"model": executor, "when": {"seed": 1, "system": "route B"}, "turns": TRANSFER_RUN},
        {"model": executor, "when": {"system": "Private guidance"}, "turns": GOOD_RUN},
    ]
