"""Render one clean answer in the forms a `realism.Plan` asks for (see `realism` for the catalogue).

Three kinds of answers: a structured prompt's JSON object, a turn with tool calls, and plain text
(the agent's last turn, the simulated user). Each form only changes how the meaning is written:
JSON syntax (pretty, Python literal, trailing commas, comments), what surrounds it (prose, fences, an
example block that is not JSON), where reasoning goes (`<think>` closed, never closed, only closed,
or the `reasoning_content` field; the reasoning itself contains braces, fences and the stop markers
on purpose), line endings, ids, argument spelling, extra null fields, and `<tool_call>` text.
"""

from __future__ import annotations

import json
import random
from typing import Any

from envscaler_core.prompts.agent import DONE_MARKER, STOP_MARKER
from mock_llm.realism import Plan, foreign_id, group_member

_THINK = ("The request asks for one object with the schema's fields {{...}}. A first draft:\n"
          "```json\n{{\"draft\": true, \"fields\": [\"?\"]}}\n```\nNo: the draft misses required fields; "
          "I must not end with '{stop}' or '{done}' before the work is done. Final answer below.")


def _reasoning_text() -> str:
    return _THINK.format(stop=STOP_MARKER, done=DONE_MARKER)


def _python_literal(value: Any, indent: int = 0) -> str:
    pad = "    " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ",\n".join(f"{pad}{k!r}: {_python_literal(v, indent + 1)}" for k, v in value.items())
        return "{\n" + items + "\n" + "    " * indent + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(v, indent + 1) for v in value) + "]"
    return repr(value)


def _syntax(value: dict[str, Any], plan: Plan) -> str:
    form = group_member(plan, "syntax")
    if form == "pretty":
        return json.dumps(value, indent=2, ensure_ascii=False)
    if form == "python_literal":
        return _python_literal(value)
    if form == "trailing_comma":
        text = json.dumps(value, indent=2, ensure_ascii=False)
        return text[:-2] + ",\n}" if text.endswith("\n}") else text
    if form == "comments":
        text = json.dumps(value, indent=2, ensure_ascii=False)
        return "// the requested object\n" + text.replace("{\n", "{\n  /* fields follow */\n", 1) + "  // end"
    return json.dumps(value, ensure_ascii=False)


def _example(value: dict[str, Any]) -> str:
    """A format example that is not JSON (placeholders), as models write before the real answer."""
    return "{\n" + ",\n".join(f'  "{k}": ...' for k in value) + "\n}"


def _wrapped(text: str, value: dict[str, Any], plan: Plan) -> str:
    form = group_member(plan, "wrapper")
    if form == "prose_fence":
        return f"Here is the JSON object you asked for:\n\n```json\n{text}\n```\n\nLet me know if anything should change."
    if form == "bare_fence":
        return f"```\n{text}\n```"
    if form == "prose_inline":
        return f"Sure. {text}\nThat is the complete answer."
    if form == "example_first":
        return (f"The answer has this shape:\n```json\n{_example(value)}\n```\n\nAnd here it is:\n"
                f"```json\n{text}\n```")
    return text


def _with_reasoning(message: dict[str, Any], plan: Plan) -> dict[str, Any]:
    form = group_member(plan, "reasoning")
    content = message.get("content") or ""
    if form == "think":
        message["content"] = f"<think>\n{_reasoning_text()}\n</think>\n\n{content}"
    elif form == "think_unclosed":
        message["content"] = f"<think>\n{_reasoning_text()}\n\n{content}"
    elif form == "think_no_open":
        message["content"] = f"{_reasoning_text()}\n</think>\n\n{content}"
    elif form == "reasoning_field":
        message["reasoning_content"] = _reasoning_text()
    return message


def _code_fenced(value: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value.get("code"), str):
        return {**value, "code": f"Here is the code:\n\n```python\n{value['code'].rstrip()}\n```\n\nIt never raises."}
    return value


def _finish(message: dict[str, Any], plan: Plan) -> dict[str, Any]:
    if "crlf_bom" in plan.forms and isinstance(message.get("content"), str) and message["content"]:
        message["content"] = "\ufeff" + message["content"].replace("\n", "\r\n")
    if "extra_fields" in plan.forms:
        message.setdefault("refusal", None)
        message.setdefault("annotations", [])
        message.setdefault("function_call", None)
        message.setdefault("tool_calls", [])
        if message.get("reasoning_content") is None:
            message["reasoning_content"] = None
    return message


def structured(content: str, plan: Plan) -> dict[str, Any]:
    """A structured prompt's JSON answer in the plan's forms."""
    value = json.loads(content)
    if "code_fenced" in plan.forms:
        value = _code_fenced(value)
    text = _wrapped(_syntax(value, plan), value, plan)
    return _finish(_with_reasoning({"role": "assistant", "content": text}, plan), plan)


def text(content: str, plan: Plan) -> dict[str, Any]:
    """A plain-text chat turn in the plan's forms. A never-closed `<think>` is written closed here:
    before plain text nothing marks where reasoning ends (real endpoints send that only when the
    output limit cut the reply, which the `length` form covers)."""
    if "think_unclosed" in plan.forms:
        plan = Plan(plan.forms - {"think_unclosed"} | {"think"}, plan.code_styles, plan.seed)
    return _finish(_with_reasoning({"role": "assistant", "content": content}, plan), plan)


def tool_turn(calls: list[tuple[str, dict[str, Any]]], plan: Plan, first_id: int) -> dict[str, Any]:
    """A tool-calling turn in the plan's forms; `first_id` numbers the mock's own ids."""
    rng = plan.rng("ids")
    id_style = rng.randrange(4)
    if "tool_text" in plan.forms:
        blocks = "\n".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>" for n, a in calls)
        intro = "I will do that now.\n" if "text_beside" in plan.forms else ""
        return _finish(_with_reasoning({"role": "assistant", "content": intro + blocks}, plan), plan)
    out = []
    for i, (name, args) in enumerate(calls):
        arguments: Any = _arguments(args, plan)
        call: dict[str, Any] = {"id": foreign_id(id_style, rng, name, i) if "foreign_ids" in plan.forms
                                else f"call_mock_{first_id + i}",
                                "type": "function", "function": {"name": name, "arguments": arguments}}
        if "type_missing" in plan.forms:
            del call["type"]
        out.append(call)
    content = f"I'll use {calls[0][0]} for this." if "text_beside" in plan.forms else None
    if content is None and "extra_fields" in plan.forms:
        content = ""
    message = _with_reasoning({"role": "assistant", "content": content, "tool_calls": out}, plan)
    return _finish(message, plan)


def _arguments(args: dict[str, Any], plan: Plan) -> Any:
    if not args and "empty_args" in plan.forms:
        return ""
    form = group_member(plan, "arguments")
    if form == "pretty_args":
        return json.dumps(args, indent=2)
    if form == "padded_args":
        return f"  {json.dumps(args)} \n"
    if form == "args_object":
        return args
    return json.dumps(args)


CACHED_SPELLINGS = ("openai", "deepseek", "top_level", "responses", "anthropic")
"""Where endpoints put the prompt tokens their prefix cache served: OpenAI's `prompt_tokens_details`
(also xAI, Mistral, vLLM, SGLang), DeepSeek's `prompt_cache_hit_tokens`/`prompt_cache_miss_tokens`,
a top-level `cached_tokens` (Moonshot), the Responses API's `input_tokens_details`, Anthropic's
`cache_read_input_tokens` (passed through by proxies)."""


def cached_usage(usage: dict[str, Any], cached: int, spelling: str = "openai") -> dict[str, Any]:
    """`usage` with the cached prompt tokens in one endpoint's spelling."""
    if spelling == "deepseek":
        return {**usage, "prompt_cache_hit_tokens": cached, "prompt_cache_miss_tokens": usage["prompt_tokens"] - cached}
    if spelling == "top_level":
        return {**usage, "cached_tokens": cached}
    if spelling == "responses":
        return {**usage, "input_tokens_details": {"cached_tokens": cached}}
    if spelling == "anthropic":
        return {**usage, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}
    return {**usage, "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0}}


def usage_field(usage: dict[str, int], plan: Plan | None, cached: int = 0) -> tuple[bool, Any]:
    """(include the key?, its value): without usage, the key is absent or null (both are seen). Cached
    prompt tokens are always reported (0 on a miss, as OpenAI does), clean answers in OpenAI's spelling,
    realistic ones in a spelling drawn from the plan's seed."""
    if plan is None:
        return True, cached_usage(usage, cached)
    if "no_usage" not in plan.forms:
        spelling = CACHED_SPELLINGS[random.Random(plan.seed ^ 0x5EED).randrange(len(CACHED_SPELLINGS))]
        return True, cached_usage(usage, cached, spelling)
    return (False, None) if random.Random(plan.seed).random() < 0.5 else (True, None)
