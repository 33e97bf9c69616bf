"""The gateway's chat turns: one assistant turn per call, cached and accounted like any call. Mixed into
`LLMGateway`, whose cache lookup, audit, HTTP exchange (`_complete`) and accounting these use.

Two ways to read a reply. The factory's (default): a reply cut off by the output limit is asked again with
more room, and one still cut off, stopped by the server, filtered, or holding only reasoning is refused as
unusable (`LLMOutputInvalid`), since it must never be parsed and executed as an answer. A benchmark's
(`as_sent=True`): the reply is read once, as it came, whatever its `finish_reason`, as BFCL's own handlers
read it (a `length` or `content_filter` text ends the turn and play goes on; an outside check found BFCL
tasks scored invalid here that BFCL scores valid), and `ChatReply.sent` is the answer's message exactly as
the endpoint sent it, nulls and empty lists kept, which is also what the cache keeps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envscaler_core.llm.cache import body_key, request_fingerprint
from envscaler_core.llm.call import Call, ChatReply
from envscaler_core.llm.errors import LLMOutputInvalid
from envscaler_core.llm.exchange import outgoing
from envscaler_core.llm.repair_turns import cut_off_reason, recorded_usage
from envscaler_core.llm.replies import normalise_assistant
from envscaler_core.llm.replies.tool_calls import call_ids
from envscaler_core.prompts.base import PROMPT_HEADER, ChatPrompt

ONLY_REASONING = "the reply holds only reasoning (it never closed, or nothing followed it): nothing was said"


class ChatCalls:
    """`chat` for `LLMGateway` (self is the gateway)."""

    async def chat(self, messages: Sequence[dict[str, Any]], prompt: ChatPrompt | None = None, stage: str = "agent",
                   tools: list[dict[str, Any]] | None = None, model: str | None = None, sample: int = 0,
                   temperature: float | None = None, as_sent: bool = False) -> ChatReply:
        """One assistant turn. `sample` only enters the cache key: independent rollouts of the same
        scenario pass different samples so they are not served each other's cached turns. A
        `temperature` is sent with the request (and keys the cache); None sends none (the endpoint's).
        `as_sent`: read the reply once, as it came (module docstring); the cache key is the same."""
        gw: Any = self
        msgs = [dict(m) for m in messages]
        model_name = gw.model_for(stage, model)
        tag = prompt.tag if prompt is not None else None
        sampling: dict[str, Any] = {} if temperature is None else {"temperature": temperature}
        fp = request_fingerprint("chat", model_name, outgoing(msgs), tools,
                                 {"sample": sample, **sampling, **body_key(gw.settings.extra_body)}, tag)
        call = Call(fp, stage, model_name, prompt.id if prompt is not None else None)
        # a call id the endpoint left out is `call_<turn>_<i>`, unique in the trajectory: the turn is this
        # reply's place among the conversation's assistant turns (the rollout loop's step number)
        turn = 1 + sum(1 for m in msgs if m.get("role") == "assistant")
        taken = call_ids(msgs)  # an id an earlier turn holds gets a suffix too (endpoints that restart at call_0)
        hit = await gw._lookup(fp, lambda answer: answer if isinstance(answer.get("message"), dict) else None)
        if hit is not None:
            await gw._record(call, "cached")
            usage = {k: int(v) for k, v in (hit.get("usage") or {}).items() if k in ("prompt_tokens", "completion_tokens")}
            return ChatReply(message=normalise_assistant(hit["message"], tools, turn, taken), usage=usage, cached=True,
                             usage_estimated=bool((hit.get("usage") or {}).get("estimated_tokens")),
                             sent=hit["message"])

        async def body() -> ChatReply:
            headers = {PROMPT_HEADER: tag} if tag else {}
            what = f"chat {tag}" if tag else "chat request"
            exchange = await gw._complete(call, msgs, tools, sampling, headers, what, as_sent=as_sent)
            message = normalise_assistant(exchange.message, tools, turn, taken)
            if not as_sent:
                said = message.get("tool_calls") or (message.get("content") or "").strip()
                reason = cut_off_reason(exchange) if exchange.incomplete else (
                    ONLY_REASONING if not said and message.get("reasoning_content") else None)
                if reason is not None:
                    await gw._record(call, "output_invalid", error=reason)
                    raise LLMOutputInvalid(f"{what}: {reason}", reason, str(exchange.message.get("content") or ""))
            sent = exchange.received if as_sent and exchange.received is not None else exchange.message
            await gw._record(call, "ok", response={"message": sent, "usage": recorded_usage(exchange)})
            return ChatReply(message=message, usage=exchange.usage,
                             usage_estimated=exchange.estimated_tokens > 0, sent=sent)

        return await gw._audited(call, body)
