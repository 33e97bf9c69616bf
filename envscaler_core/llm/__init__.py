"""The LLM gateway: retries, limits, cache, accounting and budget around the `openai` SDK.

`LLMGateway` is the only object the stages talk to; the errors live in `errors` so callers can import
them without pulling in the SDK. `replies` (what a model's answer means) is a leaf the record models
use too, so the gateway is imported lazily here: importing `envscaler_core.llm.replies` must not pull
in the SDK and the config.
"""

from typing import Any

from envscaler_core.llm.errors import (
    BudgetExceeded, LLMConfigError, LLMError, LLMOutputInvalid, LLMRequestRejected, LLMUnavailableError,
)

__all__ = [
    "BudgetExceeded", "ChatReply", "LLMConfigError", "LLMError", "LLMGateway", "LLMOutputInvalid",
    "LLMRequestRejected", "LLMUnavailableError",
]


def __getattr__(name: str) -> Any:
    if name in ("ChatReply", "LLMGateway"):
        from envscaler_core.llm import gateway

        return getattr(gateway, name)
    raise AttributeError(f"module 'envscaler_core.llm' has no attribute {name!r}")
