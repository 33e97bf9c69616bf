"""One place that turns a model's reply into what a stage asked for.

Every parser of model output in the factory goes through here: the gateway's structured path
(`parse_answer`), its chat path (`normalise_assistant`), the rollout loop (`parse_arguments`), and
every stage that takes Python source from a reply (`extract_code`). Reasoning is set aside first
(`split_reasoning`), never parsed as the answer; a problem is a `ReplyProblem` whose text goes into
the repair turn verbatim. `docs/llm.md` ("What real models send") lists each accepted form and why.
"""

from envscaler_core.llm.replies.code import defines, extract_code, parse_python
from envscaler_core.llm.replies.reasoning import (
    REASONING_FIELDS, SplitReply, clean_text, content_text, reasoning_field, split_reasoning,
)
from envscaler_core.llm.replies.structured import ReplyProblem, describe_validation, parse_answer
from envscaler_core.llm.replies.tool_calls import (
    answer_text, canonical_arguments, checked_arguments, normalise_assistant, parse_arguments, sent_arguments,
)

__all__ = [
    "REASONING_FIELDS", "ReplyProblem", "SplitReply", "answer_text", "canonical_arguments", "checked_arguments", "clean_text", "content_text", "defines",
    "describe_validation", "extract_code", "normalise_assistant", "parse_answer", "parse_arguments",
    "parse_python", "reasoning_field", "sent_arguments", "split_reasoning",
]
