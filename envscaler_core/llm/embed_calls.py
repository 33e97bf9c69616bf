"""The gateway's embeddings calls: batched, each batch cached and accounted like any call. Mixed into
`LLMGateway`, whose cache lookup, audit, HTTP retries and accounting these use.

Many chat endpoints serve no embeddings (DeepSeek, Anthropic, Groq, a chat-only vLLM or SGLang):
`llm.embedding_base_url` (and `llm.embedding_api_key`) send these requests to another endpoint, through
a client of their own, and an endpoint that has no embeddings is named with the setting that fixes it."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from typing import Any

import openai

from envscaler_core.llm.cache import request_fingerprint
from envscaler_core.llm.call import Call
from envscaler_core.llm.embeddings import EmbeddingsInvalid, read_vectors
from envscaler_core.llm.errors import LLMPromptRefused, LLMRequestRejected, LLMUnavailableError
from envscaler_core.llm.errors import CHAT_ENDPOINT, LLMConfigError, Via
from envscaler_core.llm.exchange import estimate_tokens, is_loopback
from envscaler_core.llm.retry import answer_or_error
from envscaler_core.llm.server_refusals import says_no_embeddings

EMBEDDINGS_PROBE = "envscaler: does this endpoint serve embeddings?"
EMBED_BATCH = 512  # inputs per embeddings request (the API allows 2048; smaller keeps requests light)


class EmbedCalls:
    """`embed` for `LLMGateway` (self is the gateway)."""

    settings: Any
    endpoint: str
    _embedding_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]

    @property
    def embedding_endpoint(self) -> str:
        return self.settings.embedding_base_url or self.endpoint

    def _embedding_via(self) -> Via:
        """The settings an embeddings request's error names: the embedding ones when they are set (an
        unreachable embedding_base_url was blamed on the chat endpoint, a 401 on OPENAI_API_KEY)."""
        url = ("ENVSCALER_LLM__EMBEDDING_BASE_URL / llm.embedding_base_url" if self.settings.embedding_base_url
               else CHAT_ENDPOINT.url)
        if self.settings.embedding_api_key:
            key = "ENVSCALER_LLM__EMBEDDING_API_KEY / llm.embedding_api_key"
        elif self.settings.embedding_base_url:
            key = ("ENVSCALER_LLM__EMBEDDING_API_KEY / llm.embedding_api_key (unset: the chat key, OPENAI_API_KEY / "
                   "llm.api_key, is sent)")
        else:
            key = CHAT_ENDPOINT.key
        return Via(url=url, key=key)

    def _embedding_client(self, chat_client: openai.AsyncOpenAI) -> openai.AsyncOpenAI:
        """The chat client, or (with `llm.embedding_base_url`) this loop's client of the embeddings endpoint."""
        url = self.settings.embedding_base_url
        if not url:
            return chat_client
        if not hasattr(self, "_embedding_clients"):
            self._embedding_clients = weakref.WeakKeyDictionary()
        loop = asyncio.get_running_loop()
        client = self._embedding_clients.get(loop)
        if client is None:
            key = self.settings.embedding_api_key or self.settings.api_key or ("mock" if is_loopback(url) else None)
            if key is None:
                raise LLMConfigError(f"no API key for the embeddings endpoint {url}: set ENVSCALER_LLM__EMBEDDING_API_KEY "
                                     "(llm.embedding_api_key) or OPENAI_API_KEY (llm.api_key)")
            client = openai.AsyncOpenAI(api_key=key, base_url=url, timeout=self.settings.timeout_s, max_retries=0)
            self._embedding_clients[loop] = client
        return client

    async def _close_embedding_client(self) -> None:
        """Close this loop's embeddings client, if it has one (others close with their loops)."""
        clients = getattr(self, "_embedding_clients", None)
        client = clients.pop(asyncio.get_running_loop(), None) if clients is not None else None
        if client is not None:
            await client.close()

    async def check_embeddings(self) -> None:
        """Ask for one embedding of a fixed text: a run calls this before paying for Stage 1's chat
        requests, so an endpoint without embeddings stops it there, not at the selection after them.
        Cached like any call (a fixed request), so it is paid once per store and embedding model."""
        await self.embed([EMBEDDINGS_PROBE], stage="embedding")

    async def embed(self, texts: Sequence[str], stage: str = "embedding", model: str | None = None) -> list[list[float]]:
        """Embedding vectors in input order; batches of `EMBED_BATCH`, each cached on its own."""
        model_name = self.model_for(stage, model)
        texts = list(texts)
        out: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            out.extend(await self._embed_batch(texts[start:start + EMBED_BATCH], stage, model_name))
        return out

    async def _embed_batch(self, texts: list[str], stage: str, model_name: str) -> list[list[float]]:
        fp = request_fingerprint("embed", model_name, texts, None, {}, None)
        call = Call(fp, stage, model_name, None)
        hit = await self._lookup(fp, lambda answer: answer if isinstance(answer.get("embeddings"), list)
                                 and len(answer["embeddings"]) == len(texts) else None)
        if hit is not None:
            await self._record(call, "cached")
            return [list(v) for v in hit["embeddings"]]

        async def body() -> list[list[float]]:
            try:
                resp = await self._send(call, f"embeddings ({len(texts)} texts)", lambda c: answer_or_error(
                    self._embedding_client(c).embeddings.create(model=model_name, input=texts, encoding_format="float"),
                    "data"), endpoint=self.embedding_endpoint, via=self._embedding_via())
            except LLMRequestRejected as exc:
                if not says_no_embeddings(exc.status_code, exc.detail):  # 404/405/501, or saying so
                    raise
                raise LLMRequestRejected(self._no_embeddings(model_name, len(texts), exc), exc.status_code,
                                         exc.detail) from None
            except LLMPromptRefused as exc:  # a batch of the run's topic texts is no one item: the run stops
                raise LLMRequestRejected(
                    f"LLM endpoint {self.embedding_endpoint} refused embeddings ({len(texts)} texts): {exc.reason}; "
                    "a batch of the run's topic texts is no one item, so the run stops", exc.status_code,
                    exc.detail) from None
            reported = getattr(getattr(resp, "usage", None), "prompt_tokens", None)
            if reported is None:
                estimated = estimate_tokens(sum(len(t) for t in texts))
                self._count(call, estimated, 0, estimated)
            else:
                self._count(call, int(reported), 0)
            try:
                vectors = read_vectors(resp, len(texts))
            except EmbeddingsInvalid as exc:
                raise LLMUnavailableError(f"LLM endpoint {self.embedding_endpoint} answered embeddings ({len(texts)} texts) "
                                          f"with a body that is not usable: {exc}") from None
            await self._record(call, "ok", response={"embeddings": vectors})
            return vectors

        return await self._audited(call, body)

    def _no_embeddings(self, model_name: str, count: int, exc: LLMRequestRejected) -> str:
        """The endpoint has no embeddings, or not for this model (a 404, 405 or 501, or a refusal saying so: vLLM
        serving a chat model answers 400, llama.cpp without --embeddings 501); say which setting fixes it.
        Before, only a 404 got this advice (an outside check)."""
        said = f"HTTP {exc.status_code}: {exc.detail}" if exc.detail else f"HTTP {exc.status_code}"
        where = ("llm.embedding_base_url (ENVSCALER_LLM__EMBEDDING_BASE_URL)" if self.settings.embedding_base_url
                 else "llm.base_url")
        return (f"LLM endpoint {self.embedding_endpoint} has no embeddings for model {model_name!r} (embeddings, "
                f"{count} texts; {said}): the endpoint in {where} serves no /embeddings or not this model; point "
                "ENVSCALER_LLM__EMBEDDING_BASE_URL (llm.embedding_base_url, key in ENVSCALER_LLM__EMBEDDING_API_KEY) at "
                "an endpoint that has embeddings and name its model in ENVSCALER_LLM__MODELS__EMBEDDING "
                "(llm.models.embedding)")
