"""What a provider's automatic prefix cache would serve, so the factory's cache-friendliness is measured.

OpenAI (and Azure, xAI, DeepSeek, vLLM and SGLang with prefix caching on) reuse the computed prefix of
a prompt when a later request starts with exactly the same tokens. OpenAI's rules, which this follows:
only prompts of at least 1,024 tokens are cached, hits come in 128-token increments (1024, 1152, ...),
the match must be exact from the first token, tools come before the messages, and entries expire after
minutes of disuse. vLLM/SGLang work the same way at a finer block size and without the minimum.

The mock counts ~4 characters per token, so a block is 128 tokens = 512 characters of the request's
text (tools, then each message's role and content in order). Each block is keyed by a hash chained
over every block before it, so a block can only hit when everything before it matched too. A request
is looked up, and its blocks stored, when its answer is produced (after the injected latency): it
sees the prefixes of every request answered before it, as on a server whose prefill finished before
the next request arrived. Only prompts of at least the minimum are stored, as OpenAI does.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Any

CHARS_PER_TOKEN = 4


def prompt_text(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The request as the provider's prefix sees it: model, tools, then messages in order."""
    parts = [f"<model {model}>"]
    if tools:
        parts.append("<tools>" + json.dumps(tools, separators=(",", ":"), sort_keys=False))
    for m in messages:
        content = m.get("content")
        text = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
        parts.append(f"<{m.get('role')}>{text}")
        if m.get("tool_calls"):
            parts.append(json.dumps(m["tool_calls"], separators=(",", ":")))
        if m.get("tool_call_id"):
            parts.append(f"<id {m['tool_call_id']}>")
    return "".join(parts)


class PrefixCache:
    """`lookup` gives the cached tokens of a request; `store` makes its blocks available to later ones."""

    def __init__(self, min_tokens: int = 1024, block_tokens: int = 128, capacity_blocks: int = 500_000,
                 ttl_s: float = 600.0) -> None:
        self.min_tokens, self.block_tokens = min_tokens, block_tokens
        self.block_chars = block_tokens * CHARS_PER_TOKEN
        self.capacity_blocks, self.ttl_s = capacity_blocks, ttl_s
        self._blocks: OrderedDict[bytes, float] = OrderedDict()  # chained block hash -> last use
        self._lock = threading.Lock()

    def keys(self, text: str) -> list[bytes]:
        """Chained hashes of every full block of `text`."""
        out, prev = [], b""
        for start in range(0, len(text) - self.block_chars + 1, self.block_chars):
            prev = hashlib.blake2b(prev + text[start:start + self.block_chars].encode("utf-8"), digest_size=16).digest()
            out.append(prev)
        return out

    def serve(self, text: str, prompt_tokens: int) -> int:
        """Cached tokens of a request with this prompt text, which is cached from now on."""
        keys = self.keys(text)
        cached = self.lookup(keys, prompt_tokens)
        self.store(keys, prompt_tokens)
        return cached

    def lookup(self, keys: list[bytes], prompt_tokens: int) -> int:
        """Cached tokens for a request whose blocks are `keys`: the longest run of leading blocks already
        cached, in block increments, 0 below the minimum; never more than the prompt itself."""
        now = time.monotonic()
        matched = 0
        with self._lock:
            for key in keys:
                seen = self._blocks.get(key)
                if seen is None or now - seen > self.ttl_s:
                    break
                self._blocks.move_to_end(key)
                self._blocks[key] = now
                matched += 1
        tokens = matched * self.block_tokens
        tokens = min(tokens, prompt_tokens - prompt_tokens % self.block_tokens)
        return tokens if tokens >= self.min_tokens else 0

    def store(self, keys: list[bytes], prompt_tokens: int) -> None:
        if prompt_tokens < self.min_tokens:
            return
        now = time.monotonic()
        with self._lock:
            for key in keys:
                self._blocks[key] = now
                self._blocks.move_to_end(key)
            while len(self._blocks) > self.capacity_blocks:
                self._blocks.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._blocks.clear()
