"""`envscaler`: one CLI for every job. Each verb lives in its own module under `commands/` and is
imported lazily, so `envscaler --help` is fast and a verb's heavy imports (Prefect) load only when used.

Errors are one line on stderr (exit 2 for input and setup problems, usage mistakes included: an unknown
verb or option, a missing argument); an unexpected exception is one line too (exit 1), with the
traceback only under `--debug` (anywhere on the command line). A bare `envscaler` or a verb group
without its subcommand (`envscaler sandbox`) prints its help and exits 0."""

from __future__ import annotations

import importlib
import os
import sys

import typer

app = typer.Typer(
    name="envscaler",
    help="EnvScaler factory: synthesize stateful tool environments, verified scenarios and training data. "
         "Runs live in one store (default: a DuckDB file under ENVSCALER_DATA_DIR, ~/.local/share/envscaler; "
         "override with ENVSCALER_DB_URL or --db). Add --debug to any command for tracebacks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# verb -> (module under envscaler.commands, one-line help). Order is the order in --help.
VERBS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "Run the whole factory on bundled real tasks against the built-in mock LLM."),
    "run": ("run", "Run the factory on source task files."),
    "resume": ("resume", "Resume a stopped, interrupted or crashed run by its id."),
    "status": ("status", "Show a run's funnel, tokens, cost, sources and env ids (or list runs); --watch a live one."),
    "report": ("report", "Write a run's self-contained HTML report (funnel chart, envs, scenarios, trajectories)."),
    "validate": ("validate", "Validate an environment class file (programmatic and/or LLM judge)."),
    "sandbox": ("sandbox", "Run environment code in the sandbox (`sandbox exec`)."),
    "export": ("export", "Export SFT / RL / gym datasets from the store."),
    "import": ("import_", "Import and audit data from other tools (`import envscaler`: EnvScaler's envs and scenarios)."),
    "serve-mcp": ("serve_mcp", "Serve an accepted environment's tools over MCP."),
    "mock-llm": ("mock_llm", "Start the bundled MOCK OpenAI-compatible LLM server (not a model)."),
    "eval": ("eval", "Evaluate a model on an official benchmark (bfcl-mt) in the sandbox, with its own checker."),
}


@app.callback()
def _root(debug: bool = typer.Option(False, "--debug", help="Show tracebacks and Prefect's own log lines.")) -> None:
    if debug:
        os.environ["ENVSCALER_DEBUG"] = "1"


def _register() -> None:
    for verb, (module_name, help_text) in VERBS.items():
        module = importlib.import_module(f"envscaler.commands.{module_name}")
        target = module.register
        target(app, verb, help_text)


def _take_debug_flag(argv: list[str]) -> list[str]:
    """`--debug` may follow the verb too (`envscaler run ... --debug`)."""
    if "--debug" in argv[1:]:
        os.environ["ENVSCALER_DEBUG"] = "1"
        return [a for a in argv if a != "--debug"]
    return argv


def main() -> None:
    """Run the verb, then end the process without interpreter teardown (see `_exit`)."""
    _exit(_dispatch())


def _dispatch() -> int:
    import click

    from envscaler.console import debug_enabled, prefect_cli_environment
    from envscaler.help_format import tidy_help

    sys.argv = _take_debug_flag(sys.argv)
    if sys.stdout is not None:
        from envscaler.terminal_text import VisibleText

        sys.stdout = VisibleText(sys.stdout)  # type: ignore[assignment]
    if (bad := _prefect_api_url_problem(sys.argv[1:])) is not None:
        typer.echo(f"error: {bad}", err=True)
        return 2
    prefect_cli_environment()
    _register()
    command = typer.main.get_command(app)
    tidy_help(command)
    try:
        # color=True: click must not strip escape sequences from what it echoes to a pipe or file; our
        # streams show them escaped instead (terminal_text; F5: stripped, an id read as another)
        code = command.main(args=sys.argv[1:], prog_name="envscaler", standalone_mode=False, color=True)
    except (click.exceptions.Exit, typer.Exit) as done:
        return done.exit_code
    except (click.ClickException, typer.TyperException) as problem:
        return _usage_error(problem)
    except (KeyboardInterrupt, click.exceptions.Abort, typer.Abort):
        typer.echo("interrupted", err=True)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one-line promise holds for our bugs too
        if debug_enabled():
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        from envscaler.terminal_text import visible

        typer.echo(f"error: unexpected {type(exc).__name__}: {visible(first)} (rerun with --debug for the traceback)",
                   err=True)
        return 1
    return code if isinstance(code, int) else 0


def _prefect_api_url_problem(args: list[str]) -> str | None:
    """A PREFECT_API_URL that is no URL, said before any verb does work (help needs no Prefect API)."""
    from envscaler.prefect_session import api_url_problem

    if not args or any(a in ("--help", "-h") for a in args):
        return None
    return api_url_problem(os.environ.get("PREFECT_API_URL"))


def _usage_error(problem: Exception) -> int:
    """click's own message in one line, naming the option and where to read about it; exit 2. A command
    group called without its subcommand is not a mistake: its help, exit 0."""
    ctx = getattr(problem, "ctx", None)
    if type(problem).__name__ == "NoArgsIsHelpError":
        return 0  # typer has printed the help already
    message = problem.format_message() if hasattr(problem, "format_message") else str(problem)  # type: ignore[attr-defined]
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    from envscaler.terminal_text import visible

    typer.echo(visible(f"error: {' '.join(message.split())}{where}"), err=True)
    return int(getattr(problem, "exit_code", 2) or 2)


def _exit(code: int) -> None:
    """Flush, run the atexit handlers (Prefect's, the sandbox pool's finalizers), and leave without module
    teardown. DuckDB's bindings (nanobind) report every object of theirs still alive when their module is
    torn down: its module-level type constants outlive it depending on teardown order, which printed a
    ~45-line `nanobind: leaked instances` dump at the end of about a third of runs. Everything we own is
    closed explicitly before this point (stores, engines, sandbox pools, the Prefect server)."""
    import atexit

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
