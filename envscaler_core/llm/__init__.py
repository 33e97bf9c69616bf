"""The LLM gateway: retries, limits, cache, accounting and budget around the `openai` SDK.

`LLMGateway` is the only object the stages talk to; the errors live in `errors` so callers can import
them without pulling in the SDK.
"""

from envscaler_core.llm.errors import (
    BudgetExceeded, LLMConfigError, LLMError, LLMOutputInvalid, LLMRequestRejected, LLMUnavailableError,
)
from envscaler_core.llm.gateway import ChatReply, LLMGateway

__all__ = [
    "BudgetExceeded", "ChatReply", "LLMConfigError", "LLMError", "LLMGateway", "LLMOutputInvalid",
    "LLMRequestRejected", "LLMUnavailableError",
]
