"""`envscaler eval bfcl-mt`: BFCL multi-turn, played in our sandbox and scored by BFCL's own checker.

Exit 0 when the evaluation finished (whatever the accuracy), 2 with one line when it could not run
(bad option, package missing, sandbox or endpoint unavailable, locked store; resume with --run-id).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer

from envscaler.cli_name import cli_call
from envscaler.commands._common import DB_HELP, checked_run_id, fail

BENCHMARKS = ("bfcl-mt",)


def _print_table(summary: dict, agent: str, model: str) -> None:
    typer.echo(f"BFCL multi-turn, run {summary['run_id']}: agent {agent}, model {model}"
               + ("" if summary["complete"] else " (INCOMPLETE)"))
    typer.echo(f"{'subset':<16}{'tasks':>7}{'valid':>7}{'accuracy %':>12}")
    for name, s in summary["subsets"].items():
        typer.echo(f"{name:<16}{s['tasks']:>7}{s['valid']:>7}{100 * s['accuracy']:>12.2f}")
    if summary.get("overall") is not None:  # with one subset too, as --json always has it
        typer.echo(f"{'overall (mean)':<30}{100 * summary['overall']:>12.2f}")


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def eval_(
        benchmark: str = typer.Argument(..., help="Benchmark to run: bfcl-mt (BFCL v4 multi-turn)."),
        subset: str = typer.Option("base", "--subset", help="base | miss_func | miss_param | long_context | all "
                                   "(or a comma-separated list)."),
        limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N tasks of each subset."),
        agent: str = typer.Option("gold", "--agent", help="gold (replay the ground truth: a harness self-test) "
                                  "| llm (the configured endpoint)."),
        model: str | None = typer.Option(None, "--model", help="Model for --agent llm (default: llm.models.agent)."),
        temperature: float | None = typer.Option(None, "--temperature", callback=_temperature_option, help=(
            "Sampling temperature sent with every --agent llm request (default: BFCL's 0.001). "
            "A resume must repeat it.")),
        run_id: str | None = typer.Option(None, "--run-id", callback=checked_run_id, help="Run id (default: a new one). An existing id resumes it."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml; every setting: docs/configuration.md)."),
        json_out: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    ) -> None:
        from envscaler.runner import check_endpoint, new_run_id, settings_from
        from envscaler_core.bfcl.data import DEFAULT_TEMPERATURE
        from envscaler_core.bfcl.evaluate import GOLD_MODEL, EvalRequest, parse_subsets
        from envscaler_core.bfcl.package import BFCLUnavailable, package_dir
        from envscaler_core.config import public_config

        if benchmark not in BENCHMARKS:
            fail(f"unknown benchmark {benchmark!r}; choose from {', '.join(BENCHMARKS)}")
        if agent not in ("gold", "llm"):
            fail(f"--agent must be gold or llm, got {agent!r}")
        if agent == "gold" and model is not None:
            fail("--model only applies to --agent llm (the gold agent replays the ground truth)")
        if agent == "gold" and temperature is not None:
            fail("--temperature only applies to --agent llm (the gold agent replays the ground truth)")
        if model is not None and not model.strip():  # "$MODEL" unset in a script: not the default model silently
            fail("--model is empty; give a model name, or leave the option out for llm.models.agent")
        try:
            subsets = parse_subsets(subset)
            package_dir()
        except (ValueError, BFCLUnavailable) as exc:
            fail(f"--subset: {exc}" if isinstance(exc, ValueError) else str(exc))
        settings, earlier = _own_settings(run_id, settings_from(config, db), config)
        if agent == "llm":
            check_endpoint(settings)
        own_model = earlier.get("model") if earlier.get("agent") == "llm" else None
        request = EvalRequest(subsets=subsets, limit=limit, agent=agent,
                              model=GOLD_MODEL if agent == "gold" else (model or own_model or settings.llm.models.agent),
                              temperature=None if agent == "gold" else
                              (DEFAULT_TEMPERATURE if temperature is None else temperature))
        if agent == "llm":  # the agent's model under a cost budget needs a price, however it was named
            _refuse_an_unpriced_budget(settings, config, request.model, "--model" if model else
                                       f"the model of run {run_id}" if own_model else None)
        rid = run_id or new_run_id("bfcl")
        summary = _run(settings, rid, request, public_config(settings), json_out)
        if json_out:
            typer.echo(json.dumps(summary))
        else:
            _print_table(summary, request.agent, request.model)


def _refuse_an_unpriced_budget(settings: Any, config: Path | None, model: str, named_by: str | None) -> None:
    """`budget.max_cost_usd` with an agent model that has no price is refused before anything runs (exit
    2), as it is for `llm.models.agent` when settings load: the model named by --model, or kept from the
    run, ran with no cap (its calls cost 0) before (an outside check)."""
    from envscaler_core.config import ConfigError, refuse_an_unpriced_budget

    try:
        refuse_an_unpriced_budget(settings, config, {named_by or "llm.models.agent": model})
    except ConfigError as exc:
        fail(str(exc))


def _own_settings(run_id: str | None, located: Any, config: Path | None) -> tuple[Any, dict[str, Any]]:
    """An existing evaluation continues with its own settings (its repair turns, its budget), as `resume`
    builds them, and its stored request (agent, model) comes back for the model --model leaves out: the
    flow stored whatever the shell held over the run's record, and a shell without the run's
    ENVSCALER_LLM__MODELS__AGENT was refused for "another model". A setting given now with another value
    than the run's is refused, naming it; a budget given now raises the run's (the budget-stop message
    tells the user to raise it and run again). A new run: `located` and no request."""
    from envscaler.resume_plan import resume_settings
    from envscaler.status import open_for_reading
    from envscaler_core.config import given_settings
    from envscaler_core.store import StoreError

    if run_id is None:
        return located, {}
    try:
        with open_for_reading(located.store.url) as store:
            run = store.get_run(run_id)
    except StoreError:  # no store yet (a new run), or one held elsewhere: the flow says which
        return located, {}
    if run is None or not isinstance(run.config.get("eval"), dict):  # a factory run: the flow refuses it
        return located, {}
    raised = given_settings(config).get("budget") or {}
    own = resume_settings(run, config, located.store.url, refuse_changes=True,
                          max_tokens=located.budget.max_tokens if "max_tokens" in raised else None,
                          max_cost=located.budget.max_cost_usd if "max_cost_usd" in raised else None,
                          remedy="drop it to continue the evaluation, or use a new --run-id for another one")
    return own, run.config["eval"]


def _run(settings, run_id: str, request, config: dict, json_out: bool = False) -> dict:  # type: ignore[no-untyped-def]
    """The eval flow inside the CLI's flow session; Ctrl-C exits 130 with the command that resumes it.
    With `json_out`, an evaluation that stops after it began still prints its summary (`_print_stopped`)."""
    from envscaler_core.config import store_option
    from envscaler.runner import EXIT_INTERRUPTED, flow_session
    from envscaler.stop_signals import run_stoppable, stop_signals
    from envscaler.status import EXIT_BUDGET
    from envscaler_core.bfcl.executor import CheckerFailed
    from envscaler_core.llm.errors import (
        BudgetExceeded, LLMConfigError, LLMModelNotServed, LLMRequestRejected, LLMUnavailableError)
    from envscaler_core.runtime import EnvLoadError
    from envscaler_core.store import StoreError
    from envscaler_core.store.claims import RunHeld
    from flows.eval import EvalConflict, bfcl_eval_flow
    from sandbox import SandboxUnavailable

    resume = cli_call("eval", "bfcl-mt", "--run-id", run_id, tail=f" {resume_options(request)}{store_option(settings.store.url)}")
    try:
        with stop_signals(), flow_session(settings):
            return run_stoppable(bfcl_eval_flow(run_id=run_id, request=request.model_dump(mode="json"), config=config))
    except KeyboardInterrupt:
        if json_out:
            _print_stopped(settings, run_id, request)
        if _recorded(settings, run_id):
            typer.echo(f"interrupted: evaluation {run_id} stopped; finished tasks are kept. Continue it with:\n"
                       f"  {resume}", err=True)
        else:
            typer.echo(f"interrupted before evaluation {run_id} started; nothing was recorded", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except EvalConflict as exc:
        fail(str(exc))
    except SandboxUnavailable as exc:
        fail(f"sandbox unavailable: {exc}")
    except BudgetExceeded as exc:
        if json_out:
            _print_stopped(settings, run_id, request)
        fail(f"evaluation {run_id} stopped on its budget: {exc}; finished tasks are kept (raise the budget and "
             f"resume: {resume})", EXIT_BUDGET)
    except RunHeld as exc:  # nothing was written: no resume to offer
        fail(str(exc))
    except LLMModelNotServed as exc:  # nothing was played: another model is another evaluation
        fail(f"evaluation {run_id} stopped: {exc}")
    except (LLMConfigError, LLMUnavailableError, LLMRequestRejected, StoreError) as exc:
        fail(f"evaluation {run_id} stopped: {exc} (resume: {resume})")
    except (CheckerFailed, EnvLoadError) as exc:  # the harness, not the model: the task stays unscored
        if json_out:
            _print_stopped(settings, run_id, request)
        fail(f"evaluation {run_id} stopped: the sandbox could not play or score a task: {exc}; finished tasks "
             f"are kept (resume: {resume})", 1)
    except Exception as exc:
        if (summary := _completed_without_prefect(settings, run_id, exc)) is not None:
            return summary
        raise


def _print_stopped(settings: Any, run_id: str, request: Any) -> None:
    """`--json` of an evaluation that stopped (budget, interrupt, a task the harness could not play): the
    summary's shape with the run's `status` and the finished tasks' table, on stdout, as `run --json`
    prints a stopped run's; before, stdout stayed empty (an outside check). Nothing when the run was
    never recorded or the store cannot be read: the error line on stderr says why."""
    from envscaler_core.bfcl.evaluate import build_report, summary_json
    from envscaler_core.store import Store

    try:
        with Store.from_url(settings.store.url, create=False) as store:
            run = store.get_run(run_id)
            if run is None:
                return
            summary = summary_json(build_report(store, run_id, request), run_id, run.status)
    except Exception:  # noqa: BLE001 - the store's own trouble: the stop's error line is the report
        return
    typer.echo(json.dumps(summary))


def _completed_without_prefect(settings: Any, run_id: str, exc: BaseException) -> dict | None:
    """The results of an evaluation that completed although the Prefect API stopped answering before the
    flow could report its end (as `runner._finished_without_prefect` for factory runs); None otherwise."""
    from envscaler.runner import prefect_unreachable, warn_prefect_gone
    from envscaler_core.bfcl.evaluate import summary_json
    from envscaler_core.models import BFCLEvalReport
    from envscaler_core.store import Store

    if not prefect_unreachable(exc):
        return None
    try:
        with Store.from_url(settings.store.url, create=False) as store:
            run = store.get_run(run_id)
            reports = store.query(BFCLEvalReport, run_id=run_id)
    except Exception:  # noqa: BLE001 - the store's own trouble: the failure is reported as it is
        return None
    if run is None or run.status != "completed" or not reports:
        return None
    warn_prefect_gone(run_id, run.status, exc)
    return summary_json(reports[-1], run_id)


def _temperature_option(value: float | None) -> float | None:
    """--temperature: a number from 0 to 2 (NaN, which every comparison lets through, is refused by
    name), -0.0 read as 0.0, so it is stored, sent and named in a resume hint as 0."""
    if value is None:
        return None
    if not math.isfinite(value) or not 0 <= value <= 2:
        raise typer.BadParameter(f"must be a number from 0 to 2, got {value}")
    return value + 0.0


def resume_options(request: Any) -> str:
    """The options that name this evaluation's tasks and player, as a resume must repeat them."""
    from envscaler_core.shell import shell_word

    options = f"--subset {shell_word(','.join(request.subsets))} --agent {shell_word(request.agent)}"
    if request.limit:
        options += f" --limit {request.limit}"
    if request.agent == "llm":  # the gold agent takes no --model
        options += f" --model {shell_word(request.model)}"  # a stored run's model name is data: quoted (F4)
        if request.temperature is not None:
            options += f" --temperature {request.temperature:g}"
    return options


def _recorded(settings: Any, run_id: str) -> bool:
    """Whether the run got as far as the store (Ctrl-C during the Prefect server's start comes before)."""
    from envscaler_core.store import Store, StoreMissing

    try:
        with Store.from_url(settings.store.url, create=False) as store:
            return store.get_run(run_id) is not None
    except StoreMissing:
        return False
    except Exception:  # noqa: BLE001 - unknown: say what a resume would find if it was recorded
        return True
