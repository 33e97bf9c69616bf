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


def parse(source: str, mode: str = "exec") -> Any:
    """`ast.parse(source, mode=mode)` under the process-wide lock (SyntaxError etc. as usual).

    The tree is shared: one class is parsed by synthesis, static checks, both validation passes and
    scenario generation (7% of the orchestrator's CPU in a SkelBuilder run went to parsing the same
    sources again), so the last trees are remembered. Callers read trees and never change them."""
    return _parsed(source, mode)


@lru_cache(maxsize=64)
def _parsed(source: str, mode: str) -> Any:
    with AST_LOCK:
        return ast.parse(source, mode=mode)


def literal_eval(text: str) -> Any:
    """`ast.literal_eval` of a string (it parses, so it takes the lock too)."""
    with AST_LOCK:
        return ast.literal_eval(text)
