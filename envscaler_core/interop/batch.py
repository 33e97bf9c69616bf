"""Many items per sandbox process: the harness runs as one episode and each call carries a chunk.

Forking a jail per check would cost more than the checks themselves (EnvScaler's data has ~10 checks
per scenario, thousands of scenarios), so items go to the harness in chunks. The harness stops a call
early when its time or reply budget is spent and reports how many items it finished; the rest go in
the next call. A call the sandbox kills (timeout, crash, oversize reply) is retried on a smaller chunk
until the culprit is alone, which then gets the sandbox's error as its own result, so one hostile
item never costs its neighbours their verdict. After `max_hard_failures` such culprits in one
session, the remaining items are failed with that history instead of burning a timeout each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from envscaler_core.runtime import EnvRuntime, Episode

HARNESS_CLASS = "EnvScalerInteropHarness"
HARNESS_SOURCE = (Path(__file__).with_name("harness.py")).read_text(encoding="utf-8")
REQUEST_CHARS = 2_000_000
"""Upper bound on the JSON sent in one call (chunks are cut to stay under it)."""


SOFT_TIMEOUTS = 3
SHORT_LEASH_S = 0.25


class HarnessError(RuntimeError):
    """The harness itself misbehaved (our bug or a broken runtime), not the items it was given."""


class HarnessRunner:
    """One harness episode (opened lazily, reopened by the runtime after a kill) for one thread."""

    def __init__(self, runtime: EnvRuntime, call_timeout_s: float, *, item_timeout_s: float = 2.0,
                 max_items: int = 256, max_hard_failures: int = 3) -> None:
        self.runtime = runtime
        self.budget_s = max(0.05, 0.4 * call_timeout_s)
        self.item_timeout_s = min(item_timeout_s, 0.8 * call_timeout_s)
        self.max_items = max_items
        self.max_reply_chars = 600_000  # the sandbox caps a tool result at 1 MiB; JSON escaping adds up to 2x
        self.max_hard_failures = max_hard_failures
        self.hard_failures: list[str] = []
        self.soft_timeouts = 0
        self.calls = 0
        self._episode: Episode | None = None

    def _ep(self) -> Episode:
        if self._episode is None:
            self._episode = self.runtime.open_episode(HARNESS_SOURCE, HARNESS_CLASS, None)
        return self._episode

    def close(self) -> None:
        if self._episode is not None:
            self._episode.close()
            self._episode = None

    def __enter__(self) -> HarnessRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, method: str, items: Sequence[dict[str, Any]], fixed: dict[str, Any] | None = None,
            timeout_arg: str = "item_timeout_s") -> list[dict[str, Any]]:
        """One harness result per item, in order; a killed item's result is `{"error": ...}`, and so is
        an item the sandbox's strict JSON cannot carry (NaN in an agent's arguments, say)."""
        results: list[dict[str, Any] | None] = [None] * len(items)
        sendable, sizes = [], []
        for i, item in enumerate(items):
            try:
                sizes.append(len(json.dumps(item, allow_nan=False)))
                sendable.append(i)
            except (TypeError, ValueError) as exc:
                results[i] = {"error": f"not strict JSON, so it cannot enter the sandbox: {exc}"}
        for i, result in zip(sendable, self._run([items[i] for i in sendable], sizes, method, fixed, timeout_arg)):
            results[i] = result
        return [r if r is not None else {"error": "not run"} for r in results]

    def _run(self, items: Sequence[dict[str, Any]], sizes: list[int], method: str, fixed: dict[str, Any] | None,
             timeout_arg: str) -> list[dict[str, Any] | None]:
        results: list[dict[str, Any] | None] = [None] * len(items)
        start, limit = 0, self.max_items
        while start < len(items):
            if len(self.hard_failures) >= self.max_hard_failures:
                why = "; ".join(self.hard_failures)
                for i in range(start, len(items)):
                    results[i] = {"error": f"not run: the sandbox killed {len(self.hard_failures)} earlier items "
                                           f"of this batch ({why})", "hard": True}
                break
            end = _chunk_end(sizes, start, limit)
            args = {**(fixed or {}), "items": list(items[start:end]), "budget_s": self.budget_s,
                    timeout_arg: self.item_timeout_s, "max_chars": self.max_reply_chars}
            self.calls += 1
            out = self._ep().call(method, args)
            if out.ok:
                done = _accept(out.result, end - start, method)
                for offset, result in enumerate(out.result["results"][:done]):
                    results[start + offset] = result
                    self._count_timeouts(result)
                start += done
                limit = min(self.max_items, limit * 2)
                continue
            if out.error_kind == "schema":
                raise HarnessError(f"the sandbox refused the harness call {method}: {out.error}")
            if end - start > 1:
                limit = max(1, (end - start) // 2)
                continue
            reason = f"{out.error_kind}: {_first_line(out.error)}"
            self.hard_failures.append(reason)
            results[start] = {"error": f"the sandbox killed it ({reason})", "hard": True}
            start += 1
        return results

    def run_alone(self, method: str, item: dict[str, Any], fixed: dict[str, Any] | None = None,
                  timeout_arg: str = "item_timeout_s") -> dict[str, Any]:
        """One item in a process of its own (closed before and after), for code that must not share."""
        self.close()
        try:
            return self.run(method, [item], fixed, timeout_arg)[0]
        finally:
            self.close()

    def run_checks(self, items: Sequence[dict[str, Any]]) -> list[Any]:
        """`run_checks` items, batched, except those whose code `screen.needs_isolation` flags."""
        from envscaler_core.interop.screen import needs_isolation

        alone = {i for i, item in enumerate(items) if any(needs_isolation(src) for src in item["checks"])}
        shared = [i for i in range(len(items)) if i not in alone]
        results: list[Any] = [None] * len(items)
        for i, result in zip(shared, self.run("run_checks", [items[i] for i in shared], None, "check_timeout_s")):
            results[i] = result
        for i in sorted(alone):
            results[i] = self.run_alone("run_checks", items[i], None, "check_timeout_s")
        return results

    def _count_timeouts(self, result: Any) -> None:
        """Three items that ran into their timer in one session: the rest get a short leash (a file
        whose every check loops forever would otherwise cost the full timer per check)."""
        entries = result if isinstance(result, list) else [result]
        self.soft_timeouts += sum(1 for e in entries if isinstance(e, dict) and "timed out after" in str(e.get("error")))
        if self.soft_timeouts >= SOFT_TIMEOUTS:
            self.item_timeout_s = min(self.item_timeout_s, SHORT_LEASH_S)


def _chunk_end(sizes: list[int], start: int, limit: int) -> int:
    end, total = start, 0
    while end < len(sizes) and end - start < limit and (end == start or total + sizes[end] <= REQUEST_CHARS):
        total += sizes[end]
        end += 1
    return end


def _accept(result: Any, sent: int, method: str) -> int:
    if not isinstance(result, dict) or not isinstance(result.get("results"), list) or not isinstance(result.get("done"), int):
        raise HarnessError(f"harness {method} sent a malformed reply: {str(result)[:200]}")
    done = result["done"]
    if not 1 <= done <= sent or len(result["results"]) < done:
        raise HarnessError(f"harness {method} finished {done} of {sent} items")
    return done


def _first_line(text: str | None) -> str:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[0][:300] if lines else "no detail"


def run_many(runtime: EnvRuntime, call_timeout_s: float, jobs: Sequence[Callable[[HarnessRunner], Any]],
             threads: int, item_timeout_s: float = 2.0) -> list[Any]:
    """Run independent jobs (one per env, typically) on `threads` threads, each with its own runner."""
    from concurrent.futures import ThreadPoolExecutor

    def one(job: Callable[[HarnessRunner], Any]) -> Any:
        with HarnessRunner(runtime, call_timeout_s, item_timeout_s=item_timeout_s) as runner:
            return job(runner)

    if threads <= 1 or len(jobs) <= 1:
        return [one(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(one, jobs))
