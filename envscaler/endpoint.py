"""The LLM endpoint, checked before a run writes anything: a missing key, an endpoint nothing listens on,
or a key the endpoint refuses is one line, before any flow starts.

A resume is different: everything it still needs may already be in the LLM cache (an interrupted export,
a run whose remaining calls were made before the kill), so there the same problems are a warning and
the run goes ahead on cached answers, stopping at the first request that needs the endpoint.

Whether the endpoint is the bundled MOCK is noted too (its `/models` entries are owned by
`envscaler-mock`): its answers are scripted and its "costs" are list prices applied to scripted tokens,
so summaries label them as illustrative."""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from envscaler.commands._common import fail
from envscaler_core.config import Settings

MOCK_OWNER = "envscaler-mock"
DEFAULT_BASE = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Endpoint:
    base: str
    mock: bool = False
    problem: str | None = None


def probe_endpoint(settings: Settings) -> Endpoint:
    """Key, reachability and key acceptance, in the order a user fixes them; never exits."""
    from envscaler_core.llm import LLMGateway
    from envscaler_core.llm.errors import LLMConfigError

    base = settings.llm.base_url or DEFAULT_BASE
    try:
        key = LLMGateway(settings.llm).api_key()
    except LLMConfigError as exc:
        return Endpoint(base, problem=str(exc))
    url = urlsplit(base)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "", port), timeout=5).close()
    except OSError as exc:
        return Endpoint(base, problem=f"LLM endpoint {url.scheme}://{url.hostname}:{port} is unreachable "
                                      f"({exc.strerror or exc}); check OPENAI_BASE_URL (or llm.base_url), or start "
                                      "`envscaler mock-llm` for a dry run")
    try:  # listing models is free; a refused key answers 401/403 here on OpenAI-compatible servers
        answer = httpx.get(base.rstrip("/") + "/models", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    except httpx.HTTPError:
        return Endpoint(base)  # reachable but slow or odd: the run's own retries and errors take over
    if answer.status_code in (401, 403) and not _scope_refusal(answer):
        said = _words(answer)
        return Endpoint(base, problem=f"the LLM endpoint {base} rejected the API key (HTTP {answer.status_code}"
                                      f"{': ' + repr(said) if said else ''}); check OPENAI_API_KEY (or llm.api_key)")
    # A key that may not list models (OpenAI's restricted keys: "Missing scopes: api.model.read") may still
    # chat, and a web page at /models (a web UI's catch-all in front of a working chat route) says nothing
    # about the chat route: neither stops the run (an outside check found both did); the first chat call decides.
    if answer.status_code == 200 and _is_web_page(answer) and (hint := _under_v1(base, key)) is not None:
        return Endpoint(base, problem=hint)
    return Endpoint(base, mock=_is_mock(answer))


def _is_web_page(answer: httpx.Response) -> bool:
    kind = answer.headers.get("content-type", "").lower()
    return "text/html" in kind or answer.text.lstrip()[:15].lower().startswith(("<!doctype", "<html"))


def _under_v1(base: str, key: str) -> str | None:
    """The one web-page case that is a verdict: a base URL without /v1 whose /v1/models lists models."""
    if base.rstrip("/").endswith("/v1"):
        return None
    try:
        listed = httpx.get(base.rstrip("/") + "/v1/models", headers={"Authorization": f"Bearer {key}"}, timeout=10)
        data = listed.json().get("data") if listed.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    return (f"the LLM endpoint {base} answers {base.rstrip('/')}/models with a web page, and "
            f"{base.rstrip('/')}/v1/models with its models: set OPENAI_BASE_URL (or llm.base_url) to "
            f"{base.rstrip('/')}/v1")


_SCOPE_WORDS = re.compile(r"scopes?\b|permissions?\b|not (?:allowed|permitted) to (?:list|read)", re.IGNORECASE)


def _words(answer: httpx.Response) -> str:
    """The server's own words in an error answer (its JSON message, else its text), one line, short."""
    try:
        body = answer.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    found = (error.get("message") if isinstance(error, dict) else error) if error is not None else None
    if not isinstance(found, str) and isinstance(body, dict):
        found = body.get("message") or body.get("detail")
    text = found if isinstance(found, str) else re.sub(r"<[^>]+>", " ", answer.text)  # a page: its words
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _scope_refusal(answer: httpx.Response) -> bool:
    """A 401/403 about what the key may do (listing models), not about the key itself."""
    return bool(_SCOPE_WORDS.search(_words(answer)))


def _is_mock(answer: httpx.Response) -> bool:
    try:
        models = answer.json().get("data") or []
    except (ValueError, AttributeError):
        return False
    return bool(models) and all(isinstance(m, dict) and m.get("owned_by") == MOCK_OWNER for m in models)


def base_url_problem(settings: Settings) -> str | None:
    """What is wrong with llm.base_url as a URL (no http:// or https://, no host), naming the value and
    where it came from; None when it is one. `127.0.0.1:8000/v1` used to be reported as the unreachable
    endpoint `://None:80`, and `localhost:8000` as `localhost://None:80`."""
    from envscaler_core.config import env_setting_names

    base = settings.llm.base_url
    if base is None:
        return None
    url = urlsplit(base.strip())
    try:
        url.port  # noqa: B018 - raises on a port that is no number
        fine = url.scheme.lower() in ("http", "https") and bool(url.hostname)
    except ValueError:
        fine = False
    if fine:
        return None
    where = env_setting_names().get(("llm", "base_url")) or "llm.base_url"
    bare = base.strip().split("://", 1)[-1].lstrip("/")
    example = f"; e.g. http://{bare}" if bare and url.scheme.lower() not in ("http", "https") else ""
    return (f"LLM endpoint {base!r} ({where}) is not a URL the factory can call: it needs http:// or https://, a host "
            f"and, if any, a numeric port{example}")


def check_endpoint(settings: Settings, *, required: bool = True, quiet: bool = False) -> Endpoint:
    """`required`: a problem is exit 2 with one line. Otherwise (a resume) it is a warning on stderr; an
    endpoint that is no URL at all is exit 2 either way (no cached answer makes it callable)."""
    malformed = base_url_problem(settings)
    if malformed is not None:
        fail(malformed)
    endpoint = probe_endpoint(settings)
    if endpoint.problem is not None:
        if required:
            fail(endpoint.problem)
        if not quiet:
            import typer

            typer.echo(f"warning: {endpoint.problem}. Resuming on cached answers only: the run stops at the first "
                       "request that needs the endpoint.", err=True)
    return endpoint
