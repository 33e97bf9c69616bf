"""The effects of a whole env class: each method's own effects (`code_effects`) with its calls of
helpers, other tools and module functions folded in, so a tool that writes only through
`self._apply(book)` still writes.

Folding is where untrusted code could make the host's work explode (a chain of helpers that each call
the next two touched fib(n) facts: a 3 KB class took 13 GB), so every method is folded when the class
is read, against a work limit, and a class past it is refused with a reason instead of analysed."""

from __future__ import annotations

import ast

from envscaler_core import pyast
from envscaler_core.validation.dict_params import typed_dict_fields
from envscaler_core.validation.code_effects import Binding, MethodEffects, MethodReader, Write


MAX_FOLDED_FACTS = 200_000
"""How many facts (writes, bindings, guard fields, literals) folding a class's calls may touch. A
real env class touches a few thousand; a chain of helpers that each call the next two touched
fib(n) (a 60-helper class of 3 KB took 13 GB), so past this the class is refused, not analysed."""

MAX_HOW_CHARS = 200
"""A folded write says how it happens (`calls _h0(), which calls _h1(), which assigns self.count`);
past this its middle is cut, so a deep call chain costs the same as a short one."""


class AnalysisTooLarge(ValueError):
    """Folding the class's calls would pass MAX_FOLDED_FACTS: the class is refused with this reason."""


def _size(effects: MethodEffects) -> int:
    return (len(effects.writes) + len(effects.guard_fields) + sum(map(len, effects.bindings.values()))
            + sum(map(len, effects.literals.values())))


def _hop(label: str, how: str) -> str:
    text = f"calls {label}(), which {how}"
    half = MAX_HOW_CHARS // 2
    return text if len(text) <= MAX_HOW_CHARS else f"{text[:half]} ... {text[-half:]}"  # the write it ends in


def _merged(old: list, new: list) -> list:  # type: ignore[type-arg]
    """`old` then the items of `new` it lacks, in order, in linear time (items are hashable)."""
    return list(dict.fromkeys([*old, *new]))


class ClassEffects:
    """Effects of every method of one class, with calls to helpers, other tools and module functions
    folded in (a tool that writes only through `self._apply(book)` still writes). Everything is folded
    here, so a class too intricate to analyse is refused (AnalysisTooLarge, or pyast.SourceTooLarge)
    when it is read, not in the middle of a validation."""

    def __init__(self, code: str, class_name: str) -> None:
        from envscaler_core.synth.tool_schema import find_class

        tree = pyast.parse(code)
        cls = find_class(tree, class_name)
        self.methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        self.typed_dicts = typed_dict_fields(tree)  # a TypedDict parameter's keys (`dict_params`)
        functions = {f"<module>.{n.name}": n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self._defs = {**self.methods, **functions}
        self._local = {name: MethodReader(fn).run() for name, fn in self._defs.items()}
        self._params = {name: MethodReader(fn).params for name, fn in self._defs.items()}
        self._folded: dict[str, MethodEffects] = {}
        self._touched = sum(map(_size, self._local.values()))
        for name in self._defs:
            self.effects(name)

    def effects(self, name: str) -> MethodEffects:
        """This method's effects including everything it calls (cycles cut)."""
        if name not in self._local:
            return MethodEffects()
        if name not in self._folded:
            self._fold_from(name)
        return self._folded[name]

    def _fold_from(self, root: str) -> None:
        """Fold `root` and what it calls, callees first, without Python recursion (a chain of thousands
        of helpers is legal code). A method still being folded is empty to its callees: a recursive
        call adds nothing new."""
        self._folded[root] = MethodEffects()
        stack = [(root, iter(self._local[root].calls))]
        while stack:
            name, pending = stack[-1]
            call = next(pending, None)
            if call is None:
                stack.pop()
                self._folded[name] = self._fold(name)
            elif call[0] in self._local and call[0] not in self._folded:
                self._folded[call[0]] = MethodEffects()
                stack.append((call[0], iter(self._local[call[0]].calls)))

    def _charge(self, facts: int, name: str) -> None:
        self._touched += facts
        if self._touched > MAX_FOLDED_FACTS:
            raise AnalysisTooLarge(
                f"the class is too intricate to analyse: folding its methods' calls (at {name}) touches more "
                f"than {MAX_FOLDED_FACTS:,} facts (code_effects.MAX_FOLDED_FACTS); real env classes touch a few "
                "thousand")

    def _fold(self, name: str) -> MethodEffects:
        local = self._local[name]
        out = MethodEffects(writes=list(local.writes), param_writes=set(local.param_writes),
                            bindings={k: list(v) for k, v in local.bindings.items()},
                            guard_fields=set(local.guard_fields),
                            literals={k: list(v) for k, v in local.literals.items()})
        written = {w.attr for w in out.writes}  # one folded write per attribute says that it is written
        for callee, line, refs, params in local.calls:
            if callee not in self._local:
                continue
            inner = self._folded[callee]
            self._charge(_size(inner) + len(refs), name)
            label = callee.removeprefix("<module>.")
            for w in inner.writes:
                if w.attr not in written:
                    written.add(w.attr)
                    out.writes.append(Write(w.attr, line, _hop(label, w.how)))
            out.guard_fields |= inner.guard_fields
            callee_params = self._params[callee]
            for index, (ref, param) in enumerate(zip(refs, params)):
                if index >= len(callee_params):
                    break
                target = callee_params[index]
                if target in inner.param_writes and ref is not None and not ref.holds:
                    root = ref.path[0]
                    if root.startswith("@"):
                        out.param_writes.add(root[1:])
                    elif not root.startswith("_") and root not in written:
                        written.add(root)
                        out.writes.append(Write(root, line, f"passes state to {label}(), which modifies it"))
                if param is not None:
                    self._charge(len(out.literals.get(param, ())) + len(out.bindings.get(param, ())), name)
                    if inner.literals.get(target):
                        out.literals[param] = _merged(out.literals.get(param, []), inner.literals[target])
                    if inner.bindings.get(target):
                        out.bindings[param] = _merged(out.bindings.get(param, []), inner.bindings[target])
        return out

    def writes(self, name: str) -> list[Write]:
        return self.effects(name).writes

    def bindings(self, name: str) -> dict[str, list[Binding]]:
        return self.effects(name).bindings

    def guard_fields(self, name: str) -> set[str]:
        return self.effects(name).guard_fields

    def literals(self, name: str) -> dict[str, list[object]]:
        return self.effects(name).literals


def analysis_refusal(code: str, class_name: str) -> str | None:
    """Why the host refuses to analyse this class (its code is past pyast.MAX_SOURCE_CHARS, or folding
    its calls is past MAX_FOLDED_FACTS), else None. Other problems (no such class, a syntax error) are
    not refusals: loading the class reports them, as before."""
    try:
        ClassEffects(code, class_name)
    except pyast.SourceTooLarge as exc:
        return str(exc.msg)
    except AnalysisTooLarge as exc:
        return str(exc)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return None
