"""Blocking forms of the gateway's calls, for scripts and a REPL.

Each `*_sync` method runs its async twin in a fresh event loop and closes the gateway's HTTP clients
before that loop ends (they belong to it). Inside a running loop they refuse: awaiting the async
method is the only way there."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from envscaler_core.llm.call import ChatReply
    from envscaler_core.prompts.base import ChatPrompt, PromptSpec

T = TypeVar("T")
O = TypeVar("O", bound=BaseModel)


class SyncCalls:
    """Mixed into `LLMGateway`, whose `structured`, `chat`, `embed` and `aclose` these call."""

    def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("the *_sync gateway methods cannot run inside an event loop; await the async method")

        async def main() -> T:
            try:
                return await make()
            finally:
                await self.aclose()  # type: ignore[attr-defined]

        return asyncio.run(main())

    def structured_sync(self, prompt_spec: PromptSpec[Any, O], input: BaseModel, stage: str = "mine",
                        model: str | None = None) -> O:
        return self._run(lambda: self.structured(prompt_spec, input, stage=stage, model=model))  # type: ignore[attr-defined]

    def chat_sync(self, messages: Sequence[dict[str, Any]], prompt: ChatPrompt | None = None, stage: str = "agent",
                  tools: list[dict[str, Any]] | None = None, model: str | None = None, sample: int = 0) -> ChatReply:
        return self._run(lambda: self.chat(messages, prompt=prompt, stage=stage, tools=tools,  # type: ignore[attr-defined]
                                           model=model, sample=sample))

    def embed_sync(self, texts: Sequence[str], stage: str = "embedding", model: str | None = None) -> list[list[float]]:
        return self._run(lambda: self.embed(texts, stage=stage, model=model))  # type: ignore[attr-defined]
