"""The mock's chat roles: a tool-calling agent that plays a library scenario's reference plan, and a
simulated user that states the goal and stops when the agent reports completion."""

from __future__ import annotations

import copy
import re
from typing import Any

from mock_llm import library
from mock_llm.library.model import LibraryScenario
from mock_llm.lookup import WORD
from mock_llm.protocol import MockCannotAnswer, MockReply, MockRequest, MockToolCall
from envscaler_core.prompts.agent import DONE_MARKER, STOP_MARKER




def _tokens(text: str) -> set[str]:
    return set(WORD.findall(text.casefold()))


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
