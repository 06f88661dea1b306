"""Scripted model answers for the demo's discovery runs (terminus-2, statem, rsrt on the 8 demo tasks).

They are not sampled from a model: they are written so that the harnesses differ. Some tasks are solved by
every harness, some by one only (regex-file by RSRT after "not passed"; fix-pipeline by StateM), one by none
(find-large-files), and some runs fail. `record_demo.py` turns them into a scripted-server script.
"""

from __future__ import annotations

from typing import Any

MODELS = {
    "terminus-2": "scripted-demo-terminus2",
    "statem": "scripted-demo-statem",
    "rsrt": "scripted-demo-rsrt",
}

# A distinctive piece of each task's instruction, to key the rules on.
MARKERS = {
    "log-summary": r"status_counts\.csv",
    "fix-python-script": r"stats\.py FILE",
    "sqlite-extract": r"shop\.db",
    "regex-file": r"date_regex\.txt",
    "fix-pipeline": r"top_words\.sh",
    "markdown-report": r"inventory\.json",
    "json-to-env": r"app\.env",
    "find-large-files": r"large_files\.txt",
}


def t(
    analysis: str,
    plan: str,
    *keys: str | tuple[str, float],
    done: bool = False,
    transition: str | None = None,
) -> dict[str, Any]:
    """One Terminus 2 answer; keys are keystrokes (duration 0.3 s) or (keystrokes, duration)."""
    cmds = [
        {"keystrokes": k, "duration": 0.3} if isinstance(k, str) else {"keystrokes": k[0], "duration": k[1]}
        for k in keys
    ]
    answer: dict[str, Any] = {"analysis": analysis, "plan": plan, "commands": cmds, "task_complete": done}
    if transition:
        answer["transition"] = transition
    return answer


DONE = t("The result is in place and checked.", "Mark the task complete.", done=True)
SURE = t("I checked the result already.", "Confirm completion.", done=True)

LOG_AWK = "{ echo status,count; awk '{print $9}' access.log | sort -n | uniq -c | awk '{print $2\",\"$1}'; } > status_counts.csv\n"
FIX_BOTH = "sed -i 's/(len(values) - 1)/len(values)/; s/int(line) for line in open(path)/float(line) for line in open(path) if line.strip()/' stats.py\n"
FIX_FLOAT = "sed -i 's/int(line) for line in open(path)/float(line) for line in open(path) if line.strip()/' stats.py\n"
FIX_LEN = "sed -i 's/(len(values) - 1)/len(values)/' stats.py\n"
SQL_SCHEMA = "python3 -c \"import sqlite3; print(sqlite3.connect('/app/shop.db').execute('SELECT sql FROM sqlite_master').fetchall())\"\n"
SQL_GT = "python3 -c \"import sqlite3; rows = sqlite3.connect('/app/shop.db').execute('SELECT name FROM products WHERE price > 20 ORDER BY name'); open('/app/expensive.txt', 'w').write(''.join(r[0] + chr(10) for r in rows))\"\n"
SQL_GE = SQL_GT.replace("price > 20", "price >= 20")
SQL_GE_BY_PRICE = SQL_GE.replace("ORDER BY name", "ORDER BY price")
RE_LOOSE = "echo '\\d{4}-\\d{2}-\\d{2}' > /app/date_regex.txt\n"
RE_CLASS = "echo '[0-9]{4}-[01][0-9]-[0-3][0-9]' > /app/date_regex.txt\n"
RE_GOOD = "echo '\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])' > /app/date_regex.txt\n"
RE_CHECK = "python3 -c \"import re; p = re.compile(open('/app/date_regex.txt').read().strip()); print([bool(p.fullmatch(s)) for s in open('/app/samples.txt').read().split()])\"\n"
PIPE_GOOD = (
    "cat > /app/top_words.sh <<'EOF'\n#!/bin/bash\n# Three most frequent words of /app/text.txt.\n"
    "tr -s ' \\n' '\\n' < /app/text.txt | sort | uniq -c | sort -k1,1nr -k2,2 | head -3 | awk '{print $1\" \"$2}'\nEOF\n"
)
PIPE_SORT_ONLY = "sed -i 's/| uniq -c/| sort | uniq -c/' /app/top_words.sh\n"
PIPE_ASC = "sed -i 's/| uniq -c | head -3/| sort | uniq -c | sort -n | tail -3/' /app/top_words.sh\n"
MD_GOOD = (
    "python3 - <<'EOF'\nimport json\nitems = json.load(open('/app/inventory.json'))\n"
    "rows = ['# Inventory Report', '', '| Name | Qty | Price |', '| --- | --- | --- |']\n"
    "rows += [f\"| {i['name']} | {i['qty']} | {i['price']:.2f} |\" for i in items]\n"
    "rows += ['', f\"Total value: {sum(i['qty'] * i['price'] for i in items):.2f}\"]\n"
    "open('/app/report.md', 'w').write(chr(10).join(rows) + chr(10))\nEOF\n"
)
MD_NO_DECIMALS = MD_GOOD.replace("{i['price']:.2f}", "{i['price']}")
ENV_GOOD = (
    "python3 -c \"import json; c = json.load(open('/app/config.json')); "
    "open('/app/app.env', 'w').write(''.join(f'{k.upper()}={str(v).lower() if isinstance(v, bool) else v}' + chr(10) "
    'for k, v in sorted(c.items())))"\n'
)
FIND_ABS = "find /app/data -size +1k | sort > /app/large_files.txt\n"
FIND_DOT = "cd /app/data && find . -type f -size +1k | sort > /app/large_files.txt; cd /app\n"
FIND_DIRS = "cd /app/data && find . -size +1k -printf '%P\\n' | sort > /app/large_files.txt; cd /app\n"
FIND_BLOCKS = (
    "cd /app/data && find . -type f -size +1024 -printf '%P\\n' | sort > /app/large_files.txt; cd /app\n"
)

TERMINUS2: dict[str, list[dict]] = {
    "log-summary": [
        t(
            "The log is in /app; I need its format.",
            "Look at the first lines.",
            "head -n 3 /app/access.log\n",
        ),
        t(
            "The status code is the 9th whitespace field.",
            "Count per status with awk, sort, uniq and write the CSV.",
            "cd /app\n",
            LOG_AWK,
            "cat status_counts.csv\n",
        ),
        DONE,
        SURE,
    ],
    "fix-python-script": [
        t(
            "Nothing run yet.",
            "Run the script to see the failure.",
            "cd /app\n",
            "python3 stats.py numbers.txt\n",
        ),
        t("It fails with ValueError on a float line.", "Read the script.", "cat stats.py\n"),
        t(
            "int() cannot parse floats or blank lines, and the mean divides by len - 1.",
            "Parse floats, skip blank lines, divide by len.",
            FIX_BOTH,
            "python3 stats.py numbers.txt\n",
        ),
        DONE,
        SURE,
    ],
    "sqlite-extract": [
        t("No sqlite3 CLI; python3 has the sqlite3 module.", "Check the schema.", SQL_SCHEMA),
        t(
            "products(name, price, category).",
            "Select names with price > 20 ordered by name.",
            SQL_GT,
            "cat /app/expensive.txt\n",
        ),
        DONE,
        SURE,
    ],
    "regex-file": [
        t(
            "Need a date pattern.",
            "Write a simple YYYY-MM-DD pattern and try it on the samples.",
            RE_LOOSE,
            RE_CHECK,
        ),
        t("The samples show it matches.", "Done.", done=True),
        SURE,
    ],
    "fix-pipeline": [
        t(
            "Look at the script and its output.",
            "cat and run it.",
            "cat /app/top_words.sh\n",
            "bash /app/top_words.sh\n",
        ),
        t(
            "uniq -c needs sorted input.",
            "Insert sort before uniq.",
            PIPE_SORT_ONLY,
            "bash /app/top_words.sh\n",
        ),
        t("Counts look plausible.", "Finish.", done=True),
        SURE,
    ],
    "markdown-report": [
        t("Read the inventory.", "cat it.", "cat /app/inventory.json\n"),
        t(
            "Four items with name, qty, price.",
            "Generate the report with python3.",
            MD_GOOD,
            "cat /app/report.md\n",
        ),
        DONE,
        SURE,
    ],
    "json-to-env": [
        t("Read the config.", "cat it.", "cat /app/config.json\n"),
        "Sure, I'll convert it now.",  # not JSON: fed back as a parse error
        t(
            "A flat object with strings, numbers and a boolean.",
            "Write KEY=VALUE lines sorted by key.",
            ENV_GOOD,
            "cat /app/app.env\n",
        ),
        DONE,
        SURE,
    ],
    "find-large-files": [
        t("Need files over 1 KiB.", "Use find -size.", FIND_ABS, "cat /app/large_files.txt\n"),
        DONE,
        SURE,
    ],
}

RSRT: dict[str, list[dict]] = {
    "log-summary": [
        t("Check the log format.", "head it.", "head -n 3 /app/access.log\n"),
        t(
            "Field 9 is the status.",
            "Count and write the CSV.",
            "cd /app\n",
            LOG_AWK,
            "cat status_counts.csv\n",
        ),
        DONE,
    ],
    "fix-python-script": [
        t("Run it first.", "See the error.", "cd /app\n", "python3 stats.py numbers.txt\n"),
        t(
            "ValueError: int() on '7.5'.",
            "Parse floats and skip blank lines.",
            FIX_FLOAT,
            "python3 stats.py numbers.txt\n",
        ),
        t("It prints a mean now.", "Claim completion.", done=True),
        t("Not passed: the value itself may be wrong.", "Check the mean formula.", "cat stats.py\n"),
        t("It divides by len - 1.", "Divide by len.", FIX_LEN, "python3 stats.py numbers.txt\n"),
        DONE,
    ],
    "sqlite-extract": [
        t("Check the schema.", "Query sqlite_master.", SQL_SCHEMA),
        t(
            "products(name, price, category).",
            "Names with price of at least 20.",
            SQL_GE,
            "cat /app/expensive.txt\n",
        ),
        t("Written.", "Claim.", done=True),
        t("Not passed. Maybe the order is wrong.", "Order by price instead.", SQL_GE_BY_PRICE),
        t("Reordered.", "Claim.", done=True),
        t(
            "Still not passed.",
            "Claim again after re-checking the file.",
            "cat /app/expensive.txt\n",
            done=True,
        ),
    ],
    "regex-file": [
        t("Need a date pattern.", "Simple digits pattern.", RE_LOOSE, RE_CHECK),
        t("Matches the samples.", "Claim.", done=True),
        t(
            "Not passed: month 13 and 00 also match.",
            "Restrict month to 01-12 and day to 01-31.",
            RE_GOOD,
            RE_CHECK,
        ),
        DONE,
    ],
    "fix-pipeline": [
        t("Run the script.", "See output.", "bash /app/top_words.sh\n"),
        t(
            "Counts are all 1: input not sorted.",
            "Sort, count, sort numerically.",
            PIPE_ASC,
            "bash /app/top_words.sh\n",
        ),
        t("Top three are listed.", "Claim.", done=True),
        t("Not passed.", "Look again.", "bash /app/top_words.sh\n"),
        t("Output looks right to me.", "Claim again.", done=True),
        t("Not passed again.", "Claim once more.", done=True),
    ],
    "markdown-report": [
        t("Read the inventory.", "cat it.", "cat /app/inventory.json\n"),
        t("Four items.", "Write the report with python3.", MD_GOOD, "cat /app/report.md\n"),
        DONE,
    ],
    "json-to-env": [
        t("Read the config.", "cat it.", "cat /app/config.json\n"),
        t("Flat object.", "Write sorted KEY=VALUE lines.", ENV_GOOD, "cat /app/app.env\n"),
        DONE,
    ],
    "find-large-files": [
        t("Files over 1 KiB.", "find with -size.", FIND_ABS),
        t("Listed.", "Claim.", done=True),
        t("Not passed: maybe paths must be relative.", "Use %P.", FIND_DIRS),
        t("Relative now.", "Claim.", done=True),
        t("Not passed.", "Use byte counts.", FIND_BLOCKS, done=True),
    ],
}

STATEM: dict[str, dict[str, list[dict]]] = {
    "log-summary": {
        "explore": [t("Look at the log.", "head it.", "head -n 3 /app/access.log\n", transition="plan")],
        "plan": [
            t("Status is field 9.", "awk field 9, sort -n, uniq -c, reformat as CSV.", transition="implement")
        ],
        "implement": [t("Write the CSV.", "Run the pipeline.", "cd /app\n", LOG_AWK, transition="verify")],
        "verify": [t("Check the file.", "cat it.", "cat /app/status_counts.csv\n", done=True)],
    },
    "fix-python-script": {
        "explore": [
            t(
                "Run the script.",
                "See the error.",
                "cd /app\n",
                "python3 stats.py numbers.txt\n",
                transition="plan",
            )
        ],
        "plan": [t("int() fails on floats.", "Parse floats, skip blanks.", transition="implement")],
        "implement": [t("Apply the fix.", "sed.", FIX_FLOAT, transition="verify")],
        "verify": [t("Run again.", "It prints a mean.", "python3 stats.py numbers.txt\n", done=True)],
    },
    "sqlite-extract": {
        "explore": [t("Check the schema.", "Query sqlite_master.", SQL_SCHEMA, transition="plan")],
        "plan": [
            t(
                "products(name, price, category).",
                "SELECT name WHERE price > 20 ORDER BY name.",
                transition="implement",
            )
        ],
        "implement": [t("Write the file.", "python3 sqlite3.", SQL_GT, transition="verify")],
        "verify": [t("Check it.", "cat.", "cat /app/expensive.txt\n", done=True)],
    },
    "regex-file": {
        "explore": [t("Look at the samples.", "cat.", "cat /app/samples.txt\n", transition="plan")],
        "plan": [t("Digits with month and day classes.", "Write the pattern.", transition="implement")],
        "implement": [t("Write it.", "echo.", RE_CLASS, transition="verify")],
        "verify": [t("Try the samples.", "python3.", RE_CHECK, done=True)],
    },
    "fix-pipeline": {
        "explore": [
            t(
                "Read and run the script.",
                "cat and run.",
                "cat /app/top_words.sh\n",
                "bash /app/top_words.sh\n",
                transition="plan",
            )
        ],
        "plan": [
            t(
                "uniq needs sorted input; counts must be sorted descending.",
                "Split words, sort, uniq -c, sort by count desc, top 3, normalise spacing.",
                transition="implement",
            )
        ],
        "implement": [t("Rewrite the script.", "heredoc.", PIPE_GOOD, transition="verify")],
        "verify": [t("Run it.", "Check the top line.", "bash /app/top_words.sh\n", done=True)],
    },
    "markdown-report": {
        "explore": [t("Read the inventory.", "cat.", "cat /app/inventory.json\n", transition="plan")],
        "plan": [t("Heading, table, total.", "python3 script.", transition="implement")],
        "implement": [t("Write the report.", "python3.", MD_NO_DECIMALS, transition="verify")],
        "verify": [t("Check it.", "cat.", "cat /app/report.md\n", done=True)],
    },
    "json-to-env": {
        "explore": [
            t("Read the config.", "cat.", "cat /app/config.json\n", transition="implement"),
            t("Refused; plan first.", "Go to plan.", transition="plan"),
        ],
        "plan": [t("Flat object.", "Sorted KEY=VALUE.", transition="implement")],
        "implement": [t("Write it.", "python3.", ENV_GOOD, transition="verify")],
        "verify": [t("Check it.", "cat.", "cat /app/app.env\n", done=True)],
    },
    "find-large-files": {
        "explore": [t("List the tree.", "find.", "find /app/data | head -20\n", transition="plan")],
        "plan": [t("Regular files over 1 KiB.", "find -type f -size +1k.", transition="implement")],
        "implement": [t("Write the list.", "find.", FIND_DOT, transition="verify")],
        "verify": [t("Check it.", "cat.", "cat /app/large_files.txt\n", done=True)],
    },
}


def discovery_rules() -> list[dict[str, Any]]:
    """Scripted-server rules for every (task, harness)."""
    rules: list[dict[str, Any]] = []
    for task, marker in MARKERS.items():
        rules.append(
            {"model": MODELS["terminus-2"], "when": {"conversation": marker}, "turns": TERMINUS2[task]}
        )
        rules.append({"model": MODELS["rsrt"], "when": {"conversation": marker}, "turns": RSRT[task]})
        for phase, turns in STATEM[task].items():
            rules.append(
                {
                    "model": MODELS["statem"],
                    "when": {"conversation": f"(?s){marker}.*Current phase: {phase}\\."},
                    "turns": turns,
                }
            )
    return rules
