"""What the CLI lets through to the terminal: one line per problem, no traceback unless `--debug`.

Prefect logs every task failure with its traceback and every state change at INFO on the console;
the CLI shows its own progress and reports failures itself, so Prefect's console handler keeps only
warnings, cut to their first line, and drops the engine's failure reports (they stay in the Prefect
API and its dashboard, and `--debug` brings them all back)."""

from __future__ import annotations

import logging
import os
from typing import Any

DEBUG_ENV = "ENVSCALER_DEBUG"


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0", "false")


class OneLineFormatter(logging.Formatter):
    """Format with the wrapped formatter, without the traceback, and keep the first line."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            text = self.inner.format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
        return text.splitlines()[0] if text else text


class EngineReportFilter(logging.Filter):
    """Drop Prefect's own failure reports: the CLI prints the one line that matters."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return False
        message = record.getMessage()
        return not (record.exc_info or message.startswith(("Finished in state", "Encountered exception",
                                                           "Crash detected", "Task run failed with exception")))


def _console_handlers() -> list[Any]:
    from prefect.logging.handlers import PrefectConsoleHandler

    names = [""] + [n for n in logging.root.manager.loggerDict if n.startswith(("prefect", "uvicorn"))]
    found = []
    for name in names:
        logger = logging.getLogger(name)
        found += [h for h in logger.handlers if isinstance(h, PrefectConsoleHandler) and h not in found]
    return found


def quiet_prefect_console() -> None:
    """Apply the module docstring's policy (no-op under --debug). Call after Prefect is imported."""
    if debug_enabled():
        return
    for handler in _console_handlers():
        if not any(isinstance(f, EngineReportFilter) for f in handler.filters):
            handler.addFilter(EngineReportFilter())
            handler.setFormatter(OneLineFormatter(handler.formatter))


def prefect_cli_environment() -> None:
    """Settings for Prefect in this process, set before it is imported: no telemetry, no update checks."""
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
