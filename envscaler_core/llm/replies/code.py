"""Python source out of what a model wrote for a code field: fences, prose and reasoning removed.

Models wrap code the way they were trained to: a ```python fence with a sentence before and after,
an untagged fence, several fences (an example call, then the function), no fence but a leading "Here
is the function:", CRLF line endings, tab indentation, or the method indented as it would sit inside
its class. The
stage says what it needs (`accept`: e.g. "defines check_func"); the first fenced block that parses
and is accepted wins, then the whole text, then the text with leading/trailing prose lines trimmed.
If nothing is accepted the most plausible piece is returned unchanged, so the stage's own check
reports the precise problem (syntax error at line N, wrong function name) in its repair feedback.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable

from envscaler_core import pyast
from envscaler_core.llm.replies.json_text import fences
from envscaler_core.llm.replies.reasoning import has_reasoning_markup, split_reasoning, without_end_tokens

Accept = Callable[[ast.Module], bool]
_PYTHON_LANGS = {"", "python", "py", "python3", "py3", "ipython", "pycon"}
_CODE_START = re.compile(r"^(?:@|def |async def |class |import |from \S+ import |[A-Za-z_]\w*\s*(?::[^=]+)?=)")


def parse_python(source: str) -> ast.Module | None:
    """`ast.parse` under the process-wide AST lock; None on a syntax error."""
    try:
        return pyast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def defines(*names: str) -> Accept:
    """Accept a module that defines every one of `names` at top level (functions or classes)."""
    def check(tree: ast.Module) -> bool:
        top = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        return set(names) <= top
    return check


def _tabs_as_spaces(source: str) -> str:
    """Each tab of a line's leading run of tabs as 4 spaces, so the piece can sit in a class indented
    with spaces (the assembler re-indents with spaces; Python refuses a block mixing the two). Only
    for a piece that parses as it is: Python then reads its indentation the same with tabs of 1 and of
    8 columns, so with tabs of 4 (a mix of the two) every block keeps its meaning; spaces after the
    tabs (alignment of continuation lines, tabs-for-indent-spaces-for-alignment style) are kept."""
    if "\t" not in source or parse_python(source) is None:
        return source
    return "\n".join("    " * (len(line) - len(line.lstrip("\t"))) + line.lstrip("\t") for line in source.split("\n"))


def _normalised(source: str) -> str:
    source = source.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")
    return _tabs_as_spaces(textwrap.dedent(source).strip("\n"))


def _without_reasoning(text: str) -> str:
    """Line endings and BOMs normalised, reasoning blocks removed, indentation kept (a method snippet
    indented as inside its class must stay dedentable)."""
    text = without_end_tokens(text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", ""))
    if has_reasoning_markup(text):
        split = split_reasoning(text)
        return split.answer or split.tail or ""
    return text


def _trimmed(text: str) -> str | None:
    """The text from its first code-looking line, with trailing prose lines dropped until it parses."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line.strip())), None)
    if start is None:
        return None
    body = lines[start:]
    while body:
        source = _normalised("\n".join(body))
        if parse_python(source) is not None:
            return source
        body = body[:-1]
    return None


def extract_code(text: str, accept: Accept | None = None) -> str:
    """The Python source the model meant (see the module docstring)."""
    answer = _without_reasoning(text)
    blocks = [b for b in fences(answer)]
    ordered = [b.body for b in blocks if b.lang in _PYTHON_LANGS] + [b.body for b in blocks if b.lang not in _PYTHON_LANGS]
    pieces = [_normalised(body) for body in ordered]
    if not blocks:
        pieces.append(_normalised(answer))
    trimmed = _trimmed(answer) if not blocks else None
    if trimmed is not None:
        pieces.append(trimmed)
    for source in pieces:
        tree = parse_python(source)
        if tree is not None and (accept is None or accept(tree)):
            return source
    return pieces[0] if pieces else _normalised(answer)
