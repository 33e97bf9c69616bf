"""Long blocking jobs of validation (programmatic passes) run on a thread of their own, not in the
event loop's shared executor, and come back to the caller like `asyncio.to_thread` results do."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from envscaler_core.validation.own_thread import in_own_thread

REQUEST = contextvars.ContextVar("request", default="none")


def _where(x: int) -> tuple[int, str, str]:
    return x * 2, threading.current_thread().name, REQUEST.get()


def test_the_result_comes_back_from_a_named_thread_with_the_callers_context() -> None:
    async def main() -> tuple[int, str, str]:
        REQUEST.set("candidate-7")
        return await in_own_thread(_where, 21, name="programmatic-pass")

    assert asyncio.run(main()) == (42, "programmatic-pass", "candidate-7")


def test_the_jobs_exception_is_raised_in_the_caller() -> None:
    def broken() -> None:
        raise ValueError("probe plan failed")

    with pytest.raises(ValueError, match="probe plan failed"):
        asyncio.run(in_own_thread(broken))


def test_a_long_job_leaves_the_shared_executor_free() -> None:
    release = threading.Event()

    async def main() -> str:
        loop = asyncio.get_running_loop()
        from concurrent.futures import ThreadPoolExecutor

        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
        long_job = asyncio.ensure_future(in_own_thread(release.wait))
        short = await asyncio.to_thread(lambda: "short call ran")  # would wait forever behind a to_thread job
        release.set()
        await long_job
        return short

    assert asyncio.run(main()) == "short call ran"
