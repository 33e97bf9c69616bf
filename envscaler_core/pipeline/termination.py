"""SIGTERM for a flow run that a command line started: the command's handler, not Prefect's.

Prefect's flow engine installs its own SIGTERM handler around every flow run (`capture_sigterm`): it
raises `TerminationSignal` wherever the main thread happens to be. Inside a task run that is recorded as
that task's crash and the run goes on (an outside check saw a `kill PID` end as a completed run, or,
before the CLI had a handler, exit 143 without a word and the run left `running`). A CLI that wants
SIGTERM handled like Ctrl-C registers its handler here, and the flow body puts it back in place once
Prefect's is installed; Prefect restores the CLI's handler when the flow run ends. Flows run by a Prefect
worker register nothing, so Prefect's own cancellation is untouched there."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

Handler = Callable[[int, Any], None]
_registered: list[Handler] = []


def register(handler: Handler | None) -> None:
    """The SIGTERM handler flow runs in this process should use (None: Prefect's, the default)."""
    _registered[:] = [handler] if handler is not None else []


def reassert() -> None:
    """Put the registered SIGTERM handler back (call at the start of a flow body; a no-op off the main
    thread, where signals cannot be set, and when nothing is registered)."""
    if not _registered or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not _registered[0]:
        signal.signal(signal.SIGTERM, _registered[0])
