"""The mock LLM's brain: a deterministic script answering every factory prompt from `library/`.

It is NOT a model. It exists so the demo, tests and benchmarks run the real machinery (gateway,
parsers, sandbox, verification, agent loop) end to end without an API key. Every answer is derived
from the request payload and the library; variety across tasks comes from a hash of the payload,
never from randomness, so identical requests get identical answers (which the response cache relies
on). A request the script has no answer for raises `MockCannotAnswer` (HTTP 400) with the reason.

This module answers Stages 1-2 and the scenario prompts, embeds text, and dispatches; the Stage 3
roles (with the deliberately honest judge) are in `validation_answers`, the agent and simulated user
in `chat_answers`, and how a request is matched to the library in `lookup`.
"""

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from mock_llm import library
from mock_llm.library import code as libcode
from mock_llm.bfcl_answers import agent_bfcl
from mock_llm.chat_answers import agent_converse, agent_solve, user_sim
from mock_llm.library import styles
from mock_llm.library.model import Domain
from mock_llm.lookup import (
    WORD, by_class, by_text, by_tools, canonical, class_in, need, scenario_by_task, stable_seed,
)
from mock_llm.protocol import MockCannotAnswer, MockReply, MockRequest
from mock_llm.realism import code_styles_for
from mock_llm.validation_answers import judge_call, propose_call, test_state, tool_kinds
from envscaler_core.prompts import CHAT_PROMPTS, STRUCTURED_PROMPTS
from envscaler_core.prompts import mine as PM
from envscaler_core.prompts import scen as PS
from envscaler_core.prompts import synth as PY

EMBEDDING_DIM = 256

# ---- Stage 1: mine -------------------------------------------------------------------------------

_STATELESS = {
    "calculat": "a pure calculation", "estimat": "an estimate", "weather": "a weather lookup",
    "information about": "an information request", "information on": "an information request",
    "provide information": "an information request", "symptom": "a medical information request",
    "technique": "advice", "tips": "advice", "recommend": "a recommendation", "explain": "an explanation",
    "how to": "a how-to question", "how can": "a how-to question", "what is": "an open-domain question",
    "what are": "an open-domain question", "who is": "an open-domain question", "summary of": "a summary request",
    "compare": "a comparison", "demonstrate": "a demonstration", "education": "education content",
    "guidelines": "guidance", "strategies": "advice", "purchas": "a shopping request",
    "determine the": "a judgement call", "tell me": "an open-domain question", "develop a": "content writing",
}


def _stateless_reason(task: str) -> str | None:
    folded = task.casefold()
    for marker, kind in _STATELESS.items():
        if marker in folded:
            return kind
    return None


def judge_stateful(inp: PM.TaskInput) -> dict[str, Any]:
    reason = _stateless_reason(inp.task)
    domain = library.route(inp.task)
    if reason is not None:
        return {"analysis": f"The task is {reason}: it reads or changes no persistent, domain-specific records.",
                "stateful": False}
    if domain is None:
        return {"analysis": "The task names no structured system whose records it would read and change "
                            "(no appointments, reminders, records, bookings, claims, loans or waitlists).",
                "stateful": False}
    entities = ", ".join(e["name"].lower() + "s" for e in domain.entities)
    return {"analysis": f"The task acts on live state of a {domain.summary.lower()} ({entities}): it must look "
                        f"up and change those records, so it is stateful.", "stateful": True}


def infer_topic(inp: PM.TaskInput) -> dict[str, Any]:
    domain = need(library.route(inp.task), "task")
    seed = stable_seed("topic", inp.task)
    summary = domain.summary_variants[seed % len(domain.summary_variants)]
    extra = domain.intro_variants[(seed // 7) % len(domain.intro_variants)]
    return {
        "analysis": f"The task needs a system holding {', '.join(e['name'] for e in domain.entities)} records; "
                    f"a {summary.lower()} covers it and many similar requests.",
        "summary": summary,
        "introduction": f"{domain.introduction} {extra}",
        "usefulness": max(1, min(10, domain.usefulness - (seed // 11) % 2)),
        "modelability": max(1, min(10, domain.modelability - (seed // 13) % 2)),
    }


def judge_stateful_batch(inp: PM.TaskBatchInput) -> dict[str, Any]:
    return {"judgements": [{"id": t.id, **judge_stateful(PM.TaskInput(task=t.task))} for t in inp.tasks]}


def infer_topic_batch(inp: PM.TaskBatchInput) -> dict[str, Any]:
    """One topic per task, as asked; a task no library domain covers gets no entry (the client asks it
    again on its own, where the mock then says why it cannot answer)."""
    topics = []
    for t in inp.tasks:
        try:
            topics.append({"id": t.id, **infer_topic(PM.TaskInput(task=t.task))})
        except MockCannotAnswer:
            continue
    return {"topics": topics}


# ---- Stage 2: synthesize -------------------------------------------------------------------------


def state_space(inp: PY.TopicInput) -> dict[str, Any]:
    domain = need(by_text(inp.summary, inp.introduction, inp.example_task), "topic")
    return {"analysis": f"{domain.summary}: {len(domain.entities)} entities keyed by id.",
            "entities": copy.deepcopy(domain.entities), "rules": list(domain.rules)}


def class_skeleton(inp: PY.SkeletonInput) -> dict[str, Any]:
    domain = need(by_text(inp.summary, inp.introduction), "topic")
    return {"analysis": "One container per entity, loaded from init_config; helpers for ids and rule checks.",
            "code": libcode.skeleton(domain), "class_name": domain.class_name}


def _synth_domain(skeleton_code: str, summary: str, introduction: str) -> Domain:
    return need(by_class(class_in(skeleton_code)) or by_text(summary, introduction), "skeleton")


def operations(inp: PY.OperationsInput) -> dict[str, Any]:
    domain = _synth_domain(inp.skeleton_code, inp.summary, inp.introduction)
    ops = libcode.operations(domain)
    return {"analysis": f"{sum(o['kind'] == 'query' for o in ops)} queries and "
                        f"{sum(o['kind'] == 'state_change' for o in ops)} state changes.", "operations": ops}


def method(inp: PY.MethodInput) -> dict[str, Any]:
    domain = _synth_domain(inp.skeleton_code, inp.summary, inp.introduction)
    try:
        source = libcode.method_source(domain, inp.target.name)
    except KeyError:
        raise MockCannotAnswer(f"{domain.class_name} has no operation {inp.target.name!r} in the library") from None
    return {"analysis": f"{inp.target.name}: validate inputs, enforce the rules, then change state.", "code": source}


# ---- ScenGenerator -------------------------------------------------------------------------------


def scen_task(inp: PS.TaskInput) -> dict[str, Any]:
    domain = need(by_tools({op.name for op in inp.operations}) or by_text(inp.introduction), "environment")
    key = canonical(inp.initial_state)
    for sc in domain.scenarios:
        if canonical(sc.initial_state) == key:
            return {"analysis": f"A {len(sc.reference_solution)}-call task needing state changes.", "task": sc.task}
    raise MockCannotAnswer(f"the initial state is not one of {domain.name}'s library states; the mock only writes "
                           "tasks for states it produced")


def scen_checklist(inp: PS.ChecklistInput) -> dict[str, Any]:
    _, sc = scenario_by_task(inp.task)
    return {"analysis": f"{len(sc.checklist)} independent items.", "items": list(sc.checklist)}


def scen_check_function(inp: PS.CheckFunctionInput) -> dict[str, Any]:
    _, sc = scenario_by_task(inp.task)
    if inp.item not in sc.checklist:
        raise MockCannotAnswer(f"item {inp.item[:80]!r} is not on this task's checklist")
    code = sc.checks[sc.checklist.index(inp.item)]
    return {"analysis": "Compare the final state with the target values (generated ids only for existence).",
            "code": code}


def scen_check_functions(inp: PS.CheckFunctionsInput) -> dict[str, Any]:
    """Every item's check, as asked; an item not on the task's checklist gets no entry (the client asks it
    again on its own, where the mock then says why it cannot answer)."""
    checks = []
    for it in inp.items:
        try:
            one = scen_check_function(PS.CheckFunctionInput(introduction=inp.introduction,
                                                            initial_state=inp.initial_state, task=inp.task, item=it.item))
        except MockCannotAnswer:
            continue
        checks.append({"id": it.id, **one})
    return {"checks": checks}


def scen_reference_solution(inp: PS.SolutionInput) -> dict[str, Any]:
    _, sc = scenario_by_task(inp.task)
    return {"analysis": f"{len(sc.reference_solution)} calls in order.",
            "calls": copy.deepcopy(sc.reference_solution)}


# ---- embeddings ----------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or the their them they this to with "
    "which who can each such".split())


def embedding(text: str) -> list[float]:
    """Signed feature hashing of words (sha256 buckets), log-scaled counts, L2-normalised; texts with
    mostly the same words have a high cosine. An empty text gives the zero vector."""
    vec = [0.0] * EMBEDDING_DIM
    counts: dict[str, int] = {}
    for word in WORD.findall(text.casefold()):
        if word not in _STOPWORDS:
            counts[word] = counts.get(word, 0) + 1
    for word, n in counts.items():
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        bucket = int.from_bytes(digest[:4], "big") % EMBEDDING_DIM
        sign = 1.0 if digest[4] & 1 else -1.0
        vec[bucket] += sign * (1.0 + math.log(n))
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec] if norm else vec


# ---- dispatch ------------------------------------------------------------------------------------

_STRUCTURED: dict[str, Callable[[Any], dict[str, Any]]] = {
    "mine.judge_stateful": judge_stateful, "mine.infer_topic": infer_topic,
    "mine.judge_stateful_batch": judge_stateful_batch, "mine.infer_topic_batch": infer_topic_batch,
    "synth.state_space": state_space, "synth.class_skeleton": class_skeleton, "synth.operations": operations,
    "synth.method": method,
    "validate.test_state": test_state, "validate.propose_call": propose_call, "validate.judge_call": judge_call,
    "validate.tool_kinds": tool_kinds,
    "scen.initial_state": test_state, "scen.task": scen_task, "scen.checklist": scen_checklist,
    "scen.check_function": scen_check_function,
    "scen.check_functions": scen_check_functions, "scen.reference_solution": scen_reference_solution,
}
_CHAT: dict[str, Callable[[MockRequest], MockReply]] = {
    "agent.solve": agent_solve, "agent.converse": agent_converse, "agent.user_sim": user_sim,
    "agent.bfcl": agent_bfcl,
}


def _restyled(req: MockRequest, inp: Any, answer: dict[str, Any]) -> dict[str, Any]:
    """Stage 2 answers in the env class's code styles (realism); the same meaning, other code."""
    if req.realism is None or not req.prompt_id or not req.prompt_id.startswith("synth."):
        return answer
    if req.prompt_id == "synth.class_skeleton":
        domain = need(by_class(answer["class_name"]), "class")
        chosen = code_styles_for(req.realism, domain.class_name)
        return {**answer, "code": styles.restyle_skeleton(answer["code"], domain, chosen)}
    if req.prompt_id in ("synth.operations", "synth.method"):
        domain = _synth_domain(inp.skeleton_code, inp.summary, inp.introduction)
        chosen = code_styles_for(req.realism, domain.class_name)
        if req.prompt_id == "synth.operations":
            return {**answer, "operations": styles.restyle_operations(answer["operations"], chosen)}
        return {**answer, "code": styles.restyle_method(answer["code"], chosen)}
    return answer


def _check_version(req: MockRequest, version: int) -> None:
    if req.prompt_version is not None and req.prompt_version != version:
        raise MockCannotAnswer(f"the mock answers {req.prompt_id}@{version}, not @{req.prompt_version}")


def dispatch(req: MockRequest) -> MockReply:
    """Answer one request: structured prompts get one JSON object valid for their output model, chat
    roles get text or tool calls. Raises MockCannotAnswer with the reason otherwise."""
    if req.prompt_id is None:
        raise MockCannotAnswer("the request has no X-EnvScaler-Prompt tag, so the mock cannot tell which "
                               "question it is")
    if req.prompt_id in _CHAT:
        _check_version(req, CHAT_PROMPTS[req.prompt_id].version)
        return _CHAT[req.prompt_id](req)
    spec = STRUCTURED_PROMPTS.get(req.prompt_id)
    if spec is None or req.prompt_id not in _STRUCTURED:
        raise MockCannotAnswer(f"unknown prompt id {req.prompt_id!r}")
    _check_version(req, spec.version)
    if req.payload is None:
        raise MockCannotAnswer(f"{req.prompt_id}: the user message has no '## Input' JSON block")
    try:
        inp: BaseModel = spec.input_model.model_validate(req.payload)
    except ValidationError as exc:
        raise MockCannotAnswer(f"{req.prompt_id}: input does not match {spec.input_model.__name__}: "
                               f"{exc.errors()[0]['loc']} {exc.errors()[0]['msg']}") from None
    answer = _restyled(req, inp, _STRUCTURED[req.prompt_id](inp))
    out = spec.output_model.model_validate(answer)  # a script bug must surface here, not in the client
    return MockReply(content=out.model_dump_json())
