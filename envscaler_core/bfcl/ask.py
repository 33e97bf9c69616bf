"""One model step of a BFCL evaluation, asked and read as BFCL's OpenAI FC handler does.

The gateway's `chat` is built for the factory: a reply cut off by the output limit is asked again with
more room (requests BFCL never sends) and one still cut off, stopped by the server or by a content
filter, is refused as unusable. BFCL's handler sends each request once and reads whatever came back,
whatever its `finish_reason`: a text-only (or empty) reply ends the turn and play goes on. Scored the
factory's way, such a task was invalid where BFCL scores it valid (an outside check: finish_reason
`length` and `content_filter` replies). So an evaluation's step goes through the gateway's transport
(HTTP retries of transient failures, pacing, concurrency cap, budget, accounting, the audit row and the
run's own cache, so a resume pays nothing twice) but skips its reply policy: one exchange, kept as the
answer. It keys the cache as `chat` does, so rows stored before read the same.
"""

from __future__ import annotations

from typing import Any

import openai

from envscaler_core.llm.cache import request_fingerprint
from envscaler_core.llm.call import Call, ChatReply
from envscaler_core.llm.exchange import outgoing, parse_completion, read_response, request_body
from envscaler_core.llm.repair_turns import recorded_usage
from envscaler_core.llm.replies import normalise_assistant
from envscaler_core.llm.replies.tool_calls import call_ids
from envscaler_core.llm.retry import BadAnswer, completion_or_error
from envscaler_core.prompts.base import PROMPT_HEADER, ChatPrompt


async def ask_as_bfcl(gateway: Any, messages: list[dict[str, Any]], prompt: ChatPrompt, tools: list[dict[str, Any]],
                      model: str, temperature: float | None) -> ChatReply:
    """The endpoint's first choice as it came, `finish_reason` notwithstanding (`ChatReply.sent`, also what
    the run's cache keeps, so a resume replays the same history); errors
    the transport raises (outage, refusal, budget) propagate as from `gateway.chat`."""
    msgs = [dict(m) for m in messages]
    model_name = gateway.model_for("agent", model)
    sampling: dict[str, Any] = {} if temperature is None else {"temperature": temperature}
    fingerprint = request_fingerprint("chat", model_name, outgoing(msgs), tools, {"sample": 0, **sampling}, prompt.tag)
    call = Call(fingerprint, "agent", model_name, prompt.id)
    turn = 1 + sum(1 for m in msgs if m.get("role") == "assistant")
    taken = call_ids(msgs)
    hit = await gateway._lookup(fingerprint)
    if hit is not None and isinstance(hit.get("message"), dict):
        await gateway._record(call, "cached")
        usage = {k: int(v) for k, v in (hit.get("usage") or {}).items() if k in ("prompt_tokens", "completion_tokens")}
        return ChatReply(message=normalise_assistant(hit["message"], tools, turn, taken), usage=usage, cached=True,
                         sent=hit["message"])
    sent = outgoing(msgs, gateway._reasoning_back)
    body = request_body(model_name, sent, {**sampling, **({"tools": tools} if tools else {})})
    headers = {PROMPT_HEADER: prompt.tag}

    async def post(client: openai.AsyncOpenAI) -> dict[str, Any]:
        raw = await client.post("/chat/completions", cast_to=bytes, content=body, options={"headers": headers})
        try:
            return parse_completion(raw)
        except ValueError as exc:  # an HTML page, an empty or cut body: no completion, asked again
            raise BadAnswer(f"a body that is not a chat completion ({exc})", getattr(exc, "usage", None)) from None

    async def exchange_once() -> ChatReply:
        resp = await gateway._send(call, f"chat {prompt.tag}", lambda c: completion_or_error(post(c)))
        exchange = read_response(resp, sent, tools)
        gateway._count(call, exchange.prompt_tokens, exchange.completion_tokens, exchange.estimated_tokens,
                       exchange.cached_tokens)
        received = first_message(resp) or exchange.message
        await gateway._record(call, "ok", response={"message": received, "usage": recorded_usage(exchange)})
        return ChatReply(message=normalise_assistant(exchange.message, tools, turn, taken), usage=exchange.usage,
                         usage_estimated=exchange.estimated_tokens > 0, sent=received)

    return await gateway._audited(call, exchange_once)


def first_message(resp: Any) -> dict[str, Any] | None:
    """`choices[0].message` exactly as the endpoint sent it (nulls and empty lists kept), which is what
    BFCL's handler reads and sends back; None for a shape it does not have (a streamed body is already
    put back together as a message by the gateway's reader)."""
    choices = resp.get("choices") if isinstance(resp, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        return dict(choices[0]["message"])
    return None
