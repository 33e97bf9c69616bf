"""`envscaler validate --code FILE [--class NAME]`: Stage 3 on one class file, outside any run.

The class is loaded the way EnvScaler's runtime loads it (and the way every later stage will): with
`--state` as its config in every mode, else with a test state the LLM writes. Without a spec the tools
are labelled query / state change from their name, docstring and code (and the LLM in llm/both
modes); the verdict shows the labels, the state used and any tool whose code no probe reached.

Exit codes: 0 accepted, 1 rejected (the report says why, including a state that does not load into the
class), 2 the input could not be validated at all (unreadable file, missing class, static problems,
unparseable state file, LLM endpoint unusable)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer

from envscaler.commands._common import fail
from envscaler.commands.validate_report import verdict_json, verdict_text


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def validate(
        code: Path = typer.Option(..., "--code", help="Python file holding the environment class."),
        class_name: str | None = typer.Option(None, "--class", help="The environment class (default: the file's only "
                                              "class, else its only base-less class with public methods)."),
        # no defaults of their own: a flag left out leaves validate.* to the config file, the environment and
        # the settings' defaults (both, 30, 3); before, these defaults replaced the file's (rt22-R12 F1)
        mode: str | None = typer.Option(None, "--mode", help="programmatic | llm | both (default: validate.mode, both)."),
        rounds: int | None = typer.Option(None, "--rounds", min=1, help="LLM proposer/judge rounds (default: "
                                          "validate.rounds, 30)."),
        chains: int | None = typer.Option(None, "--chains", min=1, help="Independent proposer/judge chains the rounds "
                                          "are split over (run at once; the LLM pass is rounds / chains + 1 calls "
                                          "deep; default: validate.chains, 3)."),
        state: Path | None = typer.Option(None, "--state", help="Test state JSON, used as the class's init config in "
                                          "every mode (skips asking the LLM for one). Give one where every tool can "
                                          "succeed: a state-changing tool whose code no probe reaches blocks acceptance."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml; its "
                                           "[validate], [llm] and [sandbox] apply; docs/configuration.md)."),
        text: bool = typer.Option(False, "--text", help="A human summary instead of the JSON verdict."),
        full: bool = typer.Option(False, "--full", help="JSON with every round (args, observation, states, verdict, reason)."),
    ) -> None:
        from envscaler.runner import settings_from
        from envscaler_core.models import EnvCandidate
        from envscaler_core.synth import SchemaError, extract_tools, static_problems

        if mode is not None and mode not in ("programmatic", "llm", "both"):
            fail("--mode must be programmatic, llm or both")
        given = {name: value for name, value in (("mode", mode), ("rounds", rounds), ("chains", chains))
                 if value is not None}
        # read before the class file, as `run` reads them first: a bad setting is said before any work
        settings = settings_from(config, None, {"validate": given} if given else None)
        from envscaler_core.text_files import NotUTF8, json_once, read_utf8

        try:  # a UTF-8 byte order mark is dropped, as Python itself and our source readers do
            source = read_utf8(code)
        except NotUTF8 as exc:
            fail(f"cannot read {code}: {exc}")
        except OSError as exc:
            fail(f"cannot read {code}: {exc}")
        if class_name is None:
            class_name = _only_class(code, source)
        try:
            problems = static_problems(source, class_name)
            tools = extract_tools(source, class_name)
        except (SyntaxError, SchemaError, ValueError) as exc:
            fail(f"{code}: {exc}")
        except (RecursionError, MemoryError) as exc:
            fail(f"{code}: refused: {_too_deep(exc)}")
        if problems:
            fail(f"{code}: static check failed: " + "; ".join(str(p) for p in problems[:5]))
        test_state = None
        if state is not None:
            try:
                test_state = json_once(read_utf8(state))  # a key named twice is refused
            except (OSError, ValueError) as exc:
                fail(f"--state {state}: {exc}")
            except RecursionError:
                fail(f"--state {state}: not valid JSON: nested too deeply to read")
            if not isinstance(test_state, dict):
                fail(f"--state {state}: must hold a JSON object")
        candidate = EnvCandidate(topic_fp="cli", class_name=class_name, class_code=source, tools=tools)
        if test_state is not None:  # EnvScaler's type markers reach the class restored, as its read_file does
            from envscaler_core.interop.sandboxed import with_markers_restored

            try:
                candidate, test_state = with_markers_restored(candidate, test_state, always=True)
            except ValueError as exc:
                fail(f"--state {state}: {exc}")
        outcome = _run(candidate, settings, test_state)
        report = outcome.report
        if full:
            full_json = {"accepted": report.accepted, **json.loads(outcome.model_dump_json(exclude={"env"}))}
            typer.echo(json.dumps(full_json, indent=2, ensure_ascii=False))  # `accepted` on top, as without --full
        elif not text:
            typer.echo(json.dumps(verdict_json(outcome), indent=2))
        else:
            typer.echo(verdict_text(outcome))
        raise typer.Exit(0 if report.accepted else 1)


def _only_class(path: Path, source: str) -> str:
    """The environment class: the file's only class, else its only class with public methods and no
    base class (EnvScaler's files hold TypedDict records beside one base-less env class)."""
    import ast

    from envscaler_core import pyast
    from envscaler_core.synth.tool_schema import public_methods

    try:
        classes = [n for n in pyast.parse(source).body if isinstance(n, ast.ClassDef)]
    except SyntaxError as exc:
        fail(f"{path}: " + (f"line {exc.lineno}: " if exc.lineno else "") + str(exc.msg))
    except (RecursionError, MemoryError, ValueError) as exc:
        fail(f"{path}: " + (f"refused: {_too_deep(exc)}" if isinstance(exc, RecursionError) else
                            f"does not compile: {_too_deep(exc)}"))
    if len(classes) == 1:
        return classes[0].name
    envs = [c for c in classes if not c.bases and public_methods(c)]
    if len(envs) == 1:
        return envs[0].name
    names = ", ".join(c.name for c in classes) or "none"
    fail(f"{path}: {len(classes)} top-level classes ({names}) and {len(envs)} look like an env class "
         "(no base class, public methods); name one with --class")


def _too_deep(exc: BaseException) -> str:
    from envscaler_core import pyast

    if isinstance(exc, RecursionError):  # the host's analysis ran out of stack; Python may well compile it
        return (f"nested too deeply for the host's analysis (it reads at most {pyast.MAX_NESTING} levels, "
                "pyast.MAX_NESTING)")
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _run(candidate, settings, test_state):  # type: ignore[no-untyped-def]
    """Every mode goes through the same Stage 3 entry point; a given state in programmatic mode needs no
    LLM, so no endpoint is required then."""
    from envscaler_core.llm.errors import LLMError
    from envscaler_core.validation import validate_candidate
    from sandbox import SandboxPool, SandboxUnavailable

    needs_llm = settings.validate_.mode != "programmatic" or test_state is None
    if needs_llm:
        from envscaler.endpoint import base_url_problem

        if (malformed := base_url_problem(settings)) is not None:
            fail(f"{malformed}{_state_hint(settings.validate_.mode, test_state)}")
    try:
        pool = SandboxPool(settings.sandbox)
    except SandboxUnavailable as exc:
        fail(f"sandbox unavailable: {exc}")
    with pool:
        try:
            gateway = None
            if needs_llm:  # the SDK costs a second of imports, which a programmatic check with a state never uses
                from envscaler_core.llm import LLMGateway

                gateway = LLMGateway(settings.llm)
            return asyncio.run(validate_candidate(candidate, pool, gateway, settings, test_state=test_state))
        except LLMError as exc:
            fail(f"{exc}{_state_hint(settings.validate_.mode, test_state)}")


def _state_hint(mode: str, test_state: dict | None) -> str:
    """Without --state an LLM writes the test state; say how to do without it, which a new user can't guess."""
    if test_state is not None:
        return ""
    if mode == "programmatic":
        return " (programmatic mode needs no LLM at all when you pass --state FILE, a JSON init config for the class)"
    return " (--state FILE gives the test state, so no LLM has to write one)"
