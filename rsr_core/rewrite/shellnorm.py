"""What typed shell text spells out once the shell has read it, without running anything.

A small, tolerant reading of bash: quotes are removed and adjacent pieces joined (`"ZR""-8841"`), `$'…'` and
escapes decoded, variables assigned earlier in the session expanded (`a=ZR; echo "$a-8841"`), `$((…))` of
literals computed, `$(echo …)` substituted, here-doc bodies read, Python programs (`python3 -c`, here-docs fed
to python or written to a .py file) replaced by the data they spell out, and the output of echo / printf /
here-docs followed through the filters that only re-encode it (base64 -d, xxd -r -p, rev, tr, cat, tee) into
the terminal or into files (`>`, `>>`). Anything it does not understand passes through as text.
"""

from __future__ import annotations

import re

from rsr_core.rewrite.decode import unescape
from rsr_core.rewrite.pyfold import arithmetic
from rsr_core.rewrite.shellrun import Command, ShellView, run_pipeline

_OPS = ("&&", "||", ";;", ";", "|", "&", "(", ")", "\n")
_REDIRS = ("<<<", "<<-", "<<", ">>", ">|", ">&", "&>", "<", ">")
MAX_DEPTH = 6
_DATA_WORD = re.compile(r"[^\s#]*\d[^\s#]*")


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
                    pipeline[-1].words.pop()  # name() { …; }: a function's name is code
                    self.i = self.src.index(")", self.i) + 1
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
                pipeline[-1].words.append(self.word())
        for done in [*queued, pipeline]:
            run_pipeline(done, self.view, self.reread)

    def reread(self, src: str) -> None:
        """Read a nested shell program (bash -c, eval, a .sh here-doc) into the same view."""
        if self.depth < MAX_DEPTH:
            _Reader(src, self.view, self.depth + 1).run()

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
                out.append(unescape(self.src[self.i + 2 : end]))
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
        if src.startswith("$((", i):
            end = src.find("))", i + 3)
            self.open = self.open or end < 0
            end = len(src) if end < 0 else end
            self.i = end + 2
            expr = self.expand_double(src[i + 3 : end])
            self.view.text.append(expr)
            return arithmetic(expr) or ""
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
            return "" if self.i == i + 2 else "$"
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
        if rest.startswith(":") and not rest.startswith((":-", ":=", ":+", ":?")):
            nums = [arithmetic(p.strip() or "0") for p in rest[1:].split(":")]
            known = [n for n in nums if n is not None]
            if len(known) == len(nums):
                start = int(known[0] or 0)
                return value[start : start + int(known[1])] if len(known) > 1 else value[start:]
        if rest.startswith((":-", "-")) and not value:
            if self.depth >= MAX_DEPTH:
                return ""
            return _Reader("", self.view, self.depth + 1).expand_double(rest.split("-", 1)[1])
        return value

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
    _Reader(src, view, depth).run()
    return view


def read_more(src: str, view: ShellView) -> bool:
    """Read `src` into `view`, a session's state so far; True when it ends at a clean line end (no open quote,
    substitution or here-doc), so that what follows can be read on its own from the resulting state."""
    reader = _Reader(src, view, 0)
    reader.run()
    return src.endswith("\n") and not reader.open and not reader.pending
