"""Stage 2: topic -> state space -> class skeleton -> operations -> one method each -> one class.

Each LLM step is retried up to `settings.synth.step_attempts` times; the previous attempt's error
(an invalid model reply, or a concrete problem found in the code) goes back through the input's
`feedback` field. A method that still fails is *left out* and recorded (StepLog + dropped_operations)
rather than dropping the whole environment as the reference did: the remaining tools still form a
valid, checkable environment, and Stage 3 judges what is there. If no method survives, the skeleton
alone is returned as a `static_failed` candidate so the attempt stays on record.
"""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from envscaler_core import pyast
from envscaler_core.config import Settings
from envscaler_core.llm.errors import LLMOutputInvalid
from envscaler_core.mine.llm_steps import Gateway
from envscaler_core.models.env import EnvCandidate
from envscaler_core.models.spec import EnvSpec, Operation
from envscaler_core.models.topic import EnvTopic
from envscaler_core.prompts import synth as P
from envscaler_core.signature import parameters
from envscaler_core.synth.assembly import AssemblyError, assemble_module, parse_method, strip_fences
from envscaler_core.synth.static_checks import StaticProblem, static_problems
from envscaler_core.synth.tool_schema import SchemaError, extract_tools

T = TypeVar("T")


class StepLog(BaseModel):
    """How one step went: attempts used and the last error (None if it finally succeeded)."""

    step: str
    target: str | None = Field(default=None, description="Operation name for the per-method step.")
    attempts: int = 0
    error: str | None = None


class SynthResult(BaseModel):
    spec: EnvSpec | None = None
    candidate: EnvCandidate | None = None
    failure: str | None = None
    steps: list[StepLog] = Field(default_factory=list)
    dropped_operations: list[str] = Field(default_factory=list)


class StepFailed(Exception):
    """A step exhausted its attempts; carries the log entry."""

    def __init__(self, log: StepLog) -> None:
        super().__init__(f"{log.step}{f' {log.target}' if log.target else ''}: {log.error}")
        self.log = log


async def run_step(
    step: str, attempts: int, attempt: Callable[[str | None], Awaitable[T]], *, target: str | None = None
) -> tuple[T, StepLog]:
    """Call `attempt(feedback)` until it returns; a ValueError or invalid model output becomes the
    feedback of the next attempt. Raises StepFailed after `attempts` tries."""
    log = StepLog(step=step, target=target)
    feedback: str | None = None
    for n in range(1, attempts + 1):
        log.attempts = n
        try:
            value = await attempt(feedback)
        except (ValueError, LLMOutputInvalid) as exc:  # AssemblyError is a ValueError
            feedback = getattr(exc, "reason", None) or str(exc)
            log.error = feedback
            continue
        log.error = None
        return value, log
    raise StepFailed(log)


def _problems_text(problems: list[StaticProblem]) -> str:
    return "; ".join(str(p) for p in problems)


def check_skeleton(code: str, class_name: str) -> str:
    """The skeleton parses, defines `class_name` without base and with __init__, and every name it
    uses is bound; returns the fence-free code or raises ValueError with the problems."""
    source = strip_fences(code, class_name)
    try:
        tree = pyast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"skeleton syntax error at line {exc.lineno}: {exc.msg}") from None
    problems = [p for p in static_problems(source, class_name) if p.name != "no-tools"]
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is not None:
        problems.extend(_skeleton_shape(cls))
    if problems:
        raise ValueError(_problems_text(problems))
    return source


def _skeleton_shape(cls: ast.ClassDef) -> list[StaticProblem]:
    """The skeleton holds only __init__ (plus private helpers), and __init__ can be called as
    `cls()` or `cls(init_config)`, which is how the sandbox instantiates environments."""
    problems = []
    functions = [n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    init = next((f for f in functions if f.name == "__init__"), None)
    if init is None:
        problems.append(StaticProblem(name="missing-init", detail=f"class {cls.name!r} has no __init__"))
    else:
        signature = parameters(init, bound=True)
        without_default = [a for a in signature.positional if a.arg not in signature.defaults]
        kw_required = [a for a in signature.keyword_only if a.arg not in signature.defaults]
        if len(without_default) > 1 or kw_required:
            problems.append(StaticProblem(name="bad-init-signature", line=init.lineno,
                                          detail="__init__ must accept (self) or (self, init_config)"))
    public = [f.name for f in functions if not f.name.startswith("_")]
    if public:
        problems.append(StaticProblem(name="skeleton-has-methods",
                                      detail=f"the skeleton must only define __init__, found {public}"))
    return problems


def _unique_operations(ops: list[Operation]) -> list[Operation]:
    names = [o.name for o in ops]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"duplicate operation names: {', '.join(dup)}")
    return ops


async def synthesize_env(topic: EnvTopic, gateway: Gateway, settings: Settings) -> SynthResult:
    """Run the Stage 2 steps for one topic; never raises for model misbehaviour (see SynthResult)."""
    result = SynthResult()
    attempts = settings.synth.step_attempts

    async def ask(prompt: Any, inp: BaseModel) -> Any:
        return await gateway.structured(prompt, inp, stage="synth")

    try:
        state, log = await run_step("state_space", attempts, lambda fb: ask(P.STATE_SPACE, P.TopicInput(
            summary=topic.summary, introduction=topic.introduction, example_task=topic.example_task, feedback=fb)))
        result.steps.append(log)

        async def skeleton_attempt(fb: str | None) -> tuple[str, str]:
            out = await ask(P.CLASS_SKELETON, P.SkeletonInput(
                summary=topic.summary, introduction=topic.introduction, entities=state.entities,
                rules=state.rules, feedback=fb))
            return check_skeleton(out.code, out.class_name), out.class_name

        (skeleton, class_name), log = await run_step("class_skeleton", attempts, skeleton_attempt)
        result.steps.append(log)

        async def operations_attempt(fb: str | None) -> list[Operation]:
            out = await ask(P.OPERATIONS, P.OperationsInput(
                summary=topic.summary, introduction=topic.introduction, entities=state.entities, rules=state.rules,
                skeleton_code=skeleton, example_task=topic.example_task, feedback=fb))
            return _unique_operations(out.operations)

        operations, log = await run_step("operations", attempts, operations_attempt)
        result.steps.append(log)
    except StepFailed as exc:
        result.steps.append(exc.log)
        result.failure = str(exc)
        return result

    spec = EnvSpec(topic_fp=topic.fingerprint, summary=topic.summary, introduction=topic.introduction,
                   entities=state.entities, rules=state.rules, operations=operations)
    result.spec = spec
    methods = await _write_methods(spec, skeleton, class_name, attempts, ask, result)
    result.candidate = _candidate(topic, spec, skeleton, class_name, methods, result)
    return result


async def _write_methods(
    spec: EnvSpec, skeleton: str, class_name: str, attempts: int,
    ask: Callable[[Any, BaseModel], Awaitable[Any]], result: SynthResult,
) -> list[tuple[Operation, tuple[list[str], str]]]:
    """One method per operation, written concurrently (they only depend on the skeleton), each
    checked on its own inside the skeleton; failures are dropped and logged, order is kept."""
    names = [o.name for o in spec.operations]

    async def one(op: Operation) -> tuple[tuple[list[str], str] | None, StepLog]:
        async def attempt(fb: str | None) -> tuple[list[str], str]:
            out = await ask(P.METHOD, P.MethodInput(
                summary=spec.summary, introduction=spec.introduction, entities=spec.entities, rules=spec.rules,
                skeleton_code=skeleton, operation_names=names, target=op, feedback=fb))
            piece = parse_method(out.code, op.name)
            module = assemble_module(skeleton, class_name, [piece])
            problems = static_problems(module, class_name)
            if problems:
                raise ValueError(_problems_text(problems))
            return piece

        try:
            return await run_step("method", attempts, attempt, target=op.name)
        except StepFailed as exc:
            return None, exc.log

    done: list[tuple[Operation, tuple[list[str], str]]] = []
    for op, (piece, log) in zip(spec.operations, await asyncio.gather(*(one(op) for op in spec.operations)), strict=True):
        result.steps.append(log)  # in operation order, whatever order they finished in
        if piece is None:
            result.dropped_operations.append(op.name)
        else:
            done.append((op, piece))
    return done


def _candidate(
    topic: EnvTopic, spec: EnvSpec, skeleton: str, class_name: str,
    methods: list[tuple[Operation, tuple[list[str], str]]], result: SynthResult,
) -> EnvCandidate:
    """Assemble, run the static checks on the whole module, extract tool schemas."""
    try:
        code = assemble_module(skeleton, class_name, [piece for _, piece in methods])
    except AssemblyError as exc:  # methods assembled one at a time; together they may still clash
        code, problems = skeleton, [StaticProblem(name="assembly-failed", detail=str(exc))]
    else:
        problems = static_problems(code, class_name)
    kinds = {op.name: op.kind for op, _ in methods}
    tools = []
    try:
        tools = extract_tools(code, class_name)
    except (SchemaError, SyntaxError):
        pass  # already reported by static_problems
    unknown = sorted({t.function.name for t in tools} - set(kinds))
    if unknown:
        problems.append(StaticProblem(name="unlisted-tool", detail=f"public methods not in the operation list: {unknown}"))
    if result.dropped_operations:
        dropped = f"dropped operations after {len(result.dropped_operations)} failed method step(s): {result.dropped_operations}"
    else:
        dropped = None
    reason = _problems_text(problems) if problems else None
    return EnvCandidate(
        topic_fp=topic.fingerprint, spec_fp=spec.fingerprint, class_name=class_name, class_code=code,
        tools=tools, tool_kinds=kinds, status="static_failed" if problems else "generated",
        failure_reason="; ".join(r for r in (reason, dropped) if r) or None,
    )
