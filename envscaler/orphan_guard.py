"""Run a Python module as a child that stops when the process that started it is gone.

The temporary Prefect server runs in its own session, so that a terminal's Ctrl-C does not kill it while
the flow still reports to it; but then nothing stops it when its parent is SIGKILLed, and it would listen
forever under pid 1. `python -m envscaler.orphan_guard PARENT_PID MODULE ARGS...` runs MODULE as
`__main__` with a thread that sends the process SIGTERM (the module's own graceful stop) once its
parent is no longer PARENT_PID, and SIGKILL if it has not exited 10 s later."""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import time


def _watch(parent: int, every_s: float = 0.5, grace_s: float = 10.0) -> None:
    while os.getppid() == parent:
        time.sleep(every_s)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace_s)
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or not argv[0].isdigit():
        sys.exit("usage: python -m envscaler.orphan_guard PARENT_PID MODULE [ARGS...]")
    parent, module = int(argv[0]), argv[1]
    threading.Thread(target=_watch, args=(parent,), name="orphan-guard", daemon=True).start()
    sys.argv = [module, *argv[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
