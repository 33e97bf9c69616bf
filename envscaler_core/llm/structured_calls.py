"""The gateway's structured calls: a prompt whose reply is one JSON object validated against the prompt's
output model, with at most `repair_attempts` repair turns. Mixed into `LLMGateway`, whose cache lookup,
audit, HTTP exchange (`_complete`) and accounting these use; the server's refusal of `response_format`
is learned there (`_no_response_format`) and honoured here for the rest of the run."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from envscaler_core.llm.cache import body_key, request_fingerprint
from envscaler_core.llm.call import Call
from envscaler_core.llm.errors import LLMOutputInvalid
from envscaler_core.llm.repair_turns import cut_off_reason, recorded_usage, repair_turn, said, structured_answer
from envscaler_core.llm.replies import ReplyProblem
from envscaler_core.llm.structured_output import LIKELY_CAUSE, STRUCTURED_KEY, structured_sampling
from envscaler_core.prompts.base import PROMPT_HEADER, PromptSpec

O = TypeVar("O", bound=BaseModel)


class StructuredCalls:
    """`structured` for `LLMGateway` (self is the gateway)."""

    async def structured(self, prompt_spec: PromptSpec[Any, O], input: BaseModel, stage: str = "mine",
                         model: str | None = None) -> O:
        """Ask `prompt_spec` about `input`; return a validated `output_model`. Invalid replies get at
        most `repair_attempts` repair turns, then `LLMOutputInvalid` (with an `output_invalid` row)."""
        gw: Any = self
        messages = prompt_spec.render(input)
        model_name = gw.model_for(stage, model)
        fp = request_fingerprint("structured", model_name, messages, None,
                                 {**STRUCTURED_KEY, **body_key(gw.settings.extra_body)}, prompt_spec.tag)
        call = Call(fp, stage, model_name, prompt_spec.id)
        def use(hit: dict[str, Any]) -> O | None:
            try:
                return structured_answer(hit["message"], prompt_spec.output_model)
            except (ReplyProblem, ValidationError, KeyError, AttributeError, TypeError):
                return None  # a stale or foreign cache entry: the next one, else ask again

        cached = await gw._lookup(fp, use)
        if cached is not None:
            await gw._record(call, "cached")
            return cached

        async def body() -> O:
            sampling = ({} if gw._no_response_format
                        else structured_sampling(gw.settings.structured_output, prompt_spec.output_model))
            convo = list(messages)
            headers = {PROMPT_HEADER: prompt_spec.tag}
            what = f"prompt {prompt_spec.tag}"
            while True:
                exchange = await gw._complete(call, convo, None, sampling, headers, what)
                message = exchange.message
                if exchange.incomplete:  # never parsed as if complete
                    reason = cut_off_reason(exchange)
                else:
                    try:
                        out = structured_answer(message, prompt_spec.output_model)
                    except ReplyProblem as exc:
                        reason = str(exc)
                    else:
                        await gw._record(call, "ok", response={"message": message, "usage": recorded_usage(exchange)})
                        return out
                content = str(message.get("content") or "")
                if call.repairs >= gw.settings.repair_attempts:
                    await gw._record(call, "output_invalid", error=reason)
                    cause = f"; {call.format_note}" if call.format_note == LIKELY_CAUSE else ""
                    raise LLMOutputInvalid(
                        f"{what}: reply still invalid after {call.repairs} repair turn(s): {reason}{cause}",
                        f"{reason}{cause}", content)
                call.repairs += 1
                convo = [*convo, {"role": "assistant", "content": said(message)},
                         {"role": "user", "content": repair_turn(reason, exchange.incomplete)}]

        return await gw._audited(call, body)
