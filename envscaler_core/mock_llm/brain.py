"""The mock LLM's brain: a deterministic script answering every factory prompt from `library/`.

It is NOT a model. It exists so the demo, tests and benchmarks run the real machinery (gateway,
parsers, sandbox, verification, agent loop) end to end without an API key. Every answer is derived
from the request payload and the library; variety across tasks comes from a hash of the payload,
never from randomness, so identical requests get identical answers (which the response cache relies
on). A request the script has no answer for raises `MockCannotAnswer` (HTTP 400) with the reason.

The validation judge is deliberately honest: it decides only from the facts in the payload
(observation, error kind, state before/after, tool kind, case type), never from knowing which
library domain is defective.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from envscaler_core.mock_llm import library
from envscaler_core.mock_llm.library import code as libcode
from envscaler_core.mock_llm.library.model import Domain, LibraryScenario
from envscaler_core.mock_llm.protocol import MockCannotAnswer, MockReply, MockRequest, MockToolCall
from envscaler_core.prompts import CHAT_PROMPTS, STRUCTURED_PROMPTS
from envscaler_core.prompts import mine as PM
from envscaler_core.prompts import scen as PS
from envscaler_core.prompts import synth as PY
from envscaler_core.prompts import validate as PV
from envscaler_core.prompts.agent import DONE_MARKER, STOP_MARKER

EMBEDDING_DIM = 256

# ---- shared helpers ------------------------------------------------------------------------------


def _seed(*parts: Any) -> int:
    """A stable integer from the payload (variety across tasks without randomness)."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _class_in(code: str) -> str | None:
    match = re.search(r"^class\s+([A-Za-z_]\w*)", code, re.MULTILINE)
    return match.group(1) if match else None


def _by_class(class_name: str | None) -> Domain | None:
    if not class_name:
        return None
    return next((d for d in library.domains() if d.class_name == class_name), None)


def _by_tools(names: set[str]) -> Domain | None:
    """The domain whose tool set equals `names`, else the one covering most of them (at least half)."""
    best, best_hits = None, 0
    for d in library.domains():
        tools = set(d.tool_kinds)
        if tools == names:
            return d
        hits = len(tools & names)
        if hits > best_hits:
            best, best_hits = d, hits
    return best if names and best_hits * 2 >= len(names) else None


def _by_text(*texts: str) -> Domain | None:
    """Exact summary match first (the mock's own topics), then keyword routing."""
    for text in texts:
        key = text.strip().casefold()
        for d in library.domains():
            if key in {s.casefold() for s in d.summary_variants}:
                return d
    return library.route(" ".join(texts))


def _need(domain: Domain | None, what: str) -> Domain:
    if domain is None:
        raise MockCannotAnswer(f"no library domain matches this {what}; the mock only knows "
                               f"{[d.name for d in library.domains()]}")
    return domain


def _scenario_by_task(task: str) -> tuple[Domain, LibraryScenario]:
    key = task.strip()
    for d in library.domains():
        for sc in d.scenarios:
            if sc.task == key:
                return d, sc
    raise MockCannotAnswer(f"task {task[:80]!r} is not one of the library's scenario tasks")


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
    domain = _need(library.route(inp.task), "task")
    seed = _seed("topic", inp.task)
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


# ---- Stage 2: synthesize -------------------------------------------------------------------------


def state_space(inp: PY.TopicInput) -> dict[str, Any]:
    domain = _need(_by_text(inp.summary, inp.introduction, inp.example_task), "topic")
    return {"analysis": f"{domain.summary}: {len(domain.entities)} entities keyed by id.",
            "entities": copy.deepcopy(domain.entities), "rules": list(domain.rules)}


def class_skeleton(inp: PY.SkeletonInput) -> dict[str, Any]:
    domain = _need(_by_text(inp.summary, inp.introduction), "topic")
    return {"analysis": f"One container per entity, loaded from init_config; helpers for ids and rule checks.",
            "code": libcode.skeleton(domain), "class_name": domain.class_name}


def _synth_domain(skeleton_code: str, summary: str, introduction: str) -> Domain:
    return _need(_by_class(_class_in(skeleton_code)) or _by_text(summary, introduction), "skeleton")


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


# ---- Stage 3: validate ---------------------------------------------------------------------------


def test_state(inp: PV.StateInput) -> dict[str, Any]:
    domain = _need(_by_class(inp.class_name) or _by_class(_class_in(inp.class_code)), "class")
    states = domain.initial_states
    index = inp.variation % len(states)
    return {"analysis": f"Library state {index} of {domain.name}.", "state": copy.deepcopy(states[index])}


def _split_params(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def parse_tool_line(line: str) -> tuple[str, list[tuple[str, str]]]:
    """`name(a: string, b: ['integer', 'null']) - desc` -> ("name", [("a", "string"), ("b", "integer")])."""
    name, _, rest = line.partition("(")
    depth, end = 1, len(rest)
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            end = i
            break
    params = []
    for part in _split_params(rest[:end]):
        pname, _, ptype = part.partition(":")
        types = [t for t in re.findall(r"[a-z]+", ptype) if t != "null"] or ["any"]
        params.append((pname.strip(), types[0]))
    return name.strip(), params


def _values(state: Any, key: str, out: list[Any] | None = None) -> list[Any]:
    """Distinct scalars stored under `key` anywhere in the state, depth first in dict order, plus the
    elements of lists stored under `available_<key>s` (e.g. a doctor's open slots) ahead of them."""
    out = [] if out is None else out
    if isinstance(state, dict):
        options = state.get(f"available_{key}s")
        if isinstance(options, list):
            out.extend(o for o in options if isinstance(o, str | int | float) and o not in out)
        value = state.get(key)
        if isinstance(value, str | int | float | bool) and value not in out:
            out.append(value)
        children = list(state.values())
    elif isinstance(state, list):
        children = state
    else:
        return out
    for child in children:
        if isinstance(child, dict | list):
            _values(child, key, out)
    return out


_DEFAULTS: dict[str, Any] = {"string": "sample", "integer": 1, "number": 1.0, "boolean": True, "array": [],
                             "object": {}, "any": "sample"}
_WRONG_TYPE: dict[str, Any] = {"string": 12345, "integer": "not-a-number", "number": "not-a-number",
                               "boolean": "maybe", "array": "not-a-list", "object": "not-an-object", "any": None}


def _fits(value: Any, ptype: str) -> bool:
    checks: dict[str, Callable[[Any], bool]] = {
        "string": lambda v: isinstance(v, str), "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool), "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    return checks.get(ptype, lambda v: True)(value)


def _positive_value(name: str, ptype: str, state: dict[str, Any], hints: dict[str, Any], k: int) -> Any:
    """The k-th distinct value the state holds for this parameter (so repeated cases explore different
    entities), else a domain hint, else a default of the right type."""
    base = name.removeprefix("new_")
    found = [v for v in _values(state, base if base != name else name) if _fits(v, ptype)]
    if not found and base != name:
        found = [v for v in _values(state, name) if _fits(v, ptype)]
    if found:
        return found[k % len(found)]
    for hint in (hints.get(name), hints.get(base)):
        if hint is not None and _fits(hint, ptype):
            return hint
    return _DEFAULTS.get(ptype, "sample")


def propose_call(inp: PV.ProposeInput) -> dict[str, Any]:
    if not inp.tools:
        raise MockCannotAnswer("propose_call: the tool list is empty")
    parsed = [parse_tool_line(line) for line in inp.tools]
    domain = _by_tools({name for name, _ in parsed})
    hints = domain.example_values if domain is not None else {}

    def tested(name: str) -> int:
        return inp.stats[name].total if name in inp.stats else 0

    order = sorted(range(len(parsed)), key=lambda i: (tested(parsed[i][0]), i))
    name, params = parsed[order[0]]
    stats = inp.stats.get(name, PV.ToolStats())
    case = "positive" if stats.positive <= stats.negative else "negative"
    k = stats.positive if case == "positive" else stats.negative + 1
    args = {p: _positive_value(p, t, inp.state, hints, k) for p, t in params}
    if case == "positive":
        thought = f"{name} has {stats.total} tested call(s); try it with values taken from the current state."
        return {"thought": thought, "tool": name, "args": args, "case_type": case}
    style = stats.negative % 3
    ids = [p for p, _ in params if p.endswith("id")]
    numbers = [p for p, t in params if t in ("integer", "number")]
    strings = [p for p, t in params if t == "string"]
    if not params:
        args, what = {"unexpected": 1}, "an argument the tool does not take"
    elif style == 0 and ids:
        args[ids[0]] = f"no-such-{ids[0].replace('_', '-')}-{inp.round}"
        what = f"a nonexistent {ids[0]}"
    elif style in (0, 1) and (numbers or strings):
        if numbers:
            args[numbers[0]] = -999
            what = f"an out-of-range {numbers[0]}"
        else:
            args[strings[0]] = ""
            what = f"an empty {strings[0]}"
    else:
        pname, ptype = params[0]
        args[pname] = _WRONG_TYPE.get(ptype)
        what = f"a wrongly typed {pname}"
    thought = f"{name} has {stats.negative} negative case(s); check it rejects {what} without changing state."
    return {"thought": thought, "tool": name, "args": args, "case_type": case}


_FATAL_KINDS = ("exception", "timeout", "crash", "unserializable", "oversize")


def _state_changed(inp: PV.JudgeInput) -> bool:
    if inp.state_before or inp.state_after:
        return _canonical(inp.state_before) != _canonical(inp.state_after)
    return bool(inp.state_diff.get("changes")) if "changes" in inp.state_diff else bool(inp.state_diff)


def judge_call(inp: PV.JudgeInput) -> dict[str, Any]:
    """Rule-based and honest: only the facts in the payload decide the verdict."""
    obs, changed = inp.observation, _state_changed(inp)

    def verdict(v: str, reason: str) -> dict[str, Any]:
        facts = f"tool={inp.tool} kind={inp.tool_kind} case={inp.case_type} state_changed={changed}"
        return {"analysis": f"Facts: {facts}.", "verdict": v, "reason": reason}

    if isinstance(obs, dict) and obs.get("error_kind") in _FATAL_KINDS:
        return verdict("fail", f"the call ended in {obs['error_kind']}: {str(obs.get('error'))[:200]}; tools must "
                               "return {'success': False, 'error': ...} for bad input instead of raising")
    if isinstance(obs, dict) and obs.get("error_kind") == "schema":
        if inp.case_type == "negative":
            return verdict("pass", "ok")
        return verdict("warning", "the arguments were rejected by the tool schema before the tool ran")
    if not isinstance(obs, dict):
        return verdict("fail", f"the tool returned a non-dict value ({type(obs).__name__}: {str(obs)[:80]!r}); "
                               "it must return a dict with a 'success' key")
    if "success" not in obs:
        return verdict("fail", "the returned dict has no 'success' key")
    if obs.get("success") is False and changed:
        return verdict("fail", "the call failed (success False) but changed the state; a failed call must leave "
                               "the state unchanged (validate before mutating)")
    if inp.tool_kind == "query" and changed:
        return verdict("fail", "a query tool changed the state; queries must only read")
    if inp.case_type == "positive" and obs.get("success") is False:
        return verdict("warning", f"a positive case was refused: {str(obs.get('error'))[:160]}")
    if inp.case_type == "negative" and obs.get("success") is True:
        return verdict("warning", "a negative case was accepted; the tool lacks input validation")
    if inp.tool_kind == "state_change" and obs.get("success") is True and not changed:
        return verdict("warning", "the change reported success but the state did not change")
    return verdict("pass", "ok")


# ---- ScenGenerator -------------------------------------------------------------------------------


def scen_task(inp: PS.TaskInput) -> dict[str, Any]:
    domain = _need(_by_tools({op.name for op in inp.operations}) or _by_text(inp.introduction), "environment")
    key = _canonical(inp.initial_state)
    for sc in domain.scenarios:
        if _canonical(sc.initial_state) == key:
            return {"analysis": f"A {len(sc.reference_solution)}-call task needing state changes.", "task": sc.task}
    raise MockCannotAnswer(f"the initial state is not one of {domain.name}'s library states; the mock only writes "
                           "tasks for states it produced")


def scen_checklist(inp: PS.ChecklistInput) -> dict[str, Any]:
    _, sc = _scenario_by_task(inp.task)
    return {"analysis": f"{len(sc.checklist)} independent items.", "items": list(sc.checklist)}


def scen_check_function(inp: PS.CheckFunctionInput) -> dict[str, Any]:
    _, sc = _scenario_by_task(inp.task)
    if inp.item not in sc.checklist:
        raise MockCannotAnswer(f"item {inp.item[:80]!r} is not on this task's checklist")
    code = sc.checks[sc.checklist.index(inp.item)]
    return {"analysis": "Compare the final state with the target values (generated ids only for existence).",
            "code": code}


def scen_reference_solution(inp: PS.SolutionInput) -> dict[str, Any]:
    _, sc = _scenario_by_task(inp.task)
    return {"analysis": f"{len(sc.reference_solution)} calls in order.",
            "calls": copy.deepcopy(sc.reference_solution)}


# ---- chat roles ----------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _tokens(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _match_scenario(text: str, tool_names: set[str]) -> LibraryScenario | None:
    """The scenario whose task is in `text` (or overlaps it most, Jaccard >= 0.5) and whose plan uses
    only the offered tools."""
    candidates = [sc for d in library.domains() for sc in d.scenarios
                  if {c["tool"] for c in sc.reference_solution} <= tool_names]
    for sc in candidates:
        if sc.task in text:
            return sc
    words = _tokens(text)
    best, best_score = None, 0.0
    for sc in candidates:
        task_words = _tokens(sc.task)
        score = len(words & task_words) / max(1, len(words | task_words))
        if score > best_score:
            best, best_score = sc, score
    return best if best_score >= 0.5 else None


def _tool_names(tools: list[dict[str, Any]] | None) -> set[str]:
    return {(t.get("function") or {}).get("name", "") for t in tools or []}


def _calls_made(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")


def _agent(req: MockRequest, conversational: bool) -> MockReply:
    users = [str(m.get("content") or "") for m in req.messages if m.get("role") == "user"]
    text = "\n".join(users) if conversational else (users[0] if users else "")
    sc = _match_scenario(text, _tool_names(req.tools)) if req.tools else None
    if sc is None:
        if conversational and not req.tools:
            raise MockCannotAnswer("agent.converse without tools")
        return MockReply(content=f"{DONE_MARKER}. I could not match this request to anything I can do with the "
                                 "available tools, so I made no changes.")
    done = _calls_made(req.messages)
    if done < len(sc.reference_solution):
        step = sc.reference_solution[done]
        return MockReply(tool_calls=[MockToolCall(name=step["tool"], arguments=copy.deepcopy(step["args"]))])
    closing = " Is there anything else I can help you with?" if conversational else ""
    return MockReply(content=f"{DONE_MARKER}. I made {len(sc.reference_solution)} tool call(s) to carry out the "
                             f"request.{closing}")


def agent_solve(req: MockRequest) -> MockReply:
    return _agent(req, conversational=False)


def agent_converse(req: MockRequest) -> MockReply:
    return _agent(req, conversational=True)


_GOAL = re.compile(r"accomplish this goal:\s*(.*?)\s*Do not paste the goal", re.DOTALL)


def user_sim(req: MockRequest) -> MockReply:
    """Reveal the goal on the first turn; stop once the assistant reports completion; otherwise
    restate the goal when asked a question, or ask it to carry on."""
    system = next((str(m.get("content") or "") for m in req.messages if m.get("role") == "system"), "")
    match = _GOAL.search(system)
    if not match:
        raise MockCannotAnswer("agent.user_sim: no goal found in the system message")
    goal = match.group(1).strip()
    spoken = [m for m in req.messages if m.get("role") == "assistant"]
    if not spoken:
        return MockReply(content=f"Hi, I need some help, please. {goal}")
    last = str(req.messages[-1].get("content") or "") if req.messages[-1].get("role") == "user" else ""
    if DONE_MARKER.casefold() in last.casefold():
        return MockReply(content=STOP_MARKER)
    if "?" in last:
        return MockReply(content=f"To be precise, here is what I need: {goal}")
    return MockReply(content="Thanks, please go ahead and finish everything I asked for.")


# ---- embeddings ----------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or the their them they this to with "
    "which who can each such".split())


def embedding(text: str) -> list[float]:
    """Signed feature hashing of words (sha256 buckets), log-scaled counts, L2-normalised; texts with
    mostly the same words have a high cosine. An empty text gives the zero vector."""
    vec = [0.0] * EMBEDDING_DIM
    counts: dict[str, int] = {}
    for word in _WORD.findall(text.casefold()):
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
    "synth.state_space": state_space, "synth.class_skeleton": class_skeleton, "synth.operations": operations,
    "synth.method": method,
    "validate.test_state": test_state, "validate.propose_call": propose_call, "validate.judge_call": judge_call,
    "scen.initial_state": test_state, "scen.task": scen_task, "scen.checklist": scen_checklist,
    "scen.check_function": scen_check_function, "scen.reference_solution": scen_reference_solution,
}
_CHAT: dict[str, Callable[[MockRequest], MockReply]] = {
    "agent.solve": agent_solve, "agent.converse": agent_converse, "agent.user_sim": user_sim,
}


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
    answer = _STRUCTURED[req.prompt_id](inp)
    out = spec.output_model.model_validate(answer)  # a script bug must surface here, not in the client
    return MockReply(content=out.model_dump_json())
