"""The class source cut the way the judge reads it: everything but the tools, then the called tool.

The judge of one call needs the code that call can run: the called tool, the public tools it calls
itself, every helper, `__init__` and whatever else the module defines (constants, TypedDicts, rule
comments). It does not need the other tools' bodies, and on every round of every chain the whole
class would be billed again (at the cached rate at best). Cut this way the prompt's context is the
class *without its tools*, the same for every call of the candidate, and the varying part starts with
the called tool's code, the same for every call of that tool: a provider's prefix cache serves the
first part from the first call on and the second from the tool's second call on.
"""

from __future__ import annotations

import ast

from envscaler_core import pyast
from envscaler_core.synth.tool_schema import find_class, public_methods


class CodeSlices:
    """`shared` (the class without its public tools) and `tool(name)` (a tool plus the tools it calls)."""

    def __init__(self, code: str, class_name: str) -> None:
        lines = code.splitlines()
        cls = find_class(pyast.parse(code), class_name)
        self._sources: dict[str, str] = {}
        self._calls: dict[str, list[str]] = {}
        cut: set[int] = set()
        tools = public_methods(cls)
        names = {fn.name for fn in tools}
        for fn in tools:
            start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
            end = fn.end_lineno or fn.lineno
            self._sources[fn.name] = "\n".join(lines[start - 1:end]) + "\n"
            cut.update(range(start, end + 1))
            self._calls[fn.name] = sorted({
                node.attr for node in ast.walk(fn)
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                and node.attr in names and node.attr != fn.name})
        kept = [line for number, line in enumerate(lines, start=1) if number not in cut]
        # a cut tool leaves its blank separator lines behind: keep at most one in a row
        compact: list[str] = []
        for line in kept:
            if line.strip() or (compact and compact[-1].strip()):
                compact.append(line)
        self.shared = "\n".join(compact).rstrip() + "\n"

    def tool(self, name: str) -> str:
        """The source of tool `name`, then of every public tool it reaches through calls on `self`
        (transitively, by name); '' for a name that is not a public method of the class."""
        if name not in self._sources:
            return ""
        order, todo = [name], list(self._calls[name])
        while todo:
            nxt = todo.pop(0)
            if nxt not in order:
                order.append(nxt)
                todo.extend(self._calls[nxt])
        return "".join(self._sources[n] for n in [name, *sorted(order[1:])])
