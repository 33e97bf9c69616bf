"""`envscaler validate --code FILE [--class NAME]`: Stage 3 on one class file, outside any run.

Exit codes: 0 accepted, 1 rejected (the report says why), 2 the input could not be validated at all
(unreadable file, missing class, static problems, bad state file, LLM endpoint unusable)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer

from envscaler.commands._common import fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def validate(
        code: Path = typer.Option(..., "--code", help="Python file holding the environment class."),
        class_name: str | None = typer.Option(None, "--class", help="The environment class (default: the file's only top-level class)."),
        mode: str = typer.Option("both", "--mode", help="programmatic | llm | both."),
        rounds: int = typer.Option(30, "--rounds", min=1, help="LLM proposer/judge rounds."),
        state: Path | None = typer.Option(None, "--state", help="Test state JSON (skips asking the LLM for one)."),
        config: Path | None = typer.Option(None, "--config", "-c"),
        text: bool = typer.Option(False, "--text", help="A human summary instead of the JSON verdict."),
        full: bool = typer.Option(False, "--full", help="JSON with every round (args, observation, states, verdict, reason)."),
    ) -> None:
        from envscaler.runner import settings_from
        from envscaler_core.models import EnvCandidate
        from envscaler_core.synth import SchemaError, extract_tools, static_problems

        if mode not in ("programmatic", "llm", "both"):
            fail("--mode must be programmatic, llm or both")
        try:
            source = code.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"cannot read {code}: {exc}")
        if class_name is None:
            class_name = _only_class(code, source)
        try:
            problems = static_problems(source, class_name)
            tools = extract_tools(source, class_name)
        except (SyntaxError, SchemaError, ValueError) as exc:
            fail(f"{code}: {exc}")
        if problems:
            fail(f"{code}: static check failed: " + "; ".join(str(p) for p in problems[:5]))
        test_state = None
        if state is not None:
            try:
                test_state = json.loads(state.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                fail(f"--state {state}: {exc}")
            if not isinstance(test_state, dict):
                fail(f"--state {state}: must hold a JSON object")
        settings = settings_from(config, None, {"validate": {"mode": mode, "rounds": rounds}})
        candidate = EnvCandidate(topic_fp="cli", class_name=class_name, class_code=source, tools=tools)
        outcome = _run(candidate, settings, test_state)
        report = outcome.report
        if full:
            typer.echo(outcome.model_dump_json(indent=2, exclude={"env"}))
        elif not text:
            verdict = {"accepted": report.accepted, "score": report.score, "threshold": report.threshold,
                       "mode": report.mode, "rounds": report.rounds, "passes": report.passes,
                       "warnings": report.warnings, "fails": report.fails, "skipped": report.skipped,
                       "critical": report.critical, "reasons": report.reasons, "failure": outcome.failure}
            typer.echo(json.dumps(verdict, indent=2))
        else:
            verdict = "ACCEPTED" if report.accepted else "REJECTED"
            typer.echo(f"{verdict}: score {report.score:.2f} (threshold {report.threshold:.2f}, mode {report.mode}, "
                       f"{report.rounds} rounds: {report.passes} pass / {report.warnings} warning / {report.fails} fail, "
                       f"{report.skipped} skipped)")
            for line in report.critical:
                typer.echo(f"  critical: {line}")
            for line in report.reasons[:5]:
                typer.echo(f"  reason:   {line}")
            if outcome.failure:
                typer.echo(f"  failure:  {outcome.failure}")
        raise typer.Exit(0 if report.accepted else 1)


def _only_class(path: Path, source: str) -> str:
    import ast

    try:
        names = [n.name for n in ast.parse(source).body if isinstance(n, ast.ClassDef)]
    except SyntaxError as exc:
        fail(f"{path}: line {exc.lineno}: {exc.msg}")
    if len(names) != 1:
        fail(f"{path}: {len(names)} top-level classes ({', '.join(names) or 'none'}); name one with --class")
    return names[0]


def _run(candidate, settings, test_state):  # type: ignore[no-untyped-def]
    """Programmatic-only with a given state needs no LLM; everything else goes through the gateway."""
    from envscaler_core.llm import LLMGateway
    from envscaler_core.llm.errors import LLMError
    from envscaler_core.runtime import EnvLoadError
    from envscaler_core.validation import validate_candidate
    from envscaler_core.validation.validate import ValidationOutcome, run_programmatic, summarize
    from sandbox import SandboxPool

    with SandboxPool(settings.sandbox) as pool:
        try:
            if test_state is not None and settings.validate_.mode == "programmatic":
                try:
                    limit = max(settings.validate_.rounds, 2 * len(candidate.tools))
                    rounds = run_programmatic(candidate, pool, test_state, 0, limit)
                except EnvLoadError as exc:
                    fail(f"--state does not load: {exc}")
                report = summarize(rounds, settings.validate_.threshold, "programmatic")
                return ValidationOutcome(candidate_fp=candidate.fingerprint, report=report, rounds=rounds,
                                         test_state=test_state)
            gateway = LLMGateway(settings.llm)
            return asyncio.run(validate_candidate(candidate, pool, gateway, settings, test_state=test_state))
        except LLMError as exc:
            fail(str(exc))
