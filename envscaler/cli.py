"""`envscaler`: one CLI for every job. Each verb lives in its own module under `commands/` and is
imported lazily, so `envscaler --help` is fast and a verb's heavy imports (Prefect) load only when used."""

from __future__ import annotations

import importlib
import sys

import typer

app = typer.Typer(
    name="envscaler",
    help="EnvScaler factory: synthesize stateful tool environments, verified scenarios and training data.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# verb -> (module under envscaler.commands, one-line help). Order is the order in --help.
VERBS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "Run the whole factory on bundled real tasks against the built-in mock LLM."),
    "run": ("run", "Run the factory on source task files."),
    "resume": ("resume", "Resume a stopped or crashed run by its id."),
    "status": ("status", "Show a run's funnel, tokens, cost and top rejection reasons."),
    "validate": ("validate", "Validate an environment class file (programmatic and/or LLM judge)."),
    "sandbox": ("sandbox", "Run environment code in the sandbox (`sandbox exec`)."),
    "export": ("export", "Export SFT / RL / gym datasets from the store."),
    "serve-mcp": ("serve_mcp", "Serve an accepted environment's tools over MCP."),
    "mock-llm": ("mock_llm", "Start the bundled MOCK OpenAI-compatible LLM server (not a model)."),
    "eval": ("eval", "Evaluate a model on an official benchmark (bfcl-mt) in the sandbox, with its own checker."),
}


def _register() -> None:
    for verb, (module_name, help_text) in VERBS.items():
        module = importlib.import_module(f"envscaler.commands.{module_name}")
        target = module.register
        target(app, verb, help_text)


def main() -> None:
    _register()
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
