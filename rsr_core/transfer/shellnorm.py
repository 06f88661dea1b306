"""What typed shell text spells out once the shell has read it, without running anything.

A small, tolerant reading of bash: quotes are removed and adjacent pieces joined (`"ZR""-8841"`), `$'…'` and
escapes decoded, brace expansion applied, `for … in` loops read once per item, arrays and functions (called
with their arguments as positional parameters) kept, variables assigned earlier in the session expanded
(`a=ZR; echo "$a-8841"`) with the parameter operations (`${v//a/b}`, `${v#p}`, `${v%p}`, `${v^^}`, `${v:+w}`,
`${v:1:2}`), `$((…))` and `$[…]` computed (session variables, octal, hex and `BASE#` literals), `$(echo …)`
substituted, here-doc bodies read, Python programs (`python3 -c`, here-docs fed to python or written to a .py
file) replaced by the data they spell out, and the output of echo / printf / here-docs followed through the
filters that only re-encode it (base64 -d, xxd -r -p, rev, tr, cat, tee) into the terminal or into files (`>`,
`>>`). Anything it does not understand passes through as text.
"""

from __future__ import annotations

import re

from rsr_core.transfer.decode import unescape
from rsr_core.transfer.filters import shell_arithmetic
from rsr_core.transfer.shellrun import Command, ShellView, run_pipeline

_OPS = ("&&", "||", ";;", ";", "|", "&", "(", ")", "\n")
_REDIRS = ("<<<", "<<-", "<<", ">>", ">|", ">&", "&>", "<", ">")
MAX_DEPTH = 6
_DATA_WORD = re.compile(r"[^\s#]*\d[^\s#]*")
_ARRAY_NAME = re.compile(r"^[A-Za-z_]\w*\+?$")
_LOOP = re.compile(
    r"\bfor[ \t]+([A-Za-z_]\w*)[ \t]+in[ \t]+([^;\n]*?)[ \t]*[;\n]\s*do\b(.*?)[;\n]\s*done\b", re.S
)
MAX_LOOP_ITEMS = 64


def unroll_loops(src: str) -> str:
    """`for v in a b; do BODY; done` read as its iterations (v=a; BODY; v=b; BODY) followed by one command that
    prints what the iterations print together, so that a redirection after `done` gets the loop's output."""
    if "for" not in src or "done" not in src:
        return src

    def unroll(m: re.Match[str]) -> str:
        name, body = m.group(1), m.group(3).strip().rstrip(";")
        items = [w for raw in m.group(2).split()[:MAX_LOOP_ITEMS] for w in braces(raw)][:MAX_LOOP_ITEMS]
        if not items or "for" in body:
            return m.group()
        runs = [f"{name}={item}; {body}" for item in items]
        joined = "".join(f"$({run})" for run in runs)
        return "; ".join(runs) + f"; printf %s {joined}"

    return _LOOP.sub(unroll, src)


_BRACES = re.compile(r"\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}")
_QUOTING = re.compile(r"[\"'$`\\]")
MAX_BRACE_WORDS = 256


def braces(word: str) -> list[str]:
    """A word's brace expansion (`a{b,c}` → ab ac, `{1..3}`), as bash does it before anything else."""
    m = _BRACES.search(word)
    if m is None:
        return [word]
    body = m.group()[1:-1]
    seq = re.fullmatch(r"(-?\d+)\.\.(-?\d+)|([A-Za-z])\.\.([A-Za-z])", body)
    if seq and seq.group(1) is not None:
        a, b = int(seq.group(1)), int(seq.group(2))
        items = [str(n) for n in range(a, b + (1 if b >= a else -1), 1 if b >= a else -1)[:MAX_BRACE_WORDS]]
    elif seq:
        a, b = ord(seq.group(3)), ord(seq.group(4))
        items = [chr(n) for n in range(a, b + (1 if b >= a else -1), 1 if b >= a else -1)[:MAX_BRACE_WORDS]]
    elif "," in body:
        items = body.split(",")
    else:
        return [word]
    out: list[str] = []
    for item in items[:MAX_BRACE_WORDS]:
        out += braces(word[: m.start()] + item + word[m.end() :])
        if len(out) >= MAX_BRACE_WORDS:
            break
    return out[:MAX_BRACE_WORDS]


def _special(name: str, env: dict[str, str]) -> str:
    """$0…$9 (positional parameters set by `set --` or `sh -c CODE ARGS`), $@ and $*; other specials empty."""
    if name.isdigit():
        return env.get(name, "")
    if name in "@*":
        return " ".join(env[str(k)] for k in range(1, 10) if str(k) in env)
    return ""


def _glob(pattern: str, greedy: bool = True) -> str | None:
    """A shell glob (`*`, `?`, `[…]`) as a regular expression; None when it is too long to be a value."""
    if len(pattern) > 200:
        return None
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*" if greedy else ".*?")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body[:1] in "!^" else body) + "]")
            i = end
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    rx = "".join(out)
    try:
        re.compile(rx)
    except re.error:
        return None
    return rx


class _Reader:
    """One pass over shell text: words (expanded), operators and here-docs."""

    def __init__(self, src: str, view: ShellView, depth: int) -> None:
        self.src, self.i, self.view, self.depth = src, 0, view, depth
        self.pending: list[tuple[Command, str, bool, bool]] = []  # here-docs waiting for their body
        self.open = False  # the text ended inside a quote, a substitution or a here-doc

    def peek(self, n: int = 1) -> str:
        return self.src[self.i : self.i + n]

    def run(self) -> None:
        """Read the text, running each pipeline once it is complete (its here-doc bodies read), so that
        expansions see the assignments made before them."""
        pipeline: list[Command] = [Command()]
        queued: list[list[Command]] = []
        while self.i < len(self.src):
            ch = self.src[self.i]
            if ch in " \t\r":
                self.i += 1
            elif ch == "#" and (self.i == 0 or self.src[self.i - 1] in " \t\n;"):
                end = self.src.find("\n", self.i)
                end = len(self.src) if end < 0 else end
                # A comment runs nothing, but a number or code in it shows what the run already knew.
                self.view.text += _DATA_WORD.findall(self.src[self.i : end])
                self.i = end
            elif redir := next((r for r in _REDIRS if self.src.startswith(r, self.i)), None):
                self.i += len(redir)
                self._redirect(pipeline[-1], redir)
            elif op := next((o for o in _OPS if self.src.startswith(o, self.i)), None):
                self.i += len(op)
                if op == "|":
                    pipeline.append(Command())
                    continue
                if op == "(" and self.src[self.i :].lstrip(" \t").startswith(")") and pipeline[-1].words:
                    fname = pipeline[-1].words.pop()  # name() { …; }: a function's name is code
                    self.i = self.src.index(")", self.i) + 1
                    brace = self.src.find("{", self.i)
                    if brace >= 0 and not self.src[self.i : brace].strip():
                        end = self._matching(brace + 1, "{", "}")
                        self.view.env[f"{fname}()"] = self.src[brace + 1 : end]  # read again at each call
                    continue
                queued.append(pipeline)
                pipeline = [Command()]
                if op == "\n":
                    self._heredoc_bodies()
                if not self.pending:
                    for done in queued:
                        run_pipeline(done, self.view, self.reread)
                    queued = []
            else:
                start = self.i
                word = self.word()
                raw = self.src[start : self.i]
                pipeline[-1].words += (
                    braces(raw) if _BRACES.search(raw) and not _QUOTING.search(raw) else [word]
                )
        for done in [*queued, pipeline]:
            run_pipeline(done, self.view, self.reread)

    def reread(self, src: str) -> None:
        """Read a nested shell program (bash -c, eval, a .sh here-doc) into the same view."""
        if self.depth < MAX_DEPTH:
            _Reader(unroll_loops(src), self.view, self.depth + 1).run()

    def _redirect(self, cmd: Command, redir: str) -> None:
        while self.peek() in (" ", "\t"):
            self.i += 1
        start = self.i
        target = self.word()
        if redir in ("<<", "<<-"):
            raw = self.src[start : self.i]
            quoted = any(q in raw for q in "'\"\\")
            self.pending.append((cmd, target, quoted, redir == "<<-"))
        elif redir == "<<<":
            cmd.stdin = target + "\n"
        else:
            cmd.redirs.append((redir, target))

    def _heredoc_bodies(self) -> None:
        for cmd, delim, quoted, strip_tabs in self.pending:
            lines = []
            while self.i < len(self.src):
                end = self.src.find("\n", self.i)
                line = self.src[self.i : end if end >= 0 else len(self.src)]
                self.i = end + 1 if end >= 0 else len(self.src)
                check = line.lstrip("\t") if strip_tabs else line
                if check.rstrip() == delim:
                    break
                lines.append(check)
            else:
                self.open = True
            body = "\n".join(lines) + "\n"
            cmd.stdin = body if quoted else self.expand_double(body)
            cmd.stdin_quoted = quoted
        self.pending = []

    def word(self) -> str:
        """One word: quotes removed, escapes and expansions applied."""
        out: list[str] = []
        stops = " \t\r\n;&|()<>"
        while self.i < len(self.src) and self.src[self.i] not in stops:
            ch = self.src[self.i]
            if ch == "=" and self.peek(2) == "=(" and _ARRAY_NAME.match("".join(out)):
                return self._array("".join(out))
            if ch == "'":
                end = self.src.find("'", self.i + 1)
                self.open = self.open or end < 0
                end = len(self.src) if end < 0 else end
                out.append(self.src[self.i + 1 : end])
                self.i = end + 1
            elif ch == '"':
                end = self._closing_double(self.i + 1)
                out.append(self.expand_double(self.src[self.i + 1 : end]))
                self.i = end + 1
            elif ch == "$" and self.peek(2) == "$'":
                end = self.i + 2
                while end < len(self.src) and self.src[end] != "'":
                    end += 2 if self.src[end] == "\\" else 1
                self.open = self.open or end >= len(self.src)
                out.append(unescape(self.src[self.i + 2 : end], c_octal=True))
                self.i = end + 1
            elif ch in "$`":
                out.append(self._dollar())
            elif ch == "\\":
                out.append(self.src[self.i + 1 : self.i + 2])
                self.i += 2
            else:
                out.append(ch)
                self.i += 1
        return "".join(out)

    def _array(self, name: str) -> str:
        """`name=(a b c)` / `name+=(d)`: the elements kept as name[0]… and name[@]; the word reads name=a."""
        end = self._matching(self.i + 2, "(", ")")
        inner = _Reader(self.src[self.i + 2 : end], self.view, self.depth + 1)
        self.i = end + 1
        items: list[str] = []
        while inner.i < len(inner.src) and len(items) < MAX_BRACE_WORDS:
            if inner.src[inner.i] in " \t\r\n":
                inner.i += 1
                continue
            start = inner.i
            word = inner.word()
            items.append(word)
            if inner.i == start:
                inner.i += 1
        env = self.view.env
        base = name.rstrip("+")
        first = int(env.get(f"{base}[#]", "0")) if name.endswith("+") else 0
        for k, item in enumerate(items, first):
            env[f"{base}[{k}]"] = item
        env[f"{base}[#]"] = str(first + len(items))
        env[f"{base}[@]"] = " ".join(env.get(f"{base}[{k}]", "") for k in range(first + len(items)))
        env[f"{base}[@@]"] = "".join(env.get(f"{base}[{k}]", "") for k in range(first + len(items)))
        self.view.text += items
        return f"{base}={env.get(f'{base}[0]', '')}"

    def _closing_double(self, j: int) -> int:
        while j < len(self.src) and self.src[j] != '"':
            j += 2 if self.src[j] == "\\" else 1
        self.open = self.open or j >= len(self.src)
        return min(j, len(self.src))

    def expand_double(self, text: str) -> str:
        """Expansions inside double quotes (and unquoted here-doc bodies)."""
        inner = _Reader(text, self.view, self.depth)
        out: list[str] = []
        while inner.i < len(text):
            ch = text[inner.i]
            if ch in "$`":
                out.append(inner._dollar())
            elif ch == "\\" and inner.peek(2)[1:] in ('"', "\\", "$", "`"):
                out.append(text[inner.i + 1])
                inner.i += 2
            else:
                out.append(ch)
                inner.i += 1
        return "".join(out)

    def _matching(self, j: int, open_: str, close: str) -> int:
        depth = 1
        while j < len(self.src):
            ch = self.src[j]
            if ch == "'" and open_ == "(":
                j = self.src.find("'", j + 1)
                if j < 0:
                    return len(self.src)
            elif ch == "\\":
                j += 1
            elif ch == open_:
                depth += 1
            elif ch == close:
                depth -= 1
                if depth == 0:
                    return j
            j += 1
        self.open = True
        return len(self.src)

    def _dollar(self) -> str:
        """$name, ${…}, $((…)), $(…) or `…` at self.i."""
        src, i = self.src, self.i
        if src[i] == "`":
            end = src.find("`", i + 1)
            self.open = self.open or end < 0
            end = len(src) if end < 0 else end
            self.i = end + 1
            return self._substitute(src[i + 1 : end])
        if src.startswith(("$((", "$["), i):
            close = "))" if src.startswith("$((", i) else "]"
            start = i + (3 if close == "))" else 2)
            end = src.find(close, start)
            self.open = self.open or end < 0
            end = len(src) if end < 0 else end
            self.i = end + len(close)
            expr = self.expand_double(src[start:end])
            self.view.text.append(expr)
            return shell_arithmetic(expr, self.view.env) or ""
        if src.startswith("$(", i):
            end = self._matching(i + 2, "(", ")")
            self.i = end + 1
            return self._substitute(src[i + 2 : end])
        if src.startswith("${", i):
            end = self._matching(i + 2, "{", "}")
            self.i = end + 1
            return self._parameter(src[i + 2 : end])
        j = i + 1
        while j < len(src) and (src[j].isalnum() or src[j] == "_"):
            j += 1
        if j == i + 1:
            self.i = i + 2 if i + 1 < len(src) and src[i + 1] in "@*#?$!-0123456789" else i + 1
            return _special(src[i + 1], self.view.env) if self.i == i + 2 else "$"
        self.i = j
        return self.view.env.get(src[i + 1 : j], "")

    def _parameter(self, body: str) -> str:
        name = body.lstrip("#!")
        for k, ch in enumerate(name):
            if not (ch.isalnum() or ch == "_"):
                name, rest = name[:k], name[k:]
                break
        else:
            rest = ""
        value = self.view.env.get(name, "")
        if rest.startswith("[") and "]" in rest:
            index, rest = rest[1 : rest.index("]")], rest[rest.index("]") + 1 :]
            whole = index in ("@", "*")
            key = "@" if whole else shell_arithmetic(self._inner(index), self.view.env)
            value = self.view.env.get(f"{name}[{key}]", "")
            if whole:  # the elements as separate words: printf %s and friends join them
                self.view.text.append(self.view.env.get(f"{name}[@@]", ""))
        if rest.startswith(":") and not rest.startswith((":-", ":=", ":+", ":?")):
            nums = [shell_arithmetic(p.strip() or "0", self.view.env) for p in rest[1:].split(":")]
            known = [n for n in nums if n is not None]
            if len(known) == len(nums):
                start = int(known[0] or 0)
                return value[start : start + int(known[1])] if len(known) > 1 else value[start:]
        if rest.startswith((":-", "-", ":=", "=")) and not value:
            if self.depth >= MAX_DEPTH:
                return ""
            value = self._inner(rest.split("-" if "-" in rest[:2] else "=", 1)[1])
            if "=" in rest[:2]:
                self.view.env[name] = value
            return value
        if rest.startswith((":+", "+")):
            return self._inner(rest.split("+", 1)[1]) if value and self.depth < MAX_DEPTH else ""
        if rest[:2] in ("^^", ",,") or rest[:1] in ("^", ","):
            upper = rest[0] == "^"
            whole = rest[:2] in ("^^", ",,")
            changed = value.upper() if upper else value.lower()
            return changed if whole else changed[:1] + value[1:]
        if rest[:1] in ("#", "%", "/") and self.depth < MAX_DEPTH:
            return self._pattern_op(value, rest)
        return value

    def _inner(self, text: str) -> str:
        return _Reader("", self.view, self.depth + 1).expand_double(text)

    def _pattern_op(self, value: str, rest: str) -> str:
        """${v#p} ${v##p} ${v%p} ${v%%p} ${v/p/r} ${v//p/r} ${v/#p/r} ${v/%p/r}, with glob patterns."""
        if rest[0] == "/":
            op = "//" if rest.startswith("//") else rest[:2] if rest[1:2] in ("#", "%") else "/"
            pat, _, rep = rest[len(op) :].partition("/")
            rx = _glob(self._inner(pat))
            rep = self._inner(rep)
            if rx is None:
                return value
            if op == "/#":
                return re.sub("^" + rx, lambda _: rep, value, count=1)
            if op == "/%":
                return re.sub(rx + "$", lambda _: rep, value, count=1)
            return re.sub(rx, lambda _: rep, value, count=0 if op == "//" else 1)
        longest = rest[:2] in ("##", "%%")
        rx = _glob(self._inner(rest[2 if longest else 1 :]), greedy=longest)
        if rx is None:
            return value
        if rest[0] == "#":
            return re.sub("^" + rx, "", value, count=1)
        ends = [k for k in range(len(value) + 1) if re.fullmatch(rx, value[k:])]
        return value[: (min(ends) if longest else max(ends))] if ends else value

    def _substitute(self, inner: str) -> str:
        if self.depth >= MAX_DEPTH:
            return ""
        sub = ShellView(env=dict(self.view.env), files=self.view.files)
        read_shell(inner, sub, self.depth + 1)
        self.view.text += sub.text
        self.view.python += sub.python
        return "".join(sub.output).rstrip("\n")


def read_shell(src: str, view: ShellView | None = None, depth: int = 0) -> ShellView:
    """Read `src` as bash would (see the module docstring) into `view` (a new one by default)."""
    view = view if view is not None else ShellView()
    _Reader(unroll_loops(src), view, depth).run()
    return view


def read_more(src: str, view: ShellView) -> bool:
    """Read `src` into `view`, a session's state so far; True when it ends at a clean line end (no open quote,
    substitution or here-doc), so that what follows can be read on its own from the resulting state."""
    reader = _Reader(unroll_loops(src), view, 0)
    reader.run()
    return src.endswith("\n") and not reader.open and not reader.pending
