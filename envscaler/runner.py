"""What `run`, `resume` and `demo` share: settings from flags, run ids, and running the factory flow
with one-line errors instead of tracebacks for the failures users cause (bad config, bad key, no
endpoint, a locked database)."""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from envscaler.commands._common import fail
from envscaler_core.config import ConfigError, Settings, load_settings, public_config


def new_run_id(prefix: str = "run") -> str:
    return f"{prefix}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def settings_from(config: Path | None, db: str | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    extra = dict(overrides or {})
    if db:
        extra["store"] = {"url": db}
    try:
        return load_settings(config, overrides=extra)
    except ConfigError as exc:
        fail(str(exc))


def check_sources(sources: list[Path]) -> list[str]:
    missing = [str(p) for p in sources if not p.is_file()]
    if missing:
        fail(f"source file(s) not found: {', '.join(missing)}")
    return [str(p.resolve()) for p in sources]


def preflight(settings: Settings) -> None:
    """Fail in one line, before any flow starts, on what would only fail deep inside it: no API key,
    an endpoint nothing listens on, a store that cannot be opened (e.g. a DuckDB file another process holds)."""
    import socket
    from urllib.parse import urlsplit

    from envscaler_core.llm import LLMGateway
    from envscaler_core.llm.errors import LLMConfigError
    from envscaler_core.store import Store, StoreError

    gateway = LLMGateway(settings.llm)
    try:
        gateway.api_key()
    except LLMConfigError as exc:
        fail(str(exc))
    url = urlsplit(settings.llm.base_url or "https://api.openai.com/v1")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "", port), timeout=5).close()
    except OSError as exc:
        fail(f"LLM endpoint {url.scheme}://{url.hostname}:{port} is unreachable ({exc.strerror or exc}); "
             "check OPENAI_BASE_URL, or start `envscaler mock-llm` for a dry run")
    try:
        Store.from_url(settings.store.url).close()
    except StoreError as exc:
        fail(str(exc))


def run_factory(settings: Settings, run_id: str, sources: list[str], stages: list[str] | None = None) -> dict[str, Any]:
    """Run the factory flow in this process; user-caused failures become one line and exit 2."""
    from envscaler_core.llm.errors import LLMConfigError, LLMRequestRejected, LLMUnavailableError
    from envscaler_core.store import StoreError
    from flows.factory import factory_flow

    preflight(settings)
    try:
        return asyncio.run(factory_flow(run_id=run_id, sources=sources, config=public_config(settings),
                                        stages=stages))
    except (LLMConfigError, LLMUnavailableError, LLMRequestRejected, StoreError) as exc:
        fail(f"run {run_id} stopped: {exc} (resume with `envscaler resume {run_id}`)")
