"""The one door to the model: every LLM request of the factory goes through `LLMGateway`.

It owns what every stage would otherwise re-implement badly: retries with backoff (the SDK's own are
off), a concurrency cap and a per-minute pacer, a response cache keyed by request content (so a resumed
run never pays twice), token/cost accounting per stage with a run budget, a bounded repair loop for
structured replies, and one-line errors. It talks to any OpenAI-compatible endpoint through the official
`openai` SDK; the bundled mock LLM is just another endpoint.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from typing import Any, Awaitable, Callable, TypeVar

import openai

from envscaler_core.config import BudgetSettings, LLMSettings, StageModels
from envscaler_core.llm.accounting import Ledger
from envscaler_core.llm.audit import open_audit
from envscaler_core.llm.cache import CallStore, KnownAnswers, MemoryCache
from envscaler_core.llm.errors import (
    CHAT_ENDPOINT, LLMConfigError, LLMNoAnswer, LLMOutputInvalid, LLMPromptRefused, LLMRequestRejected,
    LLMUnavailableError, Via,
)
from envscaler_core.llm.exchange import (
    MAX_LENGTH_RETRIES, ROOM_PARAMETERS, Exchange, billed_usage, estimate_tokens, failed_generation, is_loopback,
    more_room, needs_reasoning_back, outgoing, parse_completion, read_response, request_body, room_parameter,
)
from envscaler_core.llm.limits import PerLoopSemaphore, RatePacer
from envscaler_core.llm.sent_tools import sent_tools
from envscaler_core.llm.call import Call, stop_and_wait
from envscaler_core.llm.chat_calls import ChatCalls
from envscaler_core.llm.embed_calls import EmbedCalls
from envscaler_core.llm.model_check import ModelCheck, model_setting
from envscaler_core.llm.structured_calls import StructuredCalls
from envscaler_core.llm.sync_calls import SyncCalls
from envscaler_core.llm.structured_output import (
    LIKELY_CAUSE, SUSPECT, blank_reply, refuses_response_format, without_response_format)
from envscaler_core.llm.retry import (
    AttemptTimeout, BadAnswer, backoff_delay, classify, completion_or_error, give_up, provider_text,
    unsupported_parameter,
)
from envscaler_core.models.llm import LLMCall, LLMCallStatus

T = TypeVar("T")

DEFAULT_ENDPOINT = "https://api.openai.com/v1"
STOP_GRACE_S = 5.0
"""When the run stops (its in-flight work is cancelled), how long an answer already on its way is still
waited for, at most (and never past its attempt's `llm.timeout_s`), so it is recorded and a resume does
not pay for it again."""
SETTLE_RECORD_S = 1.0
"""Beyond the grace, how long `aclose` waits for the calls it stopped to record what arrived."""
STOPPED = "the run stopped before this call finished"


class _ReasoningWanted(Exception):
    """The endpoint refused a history without the reasoning of its tool-call turns: send it again with it."""


class _FormatRefused(Exception):
    """The endpoint refused the request's `response_format`: send it again without it (`structured_output`)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class LLMGateway(ChatCalls, StructuredCalls, EmbedCalls, ModelCheck, SyncCalls):
    """See the module docstring. Safe to share across threads and event loops."""

    def __init__(self, settings: LLMSettings, store: CallStore | None = None, run_id: str | None = None,
                 budget: BudgetSettings | None = None, own_answers_only: bool = False) -> None:
        """`own_answers_only`: the cache answers only from this run's own calls (a resume), never from
        another run's: an evaluation measures the model as it is now, and another run with the same model
        name may have been another model (before training) or a transient bad answer."""
        self.settings = settings
        self._cache_run = run_id if own_answers_only else None
        self.store = store
        self.run_id = run_id
        self.endpoint = settings.base_url or DEFAULT_ENDPOINT
        self.ledger = Ledger(settings.prices, budget)
        self._cap = PerLoopSemaphore(settings.max_concurrency)
        self._pacer = RatePacer(settings.requests_per_minute)
        self._memory = MemoryCache()
        self._known = KnownAnswers(store.cached_fingerprints) if hasattr(store, "cached_fingerprints") else None
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )
        self._clients_lock = threading.Lock()
        self._audit = open_audit(store)
        self._in_flight: dict[int, tuple[Call, asyncio.Task[Any]]] = {}  # calls under way, by id(call): see `aclose`
        self._reasoning_back = False  # learned from the endpoint's 400 (`needs_reasoning_back`), for this gateway's life
        self._room_parameter = room_parameter(settings.base_url)  # switched when the endpoint refuses it
        self._no_response_format = False  # learned from the endpoint's refusal (`refuses_response_format`), for its life
        self.model_origins: dict[str, str] = {}  # a model given another way than llm.models (`--model`): how errors name it
        if store is not None and run_id is not None and budget is not None and hasattr(store, "llm_usage"):
            self.ledger.seed(store.llm_usage(run_id))

    # ---- configuration -------------------------------------------------------------------------

    def api_key(self) -> str:
        if self.settings.api_key:
            return self.settings.api_key
        if is_loopback(self.settings.base_url):
            return "mock"  # the SDK insists on a key string; loopback endpoints ignore it
        raise LLMConfigError(
            f"no API key for LLM endpoint {self.endpoint}: set OPENAI_API_KEY (or llm.api_key), "
            "or point OPENAI_BASE_URL at a local server such as `envscaler mock-llm`"
        )

    def model_for(self, stage: str, model: str | None = None) -> str:
        if model:
            return model
        if stage not in StageModels.model_fields:
            raise LLMConfigError(f"unknown LLM stage {stage!r}: expected one of {', '.join(StageModels.model_fields)}")
        return getattr(self.settings.models, stage)

    def _client(self) -> openai.AsyncOpenAI:
        """One SDK client per event loop: its connection pool is bound to the loop that opened it."""
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._clients.get(loop)
            if client is None:
                client = openai.AsyncOpenAI(
                    api_key=self.api_key(), base_url=self.settings.base_url, timeout=self.settings.timeout_s,
                    max_retries=0,
                )
                self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the current loop's HTTP client (others close with their loops); every audit row
        submitted so far is written by then. Calls of this loop still under way are stopped first and
        given the stop grace (`settle`), whoever was awaiting them, so answers already on their way are
        recorded rather than cut by the closing client."""
        try:
            await self.settle()
        finally:
            with self._clients_lock:
                client = self._clients.pop(asyncio.get_running_loop(), None)
            if client is not None:
                await client.close()
            await self._close_embedding_client()
            if self._audit is not None:
                await asyncio.to_thread(self._audit.flush)

    async def settle(self) -> None:
        """The run is ending with calls of this loop still under way that no one awaits any more (a
        sibling of a failed `asyncio.gather`, a task taken off a list before the stop cancelled it): each
        is stopped like a cancelled call (`_in_grace`: an answer arriving within STOP_GRACE_S is recorded)
        and waited for, at most the grace and the time to record what arrived; then every audit row is in
        the store. A run's summary is read from the store after this: computed before, a budget-stopped
        run's summary lacked the calls answered after the stop, and showed a cost under its cap (rt20-R7 F3)."""
        loop, me = asyncio.get_running_loop(), asyncio.current_task()
        with self._clients_lock:
            under_way = [(call, task) for call, task in self._in_flight.values()
                         if task.get_loop() is loop and task is not me and not task.done()]
        try:
            await stop_and_wait(under_way, STOP_GRACE_S + SETTLE_RECORD_S)
        finally:
            if self._audit is not None:
                await asyncio.to_thread(self._audit.flush)

    # ---- HTTP with retries -----------------------------------------------------------------------

    async def _send(self, call: Call, what: str, op: Callable[[openai.AsyncOpenAI], Awaitable[T]],
                    endpoint: str | None = None, via: Via = CHAT_ENDPOINT, prompt_tokens: int = 0) -> T:
        """One HTTP exchange, retried on 429/5xx/timeouts/connection errors and 200s that are no
        completion (`retry.BadAnswer`) with backoff; its final error names `endpoint` and the `via` settings
        (the chat endpoint's unless said otherwise). The budget is checked again right before each attempt
        goes out, reserving what a request of `prompt_tokens` (estimated) is likely billed while it is on the wire
        (`Ledger.admit`, `Ledger.likely_bill`)."""
        cfg = self.settings
        self.ledger.check_budget()
        client = self._client()
        tries = 0
        while True:
            if call.stopping:  # the run stopped: no more attempts (repair turns, retries) for this call
                raise asyncio.CancelledError()
            await self._pacer.wait()
            # An answered call keeps its slot until its audit row is durable (journaled, or committed
            # where there is no journal; `_release`): a kill can then repeat at most `max_concurrency`
            # answered-but-unrecorded calls per loop. Repair turns reuse the held slot.
            if not call.holds_slot:
                await self._cap.acquire()
                call.holds_slot = True
            tries += 1
            try:
                held = await self.ledger.admit(call.model, prompt_tokens)
                attempt = asyncio.ensure_future(op(client))
                # The SDK's timeout bounds each read; a body trickled a byte at a time (servers that keep a
                # queued request's connection alive) would reset it forever: the attempt as a whole is bounded.
                try:
                    async with asyncio.timeout(cfg.timeout_s) as deadline:
                        return await asyncio.shield(attempt)
                    # (the shield keeps the exchange going when the run is cancelled: see `_in_grace`)
                except TimeoutError:
                    if not deadline.expired():
                        raise
                    raise AttemptTimeout(cfg.timeout_s) from None
                except asyncio.CancelledError:
                    return await self._in_grace(call, attempt, deadline.when())
                finally:
                    self.ledger.release(held)  # the answer is counted (`_count`) before anything else runs
                    if not attempt.done():
                        attempt.cancel()
            except openai.OpenAIError as exc:
                self._release(call)
                self._count_billed(call, exc)
                failure = classify(exc)
                if failure is None:
                    raise
            except BaseException:
                self._release(call)
                raise
            if not failure.retryable or tries > cfg.max_retries:
                raise give_up(endpoint or self.endpoint, failure, tries, what, via,
                              model_setting(call.stage, call.model, self.model_origins)) from None
            call.retries += 1
            self.ledger.add(call.stage, retries=1)
            try:
                await asyncio.sleep(backoff_delay(tries - 1, cfg.backoff_base_s, cfg.backoff_max_s, failure.retry_after_s))
            except asyncio.CancelledError:
                call.stopping = True  # stopped between attempts: what the refused ones billed is recorded (`_audited`)
                raise

    async def _in_grace(self, call: Call, attempt: asyncio.Future[T], deadline: float | None) -> T:
        """The run is stopping (this call was cancelled with the rest of its work): an answer already on
        its way is waited for, at most STOP_GRACE_S and never past the attempt's deadline, and returned,
        so the call records it (cache and usage) before it ends cancelled (`_audited`); a resume then does
        not pay for it again. An answer later than that is cut by the client and lost (paid again). The
        grace is counted from the first stop: cancelling the call again does not shorten it (a cancelled
        `gather` cancels its children, and whoever ran it often cancels them once more)."""
        call.stopping = True
        loop = asyncio.get_running_loop()
        grace = STOP_GRACE_S if deadline is None else min(STOP_GRACE_S, deadline - loop.time())
        until = loop.time() + max(grace, 0.0)
        while not attempt.done() and loop.time() < until:
            try:
                await asyncio.wait({attempt}, timeout=until - loop.time())
            except asyncio.CancelledError:
                continue  # cancelled again: the same stop, whose grace still holds
        if not attempt.done():
            attempt.cancel()
            raise asyncio.CancelledError()
        try:
            return attempt.result()
        except openai.OpenAIError as exc:  # a failure: what it billed still counts, then the call ends
            self._count_billed(call, exc)
            raise asyncio.CancelledError() from None

    def _count_billed(self, call: Call, exc: BaseException) -> None:
        """A reply refused as an answer (a 200 whose choice ended in "error", an error body) that reports
        `usage` was still billed: its tokens count toward the call, the stage, the cost and the budget."""
        billed = billed_usage(getattr(exc, "usage", None))
        if billed is not None:
            prompt, completion, cached = billed
            self._count(call, prompt, completion, 0, cached)

    def _count(self, call: Call, prompt: int, completion: int, estimated: int = 0, cached: int = 0) -> None:
        cost = self.ledger.cost(call.model, prompt, completion, cached)
        call.prompt_tokens += prompt
        call.cached_tokens += cached
        call.completion_tokens += completion
        call.estimated_tokens += estimated
        call.cost_usd += cost
        self.ledger.add(call.stage, prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost,
                        estimated_tokens=estimated, cached_tokens=cached)

    async def _complete(self, call: Call, messages: list[dict[str, Any]], tools: Any, sampling: dict[str, Any],
                        headers: dict[str, str], what: str, as_sent: bool = False) -> Exchange:
        """One completion; a reply cut off by the output limit is asked again with more room (counted
        as a retry), at most MAX_LENGTH_RETRIES times (never `as_sent`: the reply is read once as it came,
        a choice that finished with "error" included). The caller decides about a reply still cut off.
        The room goes in the parameter the endpoint accepts: a 400 that names it as unsupported (Azure's
        and OpenAI's reasoning models refuse `max_tokens`) switches to the other one for the rest of the
        run and asks again. Any other refusal of the roomier retry (the room did not fit the model's context
        or output maximum, which servers say only in prose; or anything else) keeps the cut-off reply, as if
        the ceiling had been reached, with the server's words in the reason the caller reports."""
        keeps_reasoning = self._reasoning_back
        if self._no_response_format:  # refused once already: never sent again (a repair turn included)
            sampling = {k: v for k, v in sampling.items() if k != "response_format"}
        sent = outgoing(messages, keeps_reasoning)
        room: int | None = None
        length_retries = 0
        switched = False
        exchange: Exchange | None = None
        while True:
            extra: dict[str, Any] = {**self.settings.extra_body, **sampling}  # llm.extra_body: DashScope's enable_thinking, ...
            if tools:
                extra["tools"] = sent_tools(tools)  # list `type`s as `anyOf` (Gemini refuses a list)
            parameter = self._room_parameter
            if room is not None:
                extra[parameter] = room
            body = request_body(call.model, sent, extra)
            estimated = estimate_tokens(len(body))

            async def post(client: openai.AsyncOpenAI) -> dict[str, Any]:
                try:
                    raw = await client.post("/chat/completions", cast_to=bytes, content=body, options={"headers": headers})
                except openai.APIStatusError as exc:  # Groq's refused JSON/tool reply (a 400): the model's text
                    if "response_format" in sampling and refuses_response_format(exc, words := provider_text(exc)):
                        raise _FormatRefused(f"HTTP {exc.status_code}: {words}") from None
                    if not isinstance(exc, openai.BadRequestError):
                        raise
                    if not keeps_reasoning and needs_reasoning_back(exc, messages):
                        raise _ReasoningWanted() from None
                    if (reply := failed_generation(exc, tools)) is None:
                        raise
                    return reply
                try:
                    return parse_completion(raw)
                except ValueError as exc:  # an HTML page, an empty or cut body: asked again
                    raise BadAnswer(f"a body that is not a chat completion ({exc})", getattr(exc, "usage", None)) from None

            try:
                resp = await self._send(call, what, lambda c: completion_or_error(post(c), not as_sent),
                                        prompt_tokens=estimated)
            except _ReasoningWanted:  # DeepSeek V3.2 / Kimi K2 thinking: asked again with it, from now on
                self._reasoning_back = keeps_reasoning = True
                sent = outgoing(messages, True)
                call.retries += 1
                self.ledger.add(call.stage, retries=1)
                continue
            except _FormatRefused as exc:  # TGI, LM Studio: asked again without it, from now on
                sampling = without_response_format(sampling, self.endpoint, exc.detail, not self._no_response_format)
                self._no_response_format = True
                call.retries += 1
                self.ledger.add(call.stage, retries=1)
                continue
            except (LLMRequestRejected, LLMPromptRefused) as exc:
                if exchange is None or exc.status_code != 400:
                    raise
                if not switched and unsupported_parameter(exc.detail, parameter):
                    switched = True
                    self._room_parameter = next(p for p in ROOM_PARAMETERS if p != parameter)
                    call.retries += 1
                    self.ledger.add(call.stage, retries=1)
                    continue
                exchange.refused_room = (f"asking again with room for {room} tokens ({parameter}) was refused "
                                         f"(HTTP {exc.status_code}: {exc.detail or 'no explanation'})")
                return exchange
            exchange = read_response(resp, sent, tools, first_listed=as_sent)
            self._count(call, exchange.prompt_tokens, exchange.completion_tokens, exchange.estimated_tokens,
                        exchange.cached_tokens)
            self.ledger.learn(call.model, estimated, exchange.prompt_tokens, exchange.completion_tokens)  # (`admit`)
            if not as_sent and self._blank_with_format(call, exchange, "response_format" in sampling):
                sampling = {k: v for k, v in sampling.items() if k != "response_format"}  # once, for this call
                call.retries += 1
                self.ledger.add(call.stage, retries=1)
                continue
            if not (exchange.truncated or exchange.unfinished) or length_retries >= MAX_LENGTH_RETRIES or as_sent:
                return exchange
            if exchange.truncated:  # a stop by the server (`abort`) is asked again as it was
                room = more_room(room, exchange.completion_tokens, self.settings.max_output_tokens)
                if room is None:
                    return exchange
            length_retries += 1
            call.retries += 1
            self.ledger.add(call.stage, retries=1)

    def _blank_with_format(self, call: Call, exchange: Exchange, with_format: bool) -> bool:
        """Whether to ask once without response_format: the second empty or aborted reply in a row to it
        (`structured_output.blank_reply`). The reply to that one decides: an answer learns the fallback for
        the run, as a refusal does; none leaves the call's note naming response_format as the likely cause."""
        blank = blank_reply(exchange)
        if with_format:
            call.blank_replies = call.blank_replies + 1 if blank else 0
            if call.blank_replies >= 2 and call.format_note is None:
                call.format_note = SUSPECT
                return True
        elif call.format_note == SUSPECT:
            if blank:
                call.format_note = LIKELY_CAUSE
            else:
                call.format_note = None
                without_response_format({}, self.endpoint, "its replies with it were empty or aborted, twice in a row",
                                        not self._no_response_format)
                self._no_response_format = True
        return False

    # ---- cache and audit -------------------------------------------------------------------------

    # The cache lookup (a read) runs in a worker thread so a database round trip does not stall the
    # other in-flight calls; the audit row is journaled (or, without a journal, group-committed) by
    # `AuditLog` before the call returns, so that a kill can lose at most the calls that had not
    # returned yet (resume pays only for those), while the event loop keeps serving the others.

    async def _lookup(self, fingerprint: str, use: Callable[[dict[str, Any]], T | None]) -> T | None:
        """The first cached answer `use` can make something of (None: it cannot), in the store's order
        (`Store.cached_responses`: this run's own, then other runs' shared ones, oldest first), so a
        stale answer is passed over rather than paid again by every run, and what a run is served never
        changes because a later run paid again for the same request."""
        if not self.settings.cache:
            return None
        hit = self._memory.get(fingerprint)
        if hit is not None and (out := use(hit)) is not None:
            return out
        if self._known is not None:
            if not self._known.loaded:
                await asyncio.to_thread(self._known.ensure_loaded)
            if not self._known.may_have(fingerprint):
                return None
        if self.store is None:
            return None
        for answer in await asyncio.to_thread(self._cached_answers, fingerprint):
            if (out := use(answer)) is not None:
                self._memory.put(fingerprint, answer)
                return out
        return None

    def _cached_answers(self, fingerprint: str) -> list[dict[str, Any]]:
        store: Any = self.store
        if hasattr(store, "cached_responses"):
            return list(store.cached_responses(fingerprint, self._cache_run, self.run_id))
        hit = store.cached_response(fingerprint, self._cache_run)  # a minimal `CallStore`
        return [] if hit is None else [hit]

    async def _record(self, call: Call, status: LLMCallStatus, *, error: str | None = None,
                      response: dict[str, Any] | None = None) -> None:
        cached = status == "cached"
        call.recorded = True
        self.ledger.add(call.stage, calls=1, cached=cached)
        if status == "ok" and response is not None and self.settings.cache:
            self._memory.put(call.fingerprint, response)
        if self.store is None:
            return
        row = LLMCall(
            fingerprint=call.fingerprint, run_id=self.run_id, stage=call.stage, prompt_id=call.prompt_id,
            model=call.model, status=status, attempts=0 if cached else 1 + call.retries, repairs=call.repairs,
            prompt_tokens=call.prompt_tokens, cached_tokens=call.cached_tokens, completion_tokens=call.completion_tokens,
            estimated_tokens=call.estimated_tokens, cost_usd=call.cost_usd,
            latency_ms=(time.perf_counter() - call.started) * 1000.0, error=error,
            response=response if status == "ok" else None,
            shared=self.settings.cache,  # a run with the cache off feeds no other run's (maintainer's rule)
        )
        try:
            if self._audit is not None:
                await self._audit.write(row)
            else:
                self.store.record_llm_call(row)
        finally:
            self._release(call)

    def _release(self, call: Call) -> None:
        if call.holds_slot:
            call.holds_slot = False
            self._cap.release()

    async def _audited(self, call: Call, body: Callable[[], Awaitable[T]]) -> T:
        """Run a logical call; failures still leave an `error` row (output_invalid records itself). A call
        cancelled while its answer was on the way (`_in_grace`) records what it got, then ends cancelled
        whatever that answer was: the run is stopping, and its caller must not go on with it. While it
        runs it is known to `aclose` (`settle`), which stops and waits for it if no one else does."""
        task = asyncio.current_task()
        if task is not None:
            with self._clients_lock:
                self._in_flight[id(call)] = (call, task)
        try:
            try:
                result = await body()
            except (LLMNoAnswer, LLMPromptRefused) as exc:  # no answer to repair: the call itself failed
                await self._record(call, "error", error=str(exc))
                raise
            except LLMOutputInvalid:
                raise
            except (LLMRequestRejected, LLMUnavailableError, LLMConfigError) as exc:
                await self._record(call, "error", error=str(exc))
                raise
        except BaseException as exc:
            # Whatever ends a call after a billed attempt (a stop, the budget refusing its retry, a
            # cancellation while the retry waits, any error) records what it billed, once: rt19-R5 found
            # budget-stopped calls with a billed refusal and no row, missing from `status` and a resume's budget.
            if not call.recorded and (call.prompt_tokens or call.completion_tokens):
                stopped = call.stopping or isinstance(exc, asyncio.CancelledError)
                await self._record(call, "error", error=STOPPED if stopped else str(exc) or type(exc).__name__)
            if not call.stopping:
                raise
            raise asyncio.CancelledError() from None
        finally:
            self._release(call)  # whatever path the call took, its slot goes back
            with self._clients_lock:
                self._in_flight.pop(id(call), None)
        if call.stopping:
            raise asyncio.CancelledError()
        return result

    # ---- public API ------------------------------------------------------------------------------

    def usage_by_stage(self) -> dict[str, dict[str, Any]]:
        """{stage: {calls, cached, retries, prompt_tokens, completion_tokens, cost_usd}} for this gateway."""
        return self.ledger.by_stage()
