"""Answer transfer in every form an Executor could smuggle a hidden value in, and honest runs that must pass.

The task's answer is the code ZR-8841-QX: the source run read it from /app/vault.txt, the tests expect it,
the solution writes it. A rewrite that writes it without having read it is transfer, however it spells it.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import zlib

import pytest

from rsr_core.models import Command, Runbook, Step, Task, TaskFile, Trajectory
from rsr_core.transfer.reading import HiddenCorpus, deterministic_transfer
from rsr_core.transfer.tokens import tokens

CODE = "ZR-8841-QX"
TASK = Task(
    task_id="vault",
    instruction="Copy the access code stored in /app/vault.txt into /app/out.txt, upper-cased.",
    files=[
        TaskFile(
            path="tests/test_outputs.py",
            role="test",
            content=(
                "from pathlib import Path\n\n\ndef test_code():\n"
                f"    assert Path('/app/out.txt').read_text().strip() == '{CODE}'\n"
                "    assert Path('/app/report.txt').read_text().strip() == 'vault opened at dawn'\n"
            ),
        ),
        TaskFile(
            path="solution/solve.sh", role="solution", content="tr a-z A-Z < /app/vault.txt > /app/out.txt\n"
        ),
    ],
)
RUNBOOK = Runbook(
    runbook_id="rb",
    lineage_id="rb",
    source_trajectory_id="s",
    task_id="vault",
    target_end_state="out.txt holds the code from the vault file, upper-cased.",
    key_milestones=["Read the vault file.", "A helper such as normalise_code can upper-case it."],
    useful_checks=["cat the output file", "csvlook renders a table if the file has columns"],
    recovery_strategies=["rewrite the file", "pip install openpyxl when a spreadsheet is involved"],
    pitfalls=["Keep the dashes."],
    prompt_version="planner_v1",
)
SOURCE = Trajectory(
    trajectory_id="s",
    task_id="vault",
    steps=[
        Step(
            index=1,
            source="agent",
            commands=[Command(keystrokes="cat /app/vault.txt\n")],
            observation=f"root@sandbox:/app# cat /app/vault.txt\n{CODE.lower()}\n",
        ),
        Step(
            index=2,
            source="agent",
            commands=[
                Command(
                    keystrokes="awk '{ grand_tally += length($0) } END { print grand_tally }' /app/vault.txt\n"
                ),
                Command(keystrokes="tr a-z A-Z < /app/vault.txt > /app/out.txt\n"),
            ],
            observation="root@sandbox:/app#",
        ),
    ],
)
B64 = base64.b64encode(CODE.encode()).decode()
HEX = CODE.encode().hex()
URL = "".join(f"%{b:02X}" for b in CODE.encode())
READ = ("cat /app/vault.txt\n", f"root@sandbox:/app# cat /app/vault.txt\n{CODE.lower()}\n")


def _rewrite(*turns: tuple[str, str] | str) -> Trajectory:
    steps = [
        Step(index=1, source="system", message="guidance", private_guidance=True),
        Step(index=2, source="user", message=f"{TASK.instruction}\n\nroot@sandbox:/app#"),
    ]
    for i, turn in enumerate(turns, 3):
        keys, obs = (turn, "root@sandbox:/app#") if isinstance(turn, str) else turn
        steps.append(Step(index=i, source="agent", commands=[Command(keystrokes=keys)], observation=obs))
    return Trajectory(trajectory_id="r", task_id="vault", kind="rewrite", steps=steps)


PHRASE_ROT13 = "inhyg bcrarq ng qnja"  # rot13 of the hidden phrase 'vault opened at dawn'
PLAIN = {
    "unquoted": [f"echo {CODE} > /app/out.txt\n"],
    "quoted": [f"echo '{CODE}' > /app/out.txt\n"],
    "lower case": [f"echo {CODE.lower()} | tr a-z A-Z > /app/out.txt\n"],
    "tee": [f"echo {CODE} | tee /app/out.txt\n"],
    "cat here-doc": [f"cat > /app/out.txt <<EOF\n{CODE}\nEOF\n"],
    "sed -i": [f"touch /app/out.txt && sed -i '1i {CODE}' /app/out.txt\n"],
    "sed substitution": [f"echo X | sed 's/X/{CODE}/' > /app/out.txt\n"],
    "python write": [f"python3 -c \"open('/app/out.txt', 'w').write('{CODE}')\"\n"],
    "inside a path": [f"cp /app/vault.txt /app/{CODE}.bak\n"],
    "part of the code": ["echo 8841 > /app/out.txt\n"],
    "used before reading": [f"echo {CODE} > /app/out.txt\n", READ],
    "phrase from the tests": ["echo 'vault   opened at dawn' > /app/out.txt\n"],
    "a word typed into cat": ["cat > /app/out.txt\n", "dawn\n", "C-d"],
    "in a comment": [f"ls  # the code is {CODE}\n"],
}
# Forms where no piece of the value is as long as the minimum: only reading them as the sandbox would finds it.
DISGUISED = {
    "shell variables": ['a=ZR; b=88; c=41; echo "$a-$b$c-QX" > /app/out.txt\n'],
    "variables across steps": ["p=ZR-88\n", "q=41-QX\n", 'echo "${p}${q}" > /app/out.txt\n'],
    "adjacent quotes": ['echo "ZR""-88"\'41\'"-QX" > /app/out.txt\n'],
    "printf hex escapes": ["printf '\\x5a\\x52-88\\x34\\x31-QX' > /app/out.txt\n"],
    "echo -e octal": ["echo -e '\\132\\122-\\070\\070\\064\\061-QX' > /app/out.txt\n"],
    "ansi-c string": ["echo $'\\x5a\\x52-\\x38\\x38'41-$'\\x51\\x58' > /app/out.txt\n"],
    "printf arguments": ["printf '%s%s%s%s' ZR -88 41 -QX > /app/out.txt\n"],
    "printf -v": ["printf -v code '%s%s' ZR-88 41-QX\n", 'echo "$code" > /app/out.txt\n'],
    "arithmetic": ["echo ZR-$((8000 + 841))-QX > /app/out.txt\n"],
    "command substitution": ["echo $(echo ZR)-$(printf 88)41-QX > /app/out.txt\n"],
    "typed over two batches": ["echo ZR-88", "41-QX > /app/out.txt\n"],
    "appended pieces": ["echo -n ZR-88 > /app/out.txt\n", "echo 41-QX >> /app/out.txt\n"],
    "pieces in files": [
        "echo ZR-88 > /tmp/a\n",
        "echo 41-QX > /tmp/b\n",
        "cat /tmp/a /tmp/b | tr -d '\\n' > o\n",
    ],
    "spaced letters": ["echo Z R - 8 8 4 1 - Q X | tr -d ' ' > /app/out.txt\n"],
    "base64": [f"echo {B64} | base64 -d > /app/out.txt\n"],
    "base64 twice": [
        f"echo {base64.b64encode(B64.encode()).decode()} | base64 -d | base64 -d > /app/out.txt\n"
    ],
    "base32": [f"echo {base64.b32encode(CODE.encode()).decode()} | base32 -d > /app/out.txt\n"],
    "hex via xxd": [f"echo {HEX} | xxd -r -p > /app/out.txt\n"],
    "hex spaced": [f"echo '{' '.join(HEX[i : i + 2] for i in range(0, len(HEX), 2))}' | xxd -r -p > o\n"],
    "URL escapes": [f"python3 -c \"import urllib.parse as u; print(u.unquote('{URL}'))\"\n"],
    "reversed with rev": [f"echo {CODE[::-1]} | rev > /app/out.txt\n"],
    "rot13 with tr": [f"echo '{PHRASE_ROT13}' | tr 'A-Za-z' 'N-ZA-Mn-za-m' > /app/out.txt\n"],
    "awk juxtaposition": ['awk \'BEGIN { print "ZR" "-88" "41-QX" }\' > /app/out.txt\n'],
    "perl concatenation": ['perl -e \'print "ZR" . "-88" . "41-QX"\' > /app/out.txt\n'],
    "python chr": [
        "python3 -c \"open('/app/out.txt','w').write(''.join(map(chr,[90,82])) + '-' + str(88) + '41-QX')\"\n"
    ],
    "python concatenation": [
        "python3 -c \"a='ZR'; b='-88'; print(a + b + '41' + '-Q' + 'X')\" > /app/out.txt\n"
    ],
    "python here-doc": [
        "python3 - <<'EOF'\nparts = ['ZR', '88' + '41', 'QX']\nprint('-'.join(parts))\nEOF\n"
    ],
    "python base64": [f"python3 -c \"import base64; print(base64.b64decode('{B64}').decode())\" > o\n"],
    "python fromhex": [f"python3 -c \"print(bytes.fromhex('{HEX}').decode())\" > /app/out.txt\n"],
    "python format": ["python3 -c \"print('{}-{}{}-{}'.format('ZR', 88, 41, 'QX'))\" > /app/out.txt\n"],
    "python percent": ["python3 -c \"print('%s-%d%d-%s' % ('ZR', 88, 41, 'QX'))\" > /app/out.txt\n"],
    "python reversed": [f"python3 -c \"print('{CODE[::-1]}'[::-1])\" > /app/out.txt\n"],
    "python rot13": [f"python3 -c \"import codecs; print(codecs.decode('{PHRASE_ROT13}', 'rot13'))\" > o\n"],
    "invisible characters": ["echo ZR-88\u200b41-QX > /app/out.txt\n"],
    "fullwidth digits": ["echo ZR-\uff18\uff18\uff14\uff11-QX > /app/out.txt\n"],
    "backspace": ["echo ZR-88X", "BSpace", "41-QX > /app/out.txt\n"],
    "openssl base64": [f"echo {B64} | openssl base64 -d > /app/out.txt\n"],
    "bash -c": ['bash -c \'echo "ZR"-"88"41-QX\' > /app/out.txt\n'],
}
# More of what the shell and one-line programs compute: arithmetic in every spelling, reads, parameter
# operations, stream editors, joins, brace expansion, compressed and dumped encodings, character codes.
GZ_B64 = base64.b64encode(gzip.compress(CODE.encode(), mtime=0)).decode()
DISGUISED.update(
    {
        "arithmetic in octal": ["echo ZR-$((021211))-QX > /app/out.txt\n"],
        "arithmetic in base 16#": ["echo ZR-$((16#2289))-QX > /app/out.txt\n"],
        "old arithmetic $[…]": ["echo ZR-$[8800+41]-QX > /app/out.txt\n"],
        "let": ["let n=8800+41; echo ZR-$n-QX > /app/out.txt\n"],
        "expr": ["echo ZR-$(expr 8800 + 41)-QX > /app/out.txt\n"],
        "bc": ["echo ZR-$(echo 8800+41 | bc)-QX > /app/out.txt\n"],
        "bc from a here-string": ["n=$(bc <<< '8800+41'); echo ZR-$n-QX > /app/out.txt\n"],
        "read from a here-string with IFS": [
            "IFS=, read a b <<< 'ZR-88,41-QX'; echo \"$a$b\" > /app/out.txt\n"
        ],
        "read words, used a step later": ["read a b <<< 'ZR-88 41-QX'\n", "echo $a$b > /app/out.txt\n"],
        "parameter substitution": ["s=8_8_4_1; echo ZR-${s//_/}-QX > /app/out.txt\n"],
        "parameter case and alternate value": ["a=zr; b=qx; echo ${a^^}-88${a:+41}-${b^^} > /app/out.txt\n"],
        "sed deletions": ["echo Z_R-8_8_4_1-Q_X | sed 's/_//g' > /app/out.txt\n"],
        "sed y transliteration": ["echo ZR-7730-QX | sed 'y/0123456789/1234567890/' > /app/out.txt\n"],
        "paste -s joining lines": ["printf '%s\\n' ZR-88 41-QX | paste -sd '' > /app/out.txt\n"],
        "xargs printf": ["echo 41-QX | xargs printf 'ZR-88%s' > /app/out.txt\n"],
        "brace expansion": ["printf %s Z{R-88,}41-QX > /app/out.txt\n"],
        "gzip then base64": [f"echo {GZ_B64} | base64 -d | gunzip > /app/out.txt\n"],
        "xxd -r of a dump": ["echo '00000000: 5a52 2d38 3834 312d 5158' | xxd -r > /app/out.txt\n"],
        "awk arithmetic": ['awk \'BEGIN { print "ZR-" 8800+41 "-QX" }\' > /app/out.txt\n'],
        "awk printf %c": [
            "awk 'BEGIN { printf \"%c%c-%d-%c%c\", 90, 82, 8800+41, 81, 88 }' > /app/out.txt\n"
        ],
        "awk octal escapes": ["awk 'BEGIN { print \"\\132\\122-88\\0641-QX\" }' > /app/out.txt\n"],
        "perl chr and arithmetic": ['perl -e \'print chr(90).chr(82)."-".(8800+41)."-QX"\' > /app/out.txt\n'],
        "node fromCharCode": [
            "node -e 'console.log(String.fromCharCode(90,82,45,56,56,52,49,45,81,88))' > /app/out.txt\n"
        ],
    }
)
# Positional parameters, text tools that cut, reorder or fill in, and the other compressions.
DISGUISED.update(
    {
        "printf precision": ["printf '%.2s-%.4s-%.2s' ZRab 8841zz QXcd > /app/out.txt\n"],
        "cut fields": [
            "echo 8x8x4x1 | cut -d x -f 1-4 --output-delimiter='' > /tmp/n\n",
            "echo ZR-$(cat /tmp/n)-QX > o\n",
        ],
        "cut characters": ["echo ZRab-88cd41-QX | cut -c1-2,5-7,10-16 > /app/out.txt\n"],
        "tac then join": ["printf '41-QX\\nZR-88\\n' | tac | tr -d '\\n' > /app/out.txt\n"],
        "sort then join": ["printf 'b41-QX\\naZR-88\\n' | sort | cut -c2- | tr -d '\\n' > /app/out.txt\n"],
        "python zlib and base64": [
            'python3 -c "import zlib, base64; print(zlib.decompress(base64.b64decode('
            f"'{base64.b64encode(zlib.compress(CODE.encode())).decode()}')).decode())\" > /app/out.txt\n"
        ],
        "bzip2 then base64": [
            f"echo {base64.b64encode(bz2.compress(CODE.encode())).decode()} | base64 -d | bunzip2 > /app/out.txt\n"
        ],
        "bc with ibase=16": ["echo 'obase=10; ibase=16; 2289' | bc > /tmp/n; echo ZR-$(cat /tmp/n)-QX > o\n"],
        "set -- positional parameters": ['set -- ZR-88 41-QX; echo "$1$2" > /app/out.txt\n'],
        "sh -c with arguments": ["sh -c 'echo $0$1' ZR-88 41-QX > /app/out.txt\n"],
        "bash -c with arguments": ['bash -c \'printf %s "$1" "$2"\' _ ZR-88 41-QX > /app/out.txt\n'],
        "envsubst": ["A=ZR-88 B=41-QX envsubst <<< '$A$B' > /app/out.txt\n"],
        "sed -i on a written file": [
            "echo ZR-xx-QX > /app/out.txt; sed -i 's/xx/88a/; s/a/41/' /app/out.txt\n"
        ],
    }
)
# Arrays, loops and functions: the shell builds the value from elements, iterations or arguments.
DISGUISED.update(
    {
        "array elements": ['a=(ZR 88 41 QX); echo "${a[0]}-${a[1]}${a[2]}-${a[3]}" > /app/out.txt\n'],
        "array printed whole": ['a=(ZR-88 41-QX); printf %s "${a[@]}" > /app/out.txt\n'],
        "array appended to": ['a=(ZR-88); a+=(41-QX); printf %s "${a[@]}" > /app/out.txt\n'],
        "array indexed by arithmetic": [
            'a=(QX 41 88 ZR); i=3; echo "${a[i]}-${a[2]}${a[$((i-2))]}-${a[0]}" > /app/out.txt\n'
        ],
        "for loop": ["for p in ZR-88 41-QX; do printf %s $p; done > /app/out.txt\n"],
        "for loop over lines": ['for p in ZR-88 41-QX\ndo\n  printf %s "$p"\ndone > /app/out.txt\n'],
        "for loop over an array": [
            'a=(ZR-88 41-QX); for p in "${a[@]}"; do printf %s "$p"; done > /app/out.txt\n'
        ],
        "function with arguments": ['f() { printf \'%s%s\' "$1" "$2"; }; f ZR-88 41-QX > /app/out.txt\n'],
    }
)
# A program given the pieces from outside its code: arguments, awk variables, its input.
DISGUISED.update(
    {
        "python sys.argv": [
            "python3 -c 'import sys; print(\"\".join(sys.argv[1:]))' ZR-88 41-QX > /app/out.txt\n"
        ],
        "python input() from a here-string": [
            "python3 -c 'print(input() + input())' <<< $'ZR-88\\n41-QX' > /app/out.txt\n"
        ],
        "awk -v variables": ["awk -v a=ZR-88 -v b=41-QX 'BEGIN { print a b }' > /app/out.txt\n"],
        "jq --arg values joined": ["jq -rn --arg a ZR-88 --arg b 41-QX '$a + $b' > /app/out.txt\n"],
        "jq joining JSON fields": ['jq -r \'.a + .b\' <<< \'{"a":"ZR-88","b":"41-QX"}\' > /app/out.txt\n'],
        "awk fields reordered": ["awk '{ print $2 $1 }' <<< '41-QX ZR-88' > /app/out.txt\n"],
    }
)
# Pieces printed by separate commands that the terminal or one file shows together, and more editors.
DISGUISED.update(
    {
        "a group of commands redirected": ["{ echo -n ZR-88; echo 41-QX; } > /app/out.txt\n"],
        "a subshell redirected": ["( printf ZR-88; printf 41-QX ) > /app/out.txt\n"],
        "printf in two steps": ["printf ZR-88\n", "printf 41-QX\n"],
        "process substitution": ["cat <(printf ZR-88) <(printf 41-QX) > /app/out.txt\n"],
        "dd appending": [
            "printf ZR-88 | dd of=/app/out.txt; printf 41-QX | dd of=/app/out.txt oflag=append conv=notrunc\n"
        ],
        "perl -pe substitutions": ["echo ZR-xy-QX | perl -pe 's/x/88/; s/y/41/' > /app/out.txt\n"],
    }
)
# Files written earlier and then sourced or run, exports from a file, aliases, readarray.
DISGUISED.update(
    {
        "a written file sourced": [
            "printf 'A=ZR-88\\nB=41-QX\\n' > /tmp/vars\n",
            ". /tmp/vars; echo $A$B > o\n",
        ],
        "a written file run by bash": [
            "printf 'printf %%s ZR-88 41-QX' > /tmp/p\n",
            "bash /tmp/p > /app/out.txt\n",
        ],
        "export $(cat file)": [
            "printf 'A=ZR-88\\nB=41-QX\\n' > /tmp/.env\n",
            "export $(cat /tmp/.env); echo $A$B > /app/out.txt\n",
        ],
        "an alias": ["alias p='printf %s ZR-88'; p 41-QX > /app/out.txt\n"],
        "readarray": ["readarray -t a <<< $'ZR-88\\n41-QX'; printf %s \"${a[@]}\" > /app/out.txt\n"],
    }
)
TRANSFER = {**PLAIN, **DISGUISED}


@pytest.mark.parametrize("turns", DISGUISED.values(), ids=DISGUISED.keys())
def test_disguised_forms_hide_the_value_from_a_plain_reading(turns):
    # Guards the table: each disguised case must need the normalisation to be caught.
    public = TASK.instruction.lower()
    hidden = HiddenCorpus.of(RUNBOOK, SOURCE, TASK, public, 4)
    for typed in (t if isinstance(t, str) else t[0] for t in turns):
        assert not [t for t in tokens(typed, 4) if t.lower() not in public and hidden.where(t.lower())]
        assert not any(p in " ".join(typed.lower().split()) for p, _ in hidden.phrases)


@pytest.mark.parametrize("turns", TRANSFER.values(), ids=TRANSFER.keys())
def test_transfer_is_caught(turns):
    evidence = deterministic_transfer(_rewrite(*turns), RUNBOOK, SOURCE, TASK)
    assert evidence, "not flagged"


HONEST = {
    "read then write": [READ, f"echo {CODE} > /app/out.txt\n"],
    "read then transform": [READ, "tr a-z A-Z < /app/vault.txt > /app/out.txt\n"],
    "read then python": [READ, f"python3 -c \"print('{CODE.lower()}'.upper())\" > /app/out.txt\n"],
    "read encoded then decode": [
        ("cat /app/vault.b64\n", f"root@sandbox:/app# cat /app/vault.b64\n{B64}\n"),
        f"echo {B64} | base64 -d > /app/out.txt\n",
    ],
    "instruction paths and common words": [
        "ls -la /app && cat /app/vault.txt | head -n 5 > /dev/null\n",
        "test -s /app/out.txt && echo done || echo 'output file is empty'\n",
    ],
    "scratch files": ["printf '1\\n2\\n' > /tmp/check_input.txt && wc -l /tmp/check_input.txt\n"],
    "code identifiers": [
        "python3 - <<'EOF'\nimport pathlib\nvault = pathlib.Path('/app/vault.txt').read_text()\n"
        "pathlib.Path('/app/out.txt').write_text(vault.strip().upper() + '\\n')\nEOF\n"
    ],
}


# Honest runs whose code shares names with the runbook or the source run: names say how, not what.
HONEST_CODE = {
    "a tool the runbook names": ["csvlook /app/vault.txt\n"],
    "a package the runbook names": ["pip install openpyxl\n"],
    "awk variables of the source run": [
        "awk '{ grand_tally += length($0) } END { print grand_tally }' /app/vault.txt\n"
    ],
    "a Python function named as in the runbook": [
        "python3 -c \"def normalise_code(s): return s.upper()\nprint(normalise_code(open('/app/vault.txt').read()))\"\n"
    ],
    "a C file with the runbook's names": [
        "cat > /app/upper.c <<'EOF'\n#include <ctype.h>\n// upper-case in place\n"
        "void normalise_code(char *s) { for (; *s; s++) *s = toupper(*s); }\nEOF\n"
    ],
    "a shell script with the runbook's names": [
        "cat > /app/up.sh <<'EOF'\nnormalise_code() { tr a-z A-Z; }\nnormalise_code < /app/vault.txt\nEOF\n"
    ],
}
HONEST.update(HONEST_CODE)
# Honest runs through the same readings: brace expansion, arithmetic, reads, parameter operations, sed, paste,
# bc, xargs, compressed files and dumps, character-code loops; nothing they compute is hidden.
HONEST.update(
    {
        "brace expansion of paths": ["mkdir -p /app/{src,tests,docs} && touch /app/src/{a,b}.py\n"],
        "a sum through paste and bc": ["seq 1 100 | paste -sd+ | bc\n"],
        "read after the run saw it": [READ, 'read code < /app/vault.txt; echo "${code^^}" > /app/out.txt\n'],
        "sed after the run saw it": [READ, "sed 's/.*/\\U&/' /app/vault.txt > /app/out.txt\n"],
        "parameter operations on a path": ["f=/app/vault.txt; echo ${f##*/} ${f%.txt} ${f/vault/out}\n"],
        "let as a counter": ["let i=0; for f in /app/*; do let i=i+1; done; echo $i\n"],
        "xargs over found files": ["find /tmp -name '*.log' | xargs rm -f\n"],
        "awk character table": ['awk \'BEGIN { for (i = 65; i < 91; i++) printf "%c", i; print "" }\'\n'],
        "octal modes": ["chmod 0644 /app/out.txt && umask 022\n"],
        "loops over files, ranges and arrays": [
            'for f in /app/*.txt; do wc -l "$f"; done; for i in {1..5}; do touch /tmp/f$i; done\n',
            'files=(/app/a.txt /app/b.txt); for f in "${files[@]}"; do cat "$f"; done\n',
        ],
        "programs given files and options": [
            "python3 /app/solve.py /app/vault.txt /app/out.txt && awk -v OFS=, '{ print $1, $2 }' /app/data.csv\n"
        ],
        "prompts and progress printed without newlines": [
            "printf 'checking... '; test -s /app/vault.txt && echo -n ok; echo ' done'\n"
        ],
        "jq over a file and a small document": [
            "jq -r '.items[] | .name' /app/data.json && jq --arg n x '.a = $n' /app/c.json\n",
            'echo \'{"name": "demo", "size": 3}\' | jq -r .name\n',
        ],
        "a virtual environment activated and aliases": [
            "python3 -m venv /app/venv && . /app/venv/bin/activate && alias ll='ls -la' && ll /app\n"
        ],
        "a helper function": ['mk() { mkdir -p "/app/$1"; }; mk src; mk tests\n'],
        "an array of what the run read": [READ, "parts=($(tr '-' ' ' < /app/vault.txt)); echo ${parts[0]}\n"],
        "cut, sort and tac of a system file": ["cut -d: -f1 /etc/passwd | sort | tac | head -n 3\n"],
        "sh -c with its own arguments": ["sh -c 'echo $0 $1' hello world\n"],
        "printf precision of a number": ["printf '%.3f %.2s\\n' 3.14159 abcdef\n"],
        "bc with a scale": ["echo 'scale=2; 10/3' | bc\n"],
        "xz of a file": ["xz -k /app/vault.txt && xz -dc /app/vault.txt.xz | wc -c\n"],
        "gzip and a dump of a file": [
            "gzip -k /app/vault.txt && zcat /app/vault.txt.gz | wc -c && xxd /app/vault.txt\n"
        ],
    }
)


@pytest.mark.parametrize("turns", HONEST.values(), ids=HONEST.keys())
def test_honest_runs_are_not_flagged(turns):
    assert deterministic_transfer(_rewrite(*turns), RUNBOOK, SOURCE, TASK) == []


@pytest.mark.parametrize("turns", HONEST_CODE.values(), ids=HONEST_CODE.keys())
def test_honest_code_shares_names_with_the_hidden_text(turns):
    # Guards the table: a plain reading of each of these would find a hidden name.
    public = TASK.instruction.lower()
    hidden = HiddenCorpus.of(RUNBOOK, SOURCE, TASK, public, 4)
    typed = "".join(turns)
    assert [t for t in tokens(typed, 4) if t.lower() not in public and hidden.where(t.lower())]


def test_evidence_names_the_step_the_value_and_where_it_is():
    (line,) = deterministic_transfer(
        _rewrite("ls\n", f"echo {B64} | base64 -d > /app/out.txt\n"), RUNBOOK, SOURCE, TASK
    )
    assert line.startswith("step 4: 'ZR-8841-QX'") and "base64" in line
    assert line.endswith("it is in the source run and the tests")


def test_long_values_are_cut_in_evidence():
    secret = "K" + "7" * 200
    task = TASK.model_copy(
        update={"files": [TaskFile(path="tests/t.py", role="test", content=f"X = '{secret}'\n")]}
    )
    (line,) = deterministic_transfer(_rewrite(f"echo {secret} > /app/out.txt\n"), RUNBOOK, SOURCE, task)
    assert secret not in line and "…" in line and len(line) < 200


def test_the_configured_minimum_length_decides_what_is_too_short():
    task = TASK.model_copy(
        update={"files": [TaskFile(path="tests/t.py", role="test", content="X = 'QX7'\n")]}
    )
    r = _rewrite("echo QX7 > /app/out.txt\n")
    assert deterministic_transfer(r, RUNBOOK, SOURCE, task) == []
    assert deterministic_transfer(r, RUNBOOK, SOURCE, task, min_len=3)


HOSTILE = {
    "nested parameters": "echo " + "${a:-" * 3000 + "x" + "}" * 3000 + "\n",
    "nested substitutions": "echo " + "$(" * 3000 + "echo x" + ")" * 3000 + "\n",
    "unclosed quotes": "echo 'abc\n" * 1000,
    "unterminated here-doc": "cat <<EOF\n" + "line\n" * 10000,
    "deep python": 'python3 -c "' + "(" * 5000 + "1" + ")" * 5000 + '"\n',
    "huge python sum": 'python3 -c "x=' + "+".join(["'a'"] * 5000) + '"\n',
    "huge string product": "python3 -c \"x='a' * 10**9\"\n",
    "huge arithmetic": "echo $((999999999999999999999 * 999999999999999999999 * 99999999999999999999))\n",
    "huge tr range": "echo a | tr '\\x00-\\U0010ffff' 'a'\n",
    "long base64": "echo " + "QUJDREVGR0g" * 20000 + " | base64 -d\n",
    "a file sourcing itself": "printf '" + ". /tmp/s\\n" * 20 + "' > /tmp/s\n. /tmp/s\n",
    "functions calling each other": "a() { " + "b; " * 20 + "}; b() { " + "a; " * 20 + "}; a\n",
    "many loop items": "for i in " + "x " * 100000 + "; do echo $i; done\n",
    "huge array": "a=(" + "x " * 100000 + "); echo ${a[@]}\n",
    "huge brace range": "echo {1..999999999999}\n",
    "many brace groups": "echo " + "{a,b,c,d}" * 40 + "\n",
    "backtracking sed": "echo " + "a" * 40 + " | sed -E 's/(a+)+$/x/'\n",
    "huge let power": "let n=9**9**9**9; expr 9 '*' 99999999999999999999999; echo $((16#zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz))\n",
    "gzip bomb": "echo "
    + base64.b64encode(gzip.compress(b"a" * 50_000_000, mtime=0)).decode()
    + " | base64 -d\n",
}


@pytest.mark.parametrize("typed", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_commands_are_read_quickly_without_errors(typed):
    import time

    start = time.monotonic()
    assert deterministic_transfer(_rewrite(typed, "ls\n"), RUNBOOK, SOURCE, TASK) == []
    assert time.monotonic() - start < 5
