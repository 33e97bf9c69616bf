"""`ast.parse` that is safe to call from several threads at once.

CPython 3.11 keeps the AST constructor's recursion depth in interpreter-wide state, so two threads
building ASTs at the same moment can fail with "SystemError: AST constructor recursion depth mismatch"
(python/cpython#106905; seen here when synthesis, the sandbox's host threads and the in-process mock
LLM parse code together). Every AST built in this process goes through one lock: parsing is fast,
and a lock held for microseconds costs nothing next to a spurious SystemError failing a candidate.
"""

from __future__ import annotations

import ast
import threading
from functools import lru_cache
from typing import Any

AST_LOCK = threading.Lock()

MAX_SOURCE_CHARS = 256_000
"""The longest source the host parses. Env classes seen so far are 5-60 KB; `ast` holds about 500
bytes per character of a dense literal (a 2 MB class took 1 GB and a minute, under AST_LOCK, so every
other thread waited), so past this the code is refused before it is parsed, stored or shipped."""


class SourceTooLarge(SyntaxError):
    """The source is past MAX_SOURCE_CHARS. A SyntaxError, so every caller that reports code which
    does not parse reports this with its reason (the code is refused, not half-analysed)."""

    def __init__(self, length: int) -> None:
        super().__init__(f"the code is {length:,} characters, past the {MAX_SOURCE_CHARS:,}-character limit on "
                         "code the host analyses (pyast.MAX_SOURCE_CHARS)")


MAX_NESTING = 400
"""The deepest syntax tree the host analyses (a `+` chain of N terms is about N levels; env classes seen
so far are 12-30). The host's analyses walk trees recursively, one or two frames per level, from call
stacks of up to ~150 frames under Python's limit of 1,000; past this depth they would fail at a depth
that depends on the caller (a 1,000-term `+` chain failed in the CLI, 950 passed) and were reported as
"does not compile" though Python compiles it. Now such code is refused naming this limit."""


class NestedTooDeep(SyntaxError):
    """The syntax tree is deeper than MAX_NESTING. A SyntaxError, so every caller that reports code
    which does not parse reports this with its reason; the message says Python itself may compile it."""

    def __init__(self, depth: int | None, line: int | None) -> None:
        deep = f"nested {depth:,} levels deep" if depth is not None else "nested too deeply to read here"
        super().__init__(f"the code is {deep}, past the {MAX_NESTING} levels the host's analysis reads "
                         "(pyast.MAX_NESTING): Python may compile it, but the analysis refuses it")
        self.lineno = line


def parse(source: str, mode: str = "exec") -> Any:
    """`ast.parse(source, mode=mode)` under the process-wide lock (SyntaxError etc. as usual; a source
    past MAX_SOURCE_CHARS raises SourceTooLarge without being parsed, a tree deeper than MAX_NESTING
    NestedTooDeep).

    The tree is shared: one class is parsed by synthesis, static checks, both validation passes and
    scenario generation (7% of the orchestrator's CPU in a SkelBuilder run went to parsing the same
    sources again), so the last trees are remembered. Callers read trees and never change them."""
    refuse_large(source)
    return _parsed(source, mode)


def refuse_large(source: str) -> None:
    """Raise SourceTooLarge when `source` is past MAX_SOURCE_CHARS (before anything is parsed)."""
    if len(source) > MAX_SOURCE_CHARS:
        raise SourceTooLarge(len(source))


@lru_cache(maxsize=64)
def _parsed(source: str, mode: str) -> Any:
    with AST_LOCK:
        try:
            tree = ast.parse(source, mode=mode)
        except RecursionError:  # building the tree's objects from a deep call stack: too deep, at any rate
            raise NestedTooDeep(None, None) from None
    refuse_deep(tree)
    return tree


def refuse_deep(tree: ast.AST) -> None:
    """Raise NestedTooDeep when `tree` is deeper than MAX_NESTING (measured without recursion)."""
    depth, line = 0, None
    work: list[tuple[ast.AST, int, int | None]] = [(tree, 1, None)]
    while work:
        node, level, at = work.pop()
        at = getattr(node, "lineno", at)
        if level > depth:
            depth, line = level, at
        work.extend((child, level + 1, at) for child in ast.iter_child_nodes(node))
    if depth > MAX_NESTING:
        raise NestedTooDeep(depth, line)


def literal_eval(text: str) -> Any:
    """`ast.literal_eval` of a string (it parses, so it takes the lock too, and the same size limit)."""
    refuse_large(text)
    with AST_LOCK:
        return ast.literal_eval(text)
