"""The gateway's embeddings calls: batched, each batch cached and accounted like any call. Mixed into
`LLMGateway`, whose cache lookup, audit, HTTP retries and accounting these use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envscaler_core.llm.cache import request_fingerprint
from envscaler_core.llm.call import Call
from envscaler_core.llm.embeddings import EmbeddingsInvalid, read_vectors
from envscaler_core.llm.errors import LLMPromptRefused, LLMRequestRejected, LLMUnavailableError
from envscaler_core.llm.exchange import estimate_tokens
from envscaler_core.llm.retry import answer_or_error

EMBED_BATCH = 512  # inputs per embeddings request (the API allows 2048; smaller keeps requests light)


class EmbedCalls:
    """`embed` for `LLMGateway` (self is the gateway)."""

    settings: Any
    endpoint: str

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
        hit = await self._lookup(fp)
        if hit is not None and isinstance(hit.get("embeddings"), list) and len(hit["embeddings"]) == len(texts):
            await self._record(call, "cached")
            return [list(v) for v in hit["embeddings"]]

        async def body() -> list[list[float]]:
            try:
                resp = await self._send(call, f"embeddings ({len(texts)} texts)", lambda c: answer_or_error(
                    c.embeddings.create(model=model_name, input=texts, encoding_format="float"), "data"))
            except LLMPromptRefused as exc:  # a batch of the run's topic texts is no one item: the run stops
                raise LLMRequestRejected(
                    f"LLM endpoint {self.settings.base_url} refused embeddings ({len(texts)} texts): {exc.reason}; "
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
                raise LLMUnavailableError(f"LLM endpoint {self.endpoint} answered embeddings ({len(texts)} texts) "
                                          f"with a body that is not usable: {exc}") from None
            await self._record(call, "ok", response={"embeddings": vectors})
            return vectors

        return await self._audited(call, body)
