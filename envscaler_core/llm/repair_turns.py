"""What a structured call takes from a reply, and what the repair turn tells the model when it cannot.

Kept apart from the gateway's transport (retries, caps, audit): these are the words of the conversation
with the model, and a repair turn is only useful if it says precisely what was wrong."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from envscaler_core.llm.exchange import Exchange
from envscaler_core.llm.replies import ReplyProblem, parse_answer, reasoning_field, split_reasoning

O = TypeVar("O", bound=BaseModel)


def structured_answer(message: dict[str, Any], model: type[O]) -> O:
    """The stage's output from an assistant message (raises ReplyProblem with the precise reason)."""
    split = split_reasoning(message.get("content"), reasoning_field(message))
    refusal = message.get("refusal")
    if not split.answer and isinstance(refusal, str) and refusal.strip():
        raise ReplyProblem(f"the reply is a refusal instead of the JSON object ({refusal.strip()[:200]!r})")
    return parse_answer(split, model)


def cut_off_reason(exchange: Exchange) -> str:
    if exchange.filtered:
        return ("the endpoint's content filter, guardrail or refusal stopped the reply before it was complete "
                f"(finish_reason {exchange.finish_reason!r})")
    if exchange.unfinished:
        return ("the endpoint stopped generating before the reply was complete, each time it was asked "
                f"(finish_reason {exchange.finish_reason!r})")
    reason = (f"the reply was cut off by the output limit after {exchange.completion_tokens} tokens "
              f"(finish_reason {exchange.finish_reason!r}) before it was complete")
    return f"{reason}; {exchange.refused_room}" if exchange.refused_room else reason


def repair_turn(reason: str, cut_off: bool = False) -> str:
    if cut_off:
        return (f"Your previous reply could not be used: {reason}. Reply again with only the JSON object, "
                "without reasoning or commentary, so that it fits.")
    return (f"Your previous reply could not be used: {reason}. Reply again with exactly one JSON object that "
            "validates against the JSON Schema in the system message, and nothing else.")


def recorded_usage(exchange: Exchange) -> dict[str, int]:
    usage = exchange.usage
    return {**usage, "estimated_tokens": exchange.estimated_tokens} if exchange.estimated_tokens else usage


def said(message: dict[str, Any]) -> str:
    """What the model said, for the repair conversation: its answer without reasoning."""
    split = split_reasoning(message.get("content"), None)
    return split.answer or "(no answer outside the reasoning)"
