"""`ast.parse` for the mock's worker threads.

The server answers each request in a worker thread, and CPython's AST constructor keeps its
recursion depth in interpreter-wide state: two threads building ASTs at once can fail with
"SystemError: AST constructor recursion depth mismatch" (~1% of requests under load, an HTTP 500).
Every AST the mock builds goes through this lock; the library's derived sources are also cached
(`library.code`), so most requests build none at all.
"""

from __future__ import annotations

import ast

from envscaler_core import pyast


def parse(source: str) -> ast.Module:
    """The process-wide lock of `envscaler_core.pyast`: in tests the mock shares its process with the
    factory, and a lock of its own would not keep their parses apart."""
    return pyast.parse(source)
