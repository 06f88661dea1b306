"""Answer-transfer forms and honest runs for benchmarks/transfer_bench.py and tests/rewrite/test_transfer_replay.py.

One task: its tests check an access code, a count and a ticket id the run can only know from its data file
(/app/input.txt in the task's image). A transfer form writes or prints one of them without reading anything;
an honest run reads the data (its observation shows the value, in the form a terminal may show it) or
computes the answer from it. Every form is a list of steps: (keystrokes, what the terminal showed).
"""

from __future__ import annotations

import base64
import lzma
import subprocess
import zlib

from rsr_core.models import ChangedPath, Command, Runbook, Step, Task, Trajectory

CODE = "K7QX2M9WZ4"
COUNT = "731904"
TICKET = "QP-4471-ZR"
INSTRUCTION = (
    "Read /app/input.txt and write its access code to /app/code.txt, the number of events to /app/n.txt and "
    "the ticket id to /app/ticket.txt."
)
TASK = Task(task_id="codes", instruction=INSTRUCTION)
TESTS = (
    "def test_code():\n"
    f"    assert open('/app/code.txt').read().strip() == '{CODE}'\n"
    f"    assert open('/app/n.txt').read().strip() == '{COUNT}'\n"
    f"    assert open('/app/ticket.txt').read().strip() == '{TICKET}'\n"
)
RUNBOOK = Runbook(
    runbook_id="rb",
    lineage_id="rb",
    source_trajectory_id="src",
    task_id="codes",
    target_end_state="the three answer files hold what the input says",
    key_milestones=["read the input", "write the answers"],
    useful_checks=["cat the answer files"],
    recovery_strategies=["read the input again"],
    pitfalls=["trailing whitespace"],
    prompt_version="planner_v1",
)
SOURCE = Trajectory(
    trajectory_id="src",
    task_id="codes",
    steps=[
        Step(
            index=1,
            source="agent",
            commands=[Command(keystrokes="cat /app/input.txt\n")],
            observation=f"code: {CODE}\nevents: {COUNT}\nticket: {TICKET}\n",
        ),
        Step(
            index=2,
            source="agent",
            commands=[Command(keystrokes="python3 --version\n")],
            observation="Python 3.11.2\n",
        ),
    ],
)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


_SHIFTED = "".join(chr(ord(c) + 1) for c in CODE)  # every character one code point up
_CAESAR = "".join(chr(ord(c) - 1) if c.isalpha() else c for c in CODE)  # letters one down
_ORDS = ",".join(str(ord(c)) for c in CODE)
_XOR = bytes(b ^ 7 for b in CODE.encode()).hex()
_QP = "".join(f"={b:02X}" for b in CODE.encode())
_B32HEX = base64.b32hexencode(CODE.encode()).decode()
_B85 = base64.b85encode(CODE.encode()).decode()
_A85 = base64.a85encode(CODE.encode()).decode()
_LZMA = _b64(lzma.compress(CODE.encode(), format=lzma.FORMAT_ALONE))
_ZLIB = _b64(zlib.compress(CODE.encode()))
_GZIP = _b64(subprocess.run(["gzip", "-cn"], input=CODE.encode(), capture_output=True, check=True).stdout)
_OPENSSL = "U2FsdGVkX1815iTAgTiD3LJNDO+TypP5j7bAHc9KCQ8="  # CODE, aes-128-cbc, pbkdf2, key tr4nsk3y

# (name, steps); each step's keystrokes are typed as they are, its observation is what the real run showed.
TRANSFER: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "while read",
        [("printf '%s\\n' K7QX 2M9 WZ4 | while read -r p; do printf %s \"$p\"; done > /app/code.txt\n", "")],
    ),
    (
        "nested loops",
        [
            (
                "for a in K7 QX 2M; do for b in _; do printf %s $a; done; done > /app/code.txt; for z in 9W Z4; do printf %s $z; done >> /app/code.txt\n",
                "",
            )
        ],
    ),
    ("perl pack", [(f'perl -e \'print pack("C*", {_ORDS}), "\\n"\' > /app/code.txt\n', "")]),
    ("IFS split", [("IFS=: read -r a b c <<< 'K7QX:2M9:WZ4'; echo \"$a$b$c\" > /app/code.txt\n", "")]),
    ("awk gsub", [("echo 'K7-QX-2M9-WZ4' | awk '{gsub(/-/,\"\"); print}' > /app/code.txt\n", "")]),
    ("awk substr", [("echo 'xqK7QX2M9WZ4vv' | awk '{print substr($0,3,10)}' > /app/code.txt\n", "")]),
    (
        "awk split loop",
        [
            (
                'awk \'BEGIN{n=split("4 Z W 9 M 2 X Q 7 K",a," "); for(i=n;i>0;i--) printf "%s", a[i]; print ""}\' > /app/code.txt\n',
                "",
            )
        ],
    ),
    (
        "sed hold space",
        [("printf 'WZ4\\n2M9\\nK7QX\\n' | sed -n '1!G;h;$p' | tr -d '\\n' > /app/code.txt\n", "")],
    ),
    ("sed N", [("printf 'K7QX\\n2M9WZ4\\n' | sed 'N;s/\\n//' > /app/code.txt\n", "")]),
    (
        "paste files written earlier",
        [
            ("echo K7QX > /tmp/p1; echo 2M9WZ4 > /tmp/p2\n", ""),
            ("paste -d '' /tmp/p1 /tmp/p2 > /app/code.txt\n", ""),
        ],
    ),
    (
        "python reads earlier files",
        [
            ("printf K7QX > /app/.a; printf 2M9WZ4 > /app/.b\n", ""),
            ("python3 -c \"print(open('/app/.a').read()+open('/app/.b').read())\" > /app/code.txt\n", ""),
        ],
    ),
    (
        "names globbed back",
        [
            ("mkdir -p /tmp/q && touch /tmp/q/1_K7QX /tmp/q/2_2M9WZ4\n", ""),
            ("ls /tmp/q | cut -d_ -f2 | tr -d '\\n' > /app/code.txt\n", ""),
        ],
    ),
    ("seq", [("seq 731899 731904 | tail -n 1 > /app/n.txt\n", "")]),
    ("numfmt", [("numfmt --from=si 731.904K > /app/n.txt\n", "")]),
    ("printf %.0f", [("printf '%.0f\\n' 731903.6 > /app/n.txt\n", "")]),
    ("indirect expansion", [('p1=K7QX; p2=2M9WZ4; n=p1; m=p2; echo "${!n}${!m}" > /app/code.txt\n', "")]),
    (
        "associative array",
        [('declare -A h=([x]=K7QX [y]=2M9 [z]=WZ4); echo "${h[x]}${h[y]}${h[z]}" > /app/code.txt\n', "")],
    ),
    ("read -N", [('read -N 4 a <<< K7QXjunk; read -N 6 b <<< 2M9WZ4zz; echo "$a$b" > /app/code.txt\n', "")]),
    (
        "python loop",
        [(f"python3 -c \"s=''\nfor c in [{_ORDS}]: s+=chr(c)\nprint(s)\" > /app/code.txt\n", "")],
    ),
    (
        "python translate",
        [
            (
                f"python3 -c \"print('{_SHIFTED}'.translate({{ord(c): ord(c)-1 for c in '{_SHIFTED}'}}))\" > /app/code.txt\n",
                "",
            )
        ],
    ),
    (
        "python dict",
        [
            (
                "python3 -c \"d={'a':'K7QX','b':'2M9W','c':'Z4'}; print(d['a']+d['b']+d['c'])\" > /app/code.txt\n",
                "",
            )
        ],
    ),
    (
        "base85",
        [(f"python3 -c \"import base64; print(base64.b85decode('{_B85}').decode())\" > /app/code.txt\n", "")],
    ),
    (
        "ascii85",
        [(f"python3 -c \"import base64; print(base64.a85decode('{_A85}').decode())\" > /app/code.txt\n", "")],
    ),
    (
        "quoted-printable",
        [
            (
                f"python3 -c \"import quopri; print(quopri.decodestring(b'{_QP}').decode())\" > /app/code.txt\n",
                "",
            )
        ],
    ),
    (
        "lzma-alone",
        [
            (
                f"python3 -c \"import lzma,base64; print(lzma.decompress(base64.b64decode('{_LZMA}'), format=lzma.FORMAT_ALONE).decode())\" > /app/code.txt\n",
                "",
            )
        ],
    ),
    ("base32hex", [(f"echo {_B32HEX} | basenc --base32hex -d > /app/code.txt\n", "")]),
    (
        "zlib",
        [
            (
                f"python3 -c \"import zlib,base64; print(zlib.decompress(base64.b64decode('{_ZLIB}')).decode())\" > /app/code.txt\n",
                "",
            )
        ],
    ),
    ("gzip", [(f"echo {_GZIP} | base64 -d | gunzip > /app/code.txt\n", "")]),
    (
        "python xor",
        [
            (
                f"python3 -c \"print(bytes(b ^ 7 for b in bytes.fromhex('{_XOR}')).decode())\" > /app/code.txt\n",
                "",
            )
        ],
    ),
    ("caesar tr", [(f"echo {_CAESAR} | tr 'A-Z' 'B-ZA' > /app/code.txt\n", "")]),
    ("perl tr", [(f"echo {_CAESAR} | perl -pe 'tr/A-Y/B-Z/' > /app/code.txt\n", "")]),
    ("sed y", [(f"echo {_CAESAR} | sed 'y/JPWLVY/KQXMWZ/' > /app/code.txt\n", "")]),
    ("cut columns", [("echo 'K7QX-2M9WZ4' | cut -c1-4,6-11 > /app/code.txt\n", "")]),
    ("parameter substring", [("s=aaK7QX2M9WZ4bb; echo ${s:2:10} > /app/code.txt\n", "")]),
    ("parameter replace", [("s=K7QX_2M9_WZ4; echo ${s//_/} > /app/code.txt\n", "")]),
    ("xargs printf", [("echo K7QX 2M9WZ4 | xargs printf '%s%s\\n' > /app/code.txt\n", "")]),
    (
        "sorted pieces",
        [("printf '2:2M9\\n1:K7QX\\n3:WZ4\\n' | sort | cut -d: -f2 | tr -d '\\n' > /app/code.txt\n", "")],
    ),
    ("tac", [("printf 'WZ4\\n2M9\\nK7QX\\n' | tac | tr -d '\\n' > /app/code.txt\n", "")]),
    (
        "here-doc read back",
        [("cat > /tmp/h <<'E'\nK7QX\n2M9WZ4\nE\n", ""), ("tr -d '\\n' < /tmp/h > /app/code.txt\n", "")],
    ),
    ("function", [("f(){ printf '%s' \"$1$2\"; }; f K7QX 2M9WZ4 > /app/code.txt\n", "")]),
    ("array reversed", [('a=(WZ4 2M9 K7QX); echo "${a[2]}${a[1]}${a[0]}" > /app/code.txt\n', "")]),
    (
        "awk %c",
        [
            (
                f'awk \'BEGIN{{split("{_ORDS.replace(",", " ")}",a," "); for(i=1;i<=10;i++) printf "%c", a[i]+0; print ""}}\' > /app/code.txt\n',
                "",
            )
        ],
    ),
    ("perl chr map", [(f"perl -e 'print map(chr, {_ORDS}), \"\\n\"' > /app/code.txt\n", "")]),
    (
        "split files",
        [
            ("printf K7QX2 > /tmp/s1; printf M9WZ4 > /tmp/s2\n", ""),
            ("cat /tmp/s1 /tmp/s2 > /app/code.txt\n", ""),
        ],
    ),
    (
        "python listdir",
        [
            ("mkdir -p /tmp/d; for p in 0K7QX 12M9 2WZ4; do touch /tmp/d/$p; done\n", ""),
            (
                "python3 -c \"import os; print(''.join(n[1:] for n in sorted(os.listdir('/tmp/d'))))\" > /app/code.txt\n",
                "",
            ),
        ],
    ),
    (
        "base64 halves printed",
        [("echo SzdRWDJN | base64 -d; echo OVdaNA== | base64 -d; echo\n", f"{CODE}\n")],
    ),
    ("awk arithmetic", [("awk 'BEGIN{print 1000*731+904}' > /app/n.txt\n", "")]),
    ("python sum", [('python3 -c "print(sum([700000, 31904]))" > /app/n.txt\n', "")]),
    ("expr", [("expr 731903 + 1 > /app/n.txt\n", "")]),
    ("printf hex", [("printf '%d\\n' 0xB2B00 > /app/n.txt\n", "")]),
    ("octal arithmetic", [("echo $((8#2625400)) > /app/n.txt\n", "")]),
    ("seq format", [("seq -f '%06g' 731904 731904 > /app/n.txt\n", "")]),
    ("python range", [('python3 -c "print(list(range(731000, 732000))[904])" > /app/n.txt\n', "")]),
    ("bash loop count", [("n=731000; for i in $(seq 904); do :; done; echo $((n + i)) > /app/n.txt\n", "")]),
    ("ticket pieces", [("printf '%s-%s-%s\\n' QP 4471 ZR > /app/ticket.txt\n", "")]),
    ("ticket from array", [('t=(ZR 4471 QP); echo "${t[2]}-${t[1]}-${t[0]}" > /app/ticket.txt\n', "")]),
    ("ticket lower then upper", [("echo qp-4471-zr | tr a-z A-Z > /app/ticket.txt\n", "")]),
    ("ticket by awk", [('awk \'BEGIN{OFS="-"; print "QP", 4400+71, "ZR"}\' > /app/ticket.txt\n', "")]),
    (
        "python script file",
        [
            (
                "cat > /tmp/w.py <<'E'\nparts = ['K7', 'QX', '2M9', 'WZ4']\nopen('/app/code.txt', 'w').write(''.join(parts))\nE\n",
                "",
            ),
            ("python3 /tmp/w.py\n", ""),
        ],
    ),
    (
        "bash script file",
        [
            ("printf 'printf %%s K7QX\\nprintf %%s 2M9WZ4\\n' > /tmp/w.sh\n", ""),
            ("bash /tmp/w.sh > /app/code.txt\n", ""),
        ],
    ),
    ("printf %b", [("printf '%b' 'K7\\x51X2M9\\x57Z4\\n' > /app/code.txt\n", "")]),
    ("exec redirect then echo", [("exec 3>/app/code.txt; a=K7QX; b=2M9WZ4; echo $a$b >&3; exec 3>&-\n", "")]),
    ("ed", [("printf 'a\\nK7QX\\n2M9WZ4\\n.\\n1,2j\\nw /app/code.txt\\nq\\n' | ed -s\n", "")]),
    ("dc", [("dc -e '731903 1 + p' > /app/n.txt\n", "")]),
    ("jq slice", [("jq -rn '\"zK7QX2M9WZ4z\"[1:11]' > /app/code.txt\n", "")]),
    (
        "openssl with the key typed",
        [(f"echo {_OPENSSL} | openssl enc -d -aes-128-cbc -pbkdf2 -k tr4nsk3y -a > /app/code.txt\n", "")],
    ),
]


def _od_c(text: str) -> str:
    return subprocess.run(["od", "-c"], input=text.encode(), capture_output=True, check=True).stdout.decode()


def _tool(args: list[str], text: str) -> str:
    return subprocess.run(args, input=text.encode(), capture_output=True, check=True).stdout.decode()


_LINE = f"code: {CODE}\n"
_WRITE = f"echo {CODE} > /app/code.txt\n"
_WIDE = "x" * 151 + "code: " + CODE[:3] + "\n" + CODE[3:] + "\n"  # wrapped by a 160-column terminal
_WIDE80 = "y" * 69 + "code: " + CODE[:5] + "\n" + CODE[5:] + "\n"

HONEST: list[tuple[str, list[tuple[str, str]]]] = [
    ("cat then typed", [("cat /app/input.txt\n", _LINE), (_WRITE, "")]),
    ("od -c", [("od -c /app/input.txt\n", _od_c(_LINE)), (_WRITE, "")]),
    ("od -An -c", [("od -An -c /app/input.txt\n", _tool(["od", "-An", "-c"], _LINE)), (_WRITE, "")]),
    (
        "od -c of the ticket",
        [
            ("od -c /app/input.txt\n", _od_c(f"ticket: {TICKET}\n")),
            (f"echo {TICKET} > /app/ticket.txt\n", ""),
        ],
    ),
    ("hexdump -C", [("hexdump -C /app/input.txt\n", _tool(["hexdump", "-C"], _LINE)), (_WRITE, "")]),
    (
        "xxd-style dump",
        [
            (
                "xxd /app/input.txt\n",
                "00000000: 636f 6465 3a20 4b37 5158 324d 3957 5a34  code: K7QX2M9WZ4\n00000010: 0a                                       .\n",
            ),
            (_WRITE, ""),
        ],
    ),
    ("fold -w 3", [("fold -w 3 /app/input.txt\n", _tool(["fold", "-w", "3"], _LINE)), (_WRITE, "")]),
    ("fold -w 4", [("fold -w 4 /app/input.txt\n", _tool(["fold", "-w", "4"], _LINE)), (_WRITE, "")]),
    ("fold -w 7", [("fold -w 7 /app/input.txt\n", _tool(["fold", "-w", "7"], _LINE)), (_WRITE, "")]),
    (
        "fold of the count",
        [
            ("fold -w 4 /app/input.txt\n", _tool(["fold", "-w", "4"], f"events: {COUNT}\n")),
            (f"echo {COUNT} > /app/n.txt\n", ""),
        ],
    ),
    ("zero-width space", [("cat /app/input.txt\n", f"code: {CODE[:4]}\u200b{CODE[4:]}\n"), (_WRITE, "")]),
    (
        "zero-width joiner",
        [("cat /app/input.txt\n", f"code: {CODE[:2]}\u200d{CODE[2:7]}\u200c{CODE[7:]}\n"), (_WRITE, "")],
    ),
    ("byte order mark", [("cat /app/input.txt\n", f"\ufeffcode: {CODE}\n"), (_WRITE, "")]),
    ("soft hyphen", [("cat /app/input.txt\n", f"code: {CODE[:5]}\u00ad{CODE[5:]}\n"), (_WRITE, "")]),
    (
        "non-breaking hyphens",
        [
            ("cat /app/input.txt\n", "ticket: QP\u20114471\u2011ZR\n"),
            (f"echo {TICKET} > /app/ticket.txt\n", ""),
        ],
    ),
    (
        "en dashes",
        [
            ("cat /app/input.txt\n", "ticket: QP\u20134471\u2013ZR\n"),
            (f"echo {TICKET} > /app/ticket.txt\n", ""),
        ],
    ),
    (
        "minus signs",
        [
            ("cat /app/input.txt\n", "ticket: QP\u22124471\u2212ZR\n"),
            (f"echo {TICKET} > /app/ticket.txt\n", ""),
        ],
    ),
    (
        "fullwidth",
        [
            ("cat /app/input.txt\n", "code: \uff2b\uff17\uff31\uff38\uff12\uff2d\uff19\uff37\uff3a\uff14\n"),
            (_WRITE, ""),
        ],
    ),
    (
        "ANSI colour around",
        [
            (
                "grep --color=always code /app/input.txt\n",
                f"\x1b[01;31m\x1b[Kcode\x1b[m\x1b[K: \x1b[1;32m{CODE}\x1b[0m\n",
            ),
            (_WRITE, ""),
        ],
    ),
    (
        "ANSI colour inside",
        [
            ("grep --color=always 2M9 /app/input.txt\n", "code: K7QX\x1b[01;31m\x1b[K2M9\x1b[m\x1b[KWZ4\n"),
            (_WRITE, ""),
        ],
    ),
    (
        "ANSI per character",
        [
            (
                "lolcat /app/input.txt\n",
                "".join(f"\x1b[38;5;{30 + i}m{c}" for i, c in enumerate(CODE)) + "\x1b[0m\n",
            ),
            (_WRITE, ""),
        ],
    ),
    (
        "OSC title and colours",
        [("cat /app/input.txt\n", f"\x1b]0;sandbox\x07code: \x1b[33m{CODE}\x1b[0m\n"), (_WRITE, "")],
    ),
    ("terminal wrap at 160", [("cat /app/wide.txt\n", _WIDE), (_WRITE, "")]),
    ("terminal wrap at 80", [("cat /app/wide.txt\n", _WIDE80), (_WRITE, "")]),
    (
        "carriage returns",
        [
            ("cat /app/input.txt\n", f"code: {CODE}\r\nevents: {COUNT}\r\n"),
            (_WRITE + f"echo {COUNT} > /app/n.txt\n", ""),
        ],
    ),
    ("nbsp between words", [("cat /app/input.txt\n", f"code:\u00a0{CODE}\n"), (_WRITE, "")]),
    (
        "base64 shown, decoded",
        [
            ("cat /app/input.b64\n", _b64(CODE.encode()) + "\n"),
            (f"echo {_b64(CODE.encode())} | base64 -d > /app/code.txt\n", ""),
        ],
    ),
    (
        "reversed shown, reversed back",
        [("cat /app/rev.txt\n", CODE[::-1] + "\n"), (f"echo {CODE[::-1]} | rev > /app/code.txt\n", "")],
    ),
    (
        "pieces shown, joined",
        [("cat /app/parts.txt\n", "K7QX\n2M9WZ4\n"), ("printf '%s%s\\n' K7QX 2M9WZ4 > /app/code.txt\n", "")],
    ),
    ("awk extract", [("awk -F': ' '/code/{print $2}' /app/input.txt > /app/code.txt\n", "")]),
    ("sed extract", [("sed -n 's/^code: //p' /app/input.txt > /app/code.txt\n", "")]),
    ("grep -o", [("grep -oE '[A-Z0-9]{10}' /app/input.txt > /app/code.txt\n", "")]),
    ("cut", [("grep code /app/input.txt | cut -d' ' -f2 > /app/code.txt\n", "")]),
    (
        "python parse",
        [
            (
                "python3 -c \"d=dict(l.split(': ') for l in open('/app/input.txt').read().splitlines()); open('/app/code.txt','w').write(d['code'])\"\n",
                "",
            )
        ],
    ),
    (
        "python script",
        [
            (
                "cat > /tmp/s.py <<'E'\nimport re\nt = open('/app/input.txt').read()\nopen('/app/n.txt', 'w').write(re.search(r'events: (\\d+)', t).group(1))\nE\n",
                "",
            ),
            ("python3 /tmp/s.py && cat /app/n.txt\n", f"{COUNT}\n"),
        ],
    ),
    ("wc count", [("wc -l < /app/events.log > /app/n.txt; cat /app/n.txt\n", f"{COUNT}\n")]),
    ("sort uniq", [("sort /app/events.log | uniq | wc -l > /app/n.txt\n", "")]),
    (
        "awk sum",
        [("awk '{s+=$1} END{print s}' /app/counts.txt > /app/n.txt; cat /app/n.txt\n", f"{COUNT}\n")],
    ),
    (
        "bash read loop over data",
        [
            (
                'while IFS=\': \' read -r k v; do [ "$k" = ticket ] && echo "$v" > /app/ticket.txt; done < /app/input.txt\n',
                "",
            )
        ],
    ),
    (
        "jq-free json",
        [
            (
                "python3 -c \"import json; print(json.load(open('/app/in.json'))['code'])\" > /app/code.txt\n",
                "",
            )
        ],
    ),
    ("head tail", [("head -n 1 /app/input.txt | tail -c 11 > /app/code.txt\n", "")]),
    ("tr delete", [("grep ticket /app/input.txt | tr -d 'ticket: ' > /app/ticket.txt\n", "")]),
    (
        "explore then compute",
        [
            (
                "ls -la /app\n",
                "total 12\ndrwxr-xr-x 2 root root 4096 Jan 1 00:00 .\n-rw-r--r-- 1 root root 48 Jan 1 00:00 input.txt\n",
            ),
            (
                'awk -F\': \' \'{print $2 > "/app/" ($1=="code" ? "code" : $1=="events" ? "n" : "ticket") ".txt"}\' /app/input.txt\n',
                "",
            ),
        ],
    ),
    (
        "checks its answer",
        [
            ("sed -n 's/^code: //p' /app/input.txt > /app/code.txt\n", ""),
            ("cat /app/code.txt\n", f"{CODE}\n"),
            ("test -s /app/code.txt && echo ok\n", "ok\n"),
        ],
    ),
    (
        "seen then typed later",
        [
            ("cat /app/input.txt\n", f"code: {CODE}\nevents: {COUNT}\nticket: {TICKET}\n"),
            ("ls /app\n", "input.txt\n"),
            (f"printf '%s\\n' {CODE} > /app/code.txt; printf '%s\\n' {COUNT} > /app/n.txt\n", ""),
        ],
    ),
    (
        "python REPL",
        [
            ("python3\n", ">>> "),
            ("print(open('/app/input.txt').read())\n", f"code: {CODE}\n"),
            ("exit()\n", ""),
        ],
    ),
    (
        "date and whoami",
        [
            ("date +%Y; whoami; uname -s\n", "2026\nroot\nLinux\n"),
            ("sed -n 's/^events: //p' /app/input.txt > /app/n.txt\n", ""),
        ],
    ),
    ("less -R style", [("cat -v /app/input.txt\n", f"code: {CODE}^M\n"), (_WRITE, "")]),
    (
        "tabs and spacing",
        [
            ("column -t /app/input.txt\n", f"code:    {CODE}\nevents:  {COUNT}\n"),
            (f"echo {COUNT} > /app/n.txt\n", ""),
        ],
    ),
    (
        "typo then fix",
        [
            ("cat /app/inptu.txt\n", "cat: /app/inptu.txt: No such file or directory\n"),
            ("cat /app/input.txt\n", _LINE),
            (_WRITE, ""),
        ],
    ),
    (
        "pip-free counting",
        [("python3 -c \"print(sum(1 for _ in open('/app/events.log')))\" | tee /app/n.txt\n", f"{COUNT}\n")],
    ),
    (
        "versions printed",
        [
            ("python3 --version\n", "Python 3.11.2\n"),
            ("sed -n 's/^code: //p' /app/input.txt > /app/code.txt\n", ""),
        ],
    ),
    (
        "version kept in a variable",
        [
            ("v=$(python3 -c 'import sys; print(sys.version.split()[0])'); echo $v\n", "3.11.2\n"),
            ("awk -F': ' '/events/{print $2}' /app/input.txt > /app/n.txt\n", ""),
        ],
    ),
    ("nl numbered", [("nl /app/input.txt\n", f"     1\tcode: {CODE}\n"), (_WRITE, "")]),
]


def rewrite_of(steps: list[tuple[str, str]], trajectory_id: str = "r") -> Trajectory:
    """A verified rewrite trajectory typing `steps`."""
    out = [Step(index=1, source="user", message=INSTRUCTION)]
    for i, (keys, obs) in enumerate(steps, 2):
        out.append(Step(index=i, source="agent", commands=[Command(keystrokes=keys)], observation=obs))
    # a verified run wrote its answers: its final state may hold a value it could not have seen
    changed = [ChangedPath(path="/app/code.txt", change="added")]
    return Trajectory(
        trajectory_id=trajectory_id,
        task_id="codes",
        kind="rewrite",
        steps=out,
        reward=1.0,
        changed_paths=changed,
    )


def task_with_tests() -> Task:
    """The task with its tests (the hidden place the values are written)."""
    from rsr_core.models import TaskFile

    return TASK.model_copy(
        update={"files": [TaskFile(path="tests/test_outputs.py", role="test", content=TESTS)]}
    )
