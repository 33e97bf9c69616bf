"""Server replies that say a request can never succeed on this server as it runs: the server lacks a
feature the request needs (tool calls without llama.cpp's --jinja or vLLM's auto tool choice, a chat
template that raises, a model without tools, no embeddings at all).

Such a reply is a refusal of the request's form, whatever its status: llama.cpp sends some as HTTP 500,
which looked like an outage and was retried until the run stopped with "retry later" (an outside check:
"tools param requires --jinja flag" retried 4 times, and older builds' 500 "Unsupported param: tools" retried
7 times; the fix is on the server side). One row per wording,
with the server it came from and what to change there, so the one-line error says it."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ServerRefusal:
    server: str  # the server (and version) the wording came from
    example: str  # its text, as that server sends it
    pattern: str  # a regular expression, matched case-insensitively anywhere in the server's message
    advice: str  # what to change on the server side


NO_EMBEDDINGS = (r"(?:not|n't) support (?:the )?embeddings?|--embeddings?\b|not an embedding model|"
                 r"embeddings? (?:api |endpoint )?(?:is |are )?not (?:supported|enabled|available)")
"""The words of a server saying it serves no embeddings (any status)."""

SERVER_REFUSALS: tuple[ServerRefusal, ...] = (
    ServerRefusal("llama.cpp server", "tools param requires --jinja flag", r"requires? (?:the )?--jinja",
                  "restart llama-server with --jinja (tool calls need the model's Jinja chat template)"),
    ServerRefusal("llama.cpp server (late 2024 builds, before --jinja existed)", "Unsupported param: tools",
                  r"unsupported param(?:eter)?s?:? *'?(?:tools|tool_choice)\b",
                  "this llama-server build cannot take tool calls: upgrade llama.cpp and restart llama-server with "
                  "--jinja"),
    ServerRefusal("llama.cpp server (--jinja)", "Jinja Exception: Conversation roles must alternate "
                  "user/assistant/user/assistant/...", r"jinja|chat[ _]template|template (?:error|exception)|"
                  r"raise_exception|roles must alternate",
                  "the model's chat template refuses this conversation: give the server a template that takes "
                  "tool calls and system turns (llama.cpp: --jinja --chat-template-file <file>; vLLM: --chat-template "
                  "<file>) or serve a model whose template does"),
    ServerRefusal("vLLM (0.5+)", "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to "
                  "be set", r"--enable-auto-tool-choice|tool[-_ ]call[-_ ]parser",
                  "restart vLLM with --enable-auto-tool-choice --tool-call-parser <the model's parser, e.g. hermes>"
                  " (SGLang: --tool-call-parser)"),
    ServerRefusal("Ollama (0.3+), LM Studio", "registry.ollama.ai/library/gemma:2b does not support tools",
                  r"(?:not|n't) support (?:tools|tool[_ ]?(?:calls?|calling|choice|use)|function[_ ]?calling|"
                  r"functions)\b",
                  "serve a model that supports tool calls (Ollama: one tagged `tools`) or turn tool calling on "
                  "in the server"),
    ServerRefusal("LiteLLM proxy (1.x)", "litellm.UnsupportedParamsError: ollama does not support parameters: "
                  "['tools'], for model=gemma. To drop these, set `litellm.drop_params=True`",
                  r"unsupportedparamserror|does not support parameters",
                  "on the LiteLLM proxy, route this model to a deployment that takes the parameter "
                  "(or set drop_params, which drops it silently)"),
    ServerRefusal("vLLM (chat model), llama.cpp without --embeddings, Ollama", "This server does not support "
                  "embeddings. Start it with --embeddings", NO_EMBEDDINGS,
                  "this server serves no embeddings: start it with embeddings (llama.cpp: --embeddings) or "
                  "point ENVSCALER_LLM__EMBEDDING_BASE_URL (llm.embedding_base_url) at one that has them"),
)

_COMPILED = tuple((re.compile(row.pattern, re.IGNORECASE), row) for row in SERVER_REFUSALS)
_NO_EMBEDDINGS = re.compile(NO_EMBEDDINGS, re.IGNORECASE)


def server_refusal(text: str | None) -> ServerRefusal | None:
    """The row whose wording `text` (the server's message) has; None when it has none."""
    if not text:
        return None
    return next((row for pattern, row in _COMPILED if pattern.search(text)), None)


def says_no_embeddings(status: int | None, text: str | None) -> bool:
    """An embeddings request refused because the server serves none: a 404 (no route), 405 (the route
    takes no POST: TGI), 501 (Not Implemented), or any refusal in the words of `NO_EMBEDDINGS` (vLLM's
    400 "The model does not support Embeddings API", llama.cpp's 501 "... Start it with --embeddings")."""
    return status in (404, 405, 501) or bool(text and _NO_EMBEDDINGS.search(text))
