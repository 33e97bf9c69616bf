"""The parameters of a `def` as a call by keywords sees them, read from its syntax tree.

Tool schemas are written from signatures (synthesis), fitted to them (EnvScaler imports), and calls are
judged against them (EnvScaler's episode rules); the skeleton check and BFCL's call parser read them too.
Each used to slice `posonlyargs`/`args`/`defaults` itself, and the copies drifted (which first parameter
is the bound one, where defaults line up): this is the one reading.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Parameters:
    """A def's parameters with the bound one (`self`/`cls`) left out."""

    positional: tuple[ast.arg, ...]
    keyword_only: tuple[ast.arg, ...]
    positional_only: frozenset[str]
    defaults: dict[str, ast.expr]
    vararg: ast.arg | None
    kwarg: ast.arg | None

    @property
    def every(self) -> tuple[ast.arg, ...]:
        """Positional then keyword-only, in source order (the star parameters are not among them)."""
        return (*self.positional, *self.keyword_only)

    @property
    def defaulted(self) -> frozenset[str]:
        return frozenset(self.defaults)

    @property
    def none_defaulted(self) -> frozenset[str]:
        """Parameters whose default is the constant `None` (`x: str = None`): a schema must let them be null."""
        return frozenset(n for n, d in self.defaults.items() if isinstance(d, ast.Constant) and d.value is None)

    @property
    def by_name(self) -> tuple[str, ...]:
        """What a call by keywords can name: every parameter but the positional-only ones."""
        return tuple(a.arg for a in self.every if a.arg not in self.positional_only)

    @property
    def required(self) -> tuple[str, ...]:
        """Parameters without a default, positional-only ones included."""
        return tuple(a.arg for a in self.every if a.arg not in self.defaults)


def parameters(fn: FunctionNode, *, bound: bool | None = None) -> Parameters:
    """`bound` says whether the first positional parameter is the instance or class (a plain method or a
    classmethod: True; a staticmethod or a function: False); None takes it to be when it is named `self`
    or `cls`, which is how a method reads when its decorators are not being looked at."""
    args = fn.args
    every = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in every[len(every) - len(args.defaults):]], args.defaults)) if args.defaults else {}
    defaults |= {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    drop = bool(every) and (bound if bound is not None else every[0].arg in ("self", "cls"))
    if drop:
        defaults.pop(every[0].arg, None)
    return Parameters(
        positional=tuple(every[1:] if drop else every),
        keyword_only=tuple(args.kwonlyargs),
        positional_only=frozenset(a.arg for a in args.posonlyargs[1 if drop else 0:]),
        defaults=defaults,
        vararg=args.vararg,
        kwarg=args.kwarg,
    )
