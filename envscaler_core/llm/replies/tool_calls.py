"""An assistant turn in one strict OpenAI shape, whatever the endpoint sent.

Accepted, because each has exactly one meaning:
- reasoning in `reasoning_content`/`reasoning` or `<think>` blocks in `content`: moved to
  `reasoning_content` (kept in the trajectory, never shown to the env or the user simulator);
- text beside tool calls (kept as `content`), `content` as "" or None or a list of text parts; the
  calls themselves written again as text in the content beside the structured ones (vLLM's gpt-oss
  parser, vLLM#25560): that text is dropped, each call kept once, as a call;
- any tool-call id format (`call_0`, `toolu_…`, 9-char alphanumerics); a missing or repeated id gets
  a fresh one; a missing `type` is "function";
- arguments as a JSON string (compact, pretty-printed or padded with whitespace), as an object, as
  "" / null for a tool without parameters, JSON with trailing commas or comments, or double-encoded;
- the legacy `function_call` field, and tool calls written as text when the server ran no tool
  parser or the wrong one, in every family's dialect (`text_calls`; only for tools that were offered,
  prose beside them kept as the content);
- Anthropic `tool_use` content blocks (the calls; `text` blocks are the content); one call split over
  entries with the same `index` (merged); gpt-oss names `functions.X` / `X<|channel|>commentary` of an
  offered `X`; arguments in a fence or with prose around one object;
- TGI's `notify_error` pseudo-call (a tool that was not offered, `{"error": text}`): the turn's text;
- a chat turn swallowed by a reasoning parser (the reasoning never closed, nothing else sent): read
  as the turn, as a person would: the calls that end it, else (only when a server's reasoning
  parser separated it) its text; a `<think>` the model opened and never closed stays reasoning;
- a `refusal` with no content becomes the content (the turn is still a turn);
- OpenRouter's `reasoning_details` (opaque reasoning state: encrypted reasoning, thought signatures)
  are kept whole on the turn, to be sent back with it (their text is also the turn's reasoning).
Arguments that cannot be read stay as the model wrote them: running the call then reports the precise
problem to the model as an observation, which is what a real env does.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from typing import Any

from envscaler_core.llm.replies.call_text import Offered, tool_name
from envscaler_core.llm.replies.json_text import NotJSON, balanced_objects, fences, load_value
from envscaler_core.llm.replies.reasoning import content_text, reasoning_field, split_reasoning, without_end_tokens
from envscaler_core.llm.replies.structured import ReplyProblem, shown
from envscaler_core.llm.replies.text_calls import harmony_calls, notify_error_text, offered_tools, read_calls
from envscaler_core.models.plain_json import plain_json_problem
from envscaler_core.wire_values import not_read_leniently, too_many_values

def parse_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as a dict; ReplyProblem says precisely why not."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return checked_arguments(raw)
    if not isinstance(raw, str):
        raise ReplyProblem(f"arguments must be a JSON object, found {shown(raw)}")
    text = without_end_tokens(raw).strip()  # gpt-oss servers leave `<|call|>` after the arguments
    if not text or text == "null":
        return {}
    if (too_many := too_many_values(text)) is not None:  # parsing costs the host per value (red team 8, F2)
        raise ReplyProblem(f"arguments {too_many}")
    try:
        value = load_value(text)
    except NotJSON as exc:
        # text over the lenient bounds (length, literal values) is not searched for a wrapped object either
        if not_read_leniently(text) is not None or (wrapped := _wrapped_object(text)) is None:
            raise ReplyProblem(f"arguments are not valid JSON: {exc}") from None
        value = wrapped
    if not isinstance(value, dict):
        raise ReplyProblem(f"arguments must be a JSON object, found {shown(value)}")
    if (key := repeated_key(text)) is not None:
        raise ReplyProblem(f"arguments name the key {key[:60]!r} twice (JSON readers silently keep one)")
    return checked_arguments(value)


class RepeatedKey(ValueError):
    """JSON text naming one key of an object twice (`args[0]`: the key): `json.loads` keeps the last value."""


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` that raises RepeatedKey instead of keeping the last of two values silently."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        raise RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return out


def repeated_key(text: str) -> str | None:
    """The first key an object of this JSON text names twice, else None (also for text that is no
    strict JSON: its own reading reports that). `json.loads` keeps the last value silently, so the
    call would run with an argument the model sent twice (red team 7, F7); import and the sandbox's
    wire refuse such text."""
    try:
        json.loads(text, strict=False, object_pairs_hook=unique_pairs)
    except RepeatedKey as exc:
        return str(exc.args[0])
    except (ValueError, RecursionError):
        return None
    return None


def _wrapped_object(text: str) -> dict[str, Any] | None:
    """Arguments a model wrapped like a chat answer: in a ```json fence, or with a sentence before or
    after one JSON object. Only one fence (or, without a fence, one top-level object) that reads as an
    object counts; anything else stays unreadable, and the env reports it to the model."""
    blocks = fences(text)
    bodies = [b.body for b in blocks] if blocks else [text[a:b] for a, b in balanced_objects(text)]
    if len(bodies) != 1:
        return None
    try:
        value = load_value(bodies[0].strip())
    except NotJSON:
        return None
    return value if isinstance(value, dict) else None


def checked_arguments(value: dict[str, Any]) -> dict[str, Any]:
    """Parsed arguments that every later step can carry (`models.plain_json`); Python's NaN is kept,
    as the sandbox's wire and the agent's transcript both carry it."""
    problem = plain_json_problem(value, allow_nan=True)
    if problem:
        raise ReplyProblem(f"the arguments are {problem}" if problem.startswith("nested") else f"the arguments {problem}")
    return value


def canonical_arguments(raw: Any) -> str:
    """Compact JSON text of readable arguments; unreadable ones unchanged (as text)."""
    try:
        return json.dumps(parse_arguments(raw), ensure_ascii=False)
    except ReplyProblem:
        if isinstance(raw, str):
            return raw
        try:
            return json.dumps(raw, default=str)
        except (RecursionError, ValueError):
            return "(arguments nested too deeply to serialise)"  # not JSON: running the call says so


def sent_arguments(message: dict[str, Any]) -> list[Any] | None:
    """Each structured tool call's arguments exactly as the endpoint sent them (one call's stream entries
    joined), in order; None when the turn has no structured `tool_calls` (calls read from text, the legacy
    field). An env imported from EnvScaler reads these, not `normalise_assistant`'s repaired text, as its
    runtime does, and its trajectories keep them (differential round 3, F3)."""
    calls = _structured_calls(message)
    return None if calls is None else [_fn(c).get("arguments") for c in calls]


def _structured_calls(message: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The `tool_calls` field's calls, one call's stream fragments joined; None when the field holds none."""
    calls = message.get("tool_calls")
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list) or not calls:
        return None
    return merged_fragments([c for c in calls if isinstance(c, dict)])


def _raw_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    out = _structured_calls(message) or []
    legacy = message.get("function_call")
    if not out and isinstance(legacy, dict) and legacy.get("name"):
        out = [{"type": "function", "function": legacy}]
    if not out:
        out = tool_use_blocks(message.get("content"))
    return out


def tool_use_blocks(content: Any) -> list[dict[str, Any]]:
    """Anthropic's content blocks relayed as the `content` list (`{"type": "tool_use", "id", "name",
    "input"}` beside `{"type": "text"}` blocks): each tool_use block is a call, its `input` the
    arguments. Before, the text blocks were read and the calls dropped without a word."""
    if not isinstance(content, list):
        return []
    return [{"id": b.get("id"), "type": "function", "function": {"name": b.get("name"), "arguments": b.get("input")}}
            for b in content if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name")]


def _fn(raw: dict[str, Any]) -> dict[str, Any]:
    return raw["function"] if isinstance(raw.get("function"), dict) else {}


def merged_fragments(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One call split over several entries with the same `index` (a stream aggregated naively: the
    first entry has the id and name, later ones only more of the arguments) as one call: argument
    strings joined, the non-empty id, type and name kept. An entry that names a tool of its own while
    the earlier one's arguments already read is a call of its own (servers that number every call 0)."""
    out: list[dict[str, Any]] = []
    by_index: dict[Any, dict[str, Any]] = {}
    for raw in calls:
        index = raw.get("index")
        first = by_index.get(index) if isinstance(index, int) else None
        if first is not None and continues_call(first, raw):
            fn, more = _fn(first), _fn(raw)
            if isinstance(more.get("arguments"), str):
                fn["arguments"] = str(fn.get("arguments") or "") + more["arguments"]
            for key in ("name",):
                if not fn.get(key) and more.get(key):
                    fn[key] = more[key]
            for key in ("id", "type"):
                if not first.get(key) and raw.get(key):
                    first[key] = raw[key]
            continue
        copy = {**raw, "function": dict(_fn(raw))} if "function" in raw else dict(raw)
        out.append(copy)
        if isinstance(index, int):
            by_index[index] = copy
    return out


def continues_call(first: dict[str, Any], raw: dict[str, Any]) -> bool:
    """Whether entry `raw` is more of the call `first` (shared by the non-streamed reader's entries that
    share an index and the stream reader's fragments): not when it names another tool or id, nor when it
    names a tool and `first`'s arguments already read."""
    name = _fn(raw).get("name")
    if name and name != _fn(first).get("name"):
        return False
    if raw.get("id") and first.get("id") and raw["id"] != first["id"]:
        return False
    if not name:
        return True
    try:
        parse_arguments(_fn(first).get("arguments"))
    except ReplyProblem:
        return True  # the first fragment's arguments do not read yet: the rest is still to come
    return False


def _call(raw: dict[str, Any], fallback_id: str, offered: Offered | None = None) -> dict[str, Any]:
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    name = tool_name(str(fn.get("name") or raw.get("name") or "").strip(), offered or {})
    arguments = fn["arguments"] if "arguments" in fn else raw.get("arguments", fn.get("parameters"))
    call_id = raw.get("id")
    call_id = str(call_id).strip() if call_id not in (None, "") else fallback_id
    out = {"id": call_id or fallback_id, "type": "function",
           "function": {"name": name, "arguments": canonical_arguments(arguments)}}
    if isinstance(raw.get("extra_content"), dict):
        # Gemini's thought signature rides here and must come back with the call on the next request
        # (HTTP 400 "Function call is missing a thought_signature" otherwise); exports leave it out
        out["extra_content"] = raw["extra_content"]
    return out


def normalise_assistant(message: dict[str, Any], tools: list[dict[str, Any]] | None = None,
                        turn: int = 0, taken: Collection[str] = ()) -> dict[str, Any]:
    """The assistant turn as `{role, content, tool_calls?, reasoning_content?}` (see module docstring).
    `taken`: call ids the conversation's earlier turns already hold; a call repeating one (an endpoint
    that numbers every turn's calls from `call_0`) gets a suffix, as one repeated within the reply does."""
    field = reasoning_field(message)
    split = split_reasoning(message.get("content"), field)
    content, reasoning = split.answer, split.reasoning
    raw_calls = _raw_calls(message)
    offered = offered_tools(tools)
    if (said := notify_error_text(raw_calls, offered)) is not None:  # TGI answering with text
        raw_calls, content = [], said or content
    if not raw_calls and offered:
        if "<|channel|>" in content_text(message.get("content")):
            raw_calls = harmony_calls(message.get("content"), offered)
        elif (found := read_calls(content, offered)) is not None:
            raw_calls, content = found.calls, found.prose
    elif raw_calls and offered and content:  # vLLM's gpt-oss: the calls again, as text, in the content
        content = _without_echoed_calls(content, raw_calls, offered)
    if not content and not raw_calls and split.tail is not None:
        # The reasoning never closed and swallowed the turn: read it as a person would. Calls only
        # when they end it (drafts come first); its text only when a server's reasoning parser put
        # it there (a `<think>` the model opened itself and never closed is all thinking).
        if (found := read_calls(split.tail, offered, at_end=True)) is not None:
            raw_calls = found.calls
            reasoning = _without_calls(reasoning, split.tail, found.prose)
        elif split.tail == field:
            content, reasoning = split.tail, None
    if not content and isinstance(message.get("refusal"), str) and message["refusal"].strip():
        content = message["refusal"].strip()
    out: dict[str, Any] = {"role": "assistant", "content": content if content or not raw_calls else None}
    if raw_calls:
        calls, used = [], set(taken)
        for i, raw in enumerate(raw_calls):
            call = _call(raw, f"call_{turn}_{i}", offered)
            if call["id"] in used:
                call["id"] = _unused(call["id"], used, turn, i)
            used.add(call["id"])
            calls.append(call)
        out["tool_calls"] = calls
    if reasoning:
        out["reasoning_content"] = reasoning
    if isinstance(message.get("reasoning_details"), list) and message["reasoning_details"]:
        # OpenRouter's reasoning state (encrypted reasoning, Gemini's thought signatures) goes back with
        # the turn, as `extra_content` does with a call: the next request is refused without it
        out["reasoning_details"] = message["reasoning_details"]
    return out


def _without_echoed_calls(content: str, raw_calls: list[dict[str, Any]], offered: Offered) -> str:
    """The content without the calls written in it as text when each of them is one of the structured
    calls (same tool, same arguments): a server that parsed the calls and left their text in the content
    too (vLLM#25560) would otherwise have every call twice in the turn (and in SFT rows). Text calls
    that differ from the structured ones are no echo: the content stays as it was."""
    found = read_calls(content, offered)
    if found is None or not found.calls:
        return content
    structured = Counter(_call_key(raw, offered) for raw in raw_calls)
    written = Counter(_call_key(raw, offered) for raw in found.calls)
    return found.prose if not written - structured else content


def _call_key(raw: dict[str, Any], offered: Offered) -> tuple[str, str]:
    """A call as (tool, arguments), the arguments' key order aside."""
    fn = _call(raw, "", offered)["function"]
    try:
        return fn["name"], json.dumps(parse_arguments(fn["arguments"]), sort_keys=True)
    except ReplyProblem:
        return fn["name"], fn["arguments"]


def call_ids(messages: list[dict[str, Any]]) -> set[str]:
    """The ids of the calls the conversation's assistant turns hold."""
    return {str(c["id"]) for m in messages if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list)
            for c in m["tool_calls"] if isinstance(c, dict) and c.get("id")}


def _unused(call_id: str, used: set[str], turn: int, i: int) -> str:
    """`call_id` made unique: `<id>_<i>` (its place in the reply), else `<id>_<turn>_<i>`, else a count."""
    for candidate in (f"{call_id}_{i}", f"{call_id}_{turn}_{i}"):
        if candidate not in used:
            return candidate
    n = 2
    while f"{call_id}_{turn}_{i}_{n}" in used:
        n += 1
    return f"{call_id}_{turn}_{i}_{n}"


def _without_calls(reasoning: str | None, tail: str, before: str) -> str | None:
    """The reasoning without the calls read out of its end (`tail` is its last part, `before` what came
    before the calls): each call is kept once, as a call, not again as reasoning text (SFT rows)."""
    if not reasoning or (at := reasoning.rfind(tail)) < 0:
        return reasoning
    return (reasoning[:at] + before + reasoning[at + len(tail):]).strip() or None


def answer_text(message: dict[str, Any]) -> str:
    """What a chat turn *says* (reasoning removed): for the simulated user and done/stop markers."""
    return split_reasoning(content_text(message.get("content")), None).answer
