"""Python syntax highlighting for the HTML report, from the stdlib tokenizer (no third-party lexer, no
network): every token becomes a `<span class=...>`, and text that does not tokenize (the env code is
LLM-written and may be broken) falls back to escaped plain text rather than failing the report."""

from __future__ import annotations

import builtins
import html
import io
import keyword
import token
import tokenize

_BUILTINS = frozenset(dir(builtins))
_CONSTANTS = frozenset({"True", "False", "None"})


def _css_class(tok: tokenize.TokenInfo, previous: str) -> str | None:
    if tok.type == token.COMMENT:
        return "c"
    if tok.type == token.STRING or tok.type in _FSTRING_TYPES:
        return "s"
    if tok.type == token.NUMBER:
        return "n"
    if tok.type == token.OP:
        return "o"
    if tok.type == token.NAME:
        if tok.string in _CONSTANTS:
            return "k2"
        if keyword.iskeyword(tok.string) or keyword.issoftkeyword(tok.string):
            return "k"
        if previous in ("def", "class"):
            return "f"
        if tok.string == "self":
            return "sf"
        if tok.string in _BUILTINS:
            return "b"
    return None


_FSTRING_TYPES = frozenset(getattr(token, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
                           if hasattr(token, name))


def highlight_python(source: str) -> str:
    """HTML (no surrounding <pre>) with spans for keywords, strings, numbers, comments, names."""
    lines = source.splitlines(keepends=True)
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    out: list[str] = []
    row, col = 1, 0
    previous = ""

    def text_between(end_row: int, end_col: int) -> str:
        if (row, col) >= (end_row, end_col):
            return ""
        if row == end_row:
            return lines[row - 1][col:end_col] if row - 1 < len(lines) else ""
        parts = [lines[row - 1][col:]] if row - 1 < len(lines) else []
        parts += lines[row:end_row - 1]
        if end_row - 1 < len(lines):
            parts.append(lines[end_row - 1][:end_col])
        return "".join(parts)

    while True:
        try:
            tok = next(tokens)
        except StopIteration:
            break
        except (tokenize.TokenError, SyntaxError):  # broken code: the rest as plain text
            break
        if tok.type == token.ENDMARKER:
            break
        out.append(html.escape(text_between(*tok.start)))
        row, col = tok.start
        piece = text_between(*tok.end)
        row, col = tok.end
        css = _css_class(tok, previous)
        out.append(f'<span class="{css}">{html.escape(piece)}</span>' if css and piece else html.escape(piece))
        if tok.type not in (token.NL, token.NEWLINE, token.INDENT, token.DEDENT, token.COMMENT):
            previous = tok.string
    out.append(html.escape(text_between(len(lines) + 1, 0)))
    return "".join(out)
