"""`envscaler sandbox exec|check`: run an environment class in the real sandbox from the shell.

`exec` prints one JSON line per call and a final `{"final_state": ...}` line; it exits 0 whenever the
run completed (failed calls are data, not errors) and 2 with one line on stderr when it could not run
at all (unreadable or invalid files, a class that does not load, no usable sandbox backend). An episode
whose process was caught forging frames (`breach`) has no final state to believe: the last line is
`{"breach": ...}` instead, stderr says so and the exit status is 3.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from envscaler.commands._common import fail


def _read_json(path: Path, what: str) -> Any:
    from envscaler_core.text_files import NotUTF8, RepeatedKey, json_once, read_utf8

    try:  # a UTF-8 byte order mark is dropped; UTF-16/32 is named with how to convert it
        return json_once(read_utf8(path))  # a key named twice (a call's args) is refused, not half-kept
    except NotUTF8 as exc:
        fail(f"{what} {path}: cannot read: {exc}")
    except RepeatedKey as exc:
        fail(f"{what} {path}: {exc}")
    except OSError as exc:
        fail(f"{what} {path}: cannot read: {exc.__class__.__name__}: {exc}")
    except ValueError as exc:
        fail(f"{what} {path}: not valid JSON: {exc}")
    except RecursionError:
        fail(f"{what} {path}: not valid JSON: nested too deeply to read")


def _parse_calls(raw: Any, path: Path) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(raw, list):
        fail(f"--calls {path}: must hold a JSON list of {{\"tool\": ..., \"args\": {{...}}}} objects")
    calls = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
            fail(f"--calls {path}: item {i} must be an object with a string \"tool\"")
        args = item.get("args", {})
        if not isinstance(args, dict):
            fail(f"--calls {path}: item {i} ({item['tool']}): \"args\" must be an object")
        extra = set(item) - {"tool", "args"}
        if extra:
            fail(f"--calls {path}: item {i} has unknown keys {sorted(extra)}")
        calls.append((item["tool"], args))
    return calls


def _settings(config: Path | None) -> Any:
    from envscaler_core.config import ConfigError, load_settings

    try:
        return load_settings(config)
    except ConfigError as exc:
        fail(str(exc))


def _open_pool(config: Path | None) -> Any:
    """The sandbox pool for `config`, or one clear line and exit 2 when no backend is usable."""
    from sandbox import SandboxPool, SandboxUnavailable

    try:
        return SandboxPool(_settings(config).sandbox)
    except SandboxUnavailable as exc:
        fail(f"no usable sandbox: {exc}")


BREACH_EXIT = 3  # the run completed, but its process forged frames: none of its lines is to be believed

def json_line(value: object) -> str:
    """One JSON line, non-ASCII text kept readable, but no character any common splitter takes as a line
    break (U+2028, U+2029, NEL, which json.dumps leaves raw with ensure_ascii=False): the CLI's one
    escaper, `terminal_text.visible`, writes them as JSON's own `\\uNNNN` escapes (they can only occur
    inside strings, where the escape means the same)."""
    from envscaler.terminal_text import visible

    return visible(json.dumps(value, ensure_ascii=False))


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    sub = typer.Typer(help=help_text, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

    @sub.command("exec", help="Run a calls file against an env class in one sandbox episode; JSON lines out.")
    def exec_(
        code: Path = typer.Option(..., "--code", help="Python file holding the environment class."),
        class_name: str = typer.Option(..., "--class", help="The environment class in the code file."),
        calls: Path = typer.Option(..., "--calls", help='JSON list of {"tool": NAME, "args": {...}}.'),
        state: Path | None = typer.Option(None, "--state", help="Initial state JSON object (init_config)."),
        config: Path | None = typer.Option(None, "--config", "-c", help="Config file (sandbox section)."),
    ) -> None:
        from envscaler_core.runtime import EnvLoadError, EpisodeBreach

        from envscaler_core.text_files import NotUTF8, read_utf8

        try:
            source = read_utf8(code)
        except NotUTF8 as exc:
            fail(f"--code {code}: cannot read: {exc}")
        except OSError as exc:
            fail(f"--code {code}: cannot read: {exc.__class__.__name__}: {exc}")
        plan = _parse_calls(_read_json(calls, "--calls"), calls)
        initial = None
        if state is not None:
            initial = _read_json(state, "--state")
            if not isinstance(initial, dict):
                fail(f"--state {state}: must hold a JSON object")
        with _open_pool(config) as pool:
            try:
                episode = pool.open_episode(source, class_name, initial)
            except EnvLoadError as exc:
                first = str(exc).strip().splitlines()
                fail(f"{code}: cannot load class {class_name!r}: " + " | ".join(first[-3:]))
            with episode:
                for tool, args in plan:
                    out = episode.call(tool, args)
                    line = {"tool": out.tool, "ok": out.ok, "result": out.result, "error": out.error,
                            "error_kind": out.error_kind, "state_diff": out.state_diff, "elapsed_ms": out.elapsed_ms}
                    typer.echo(json_line(line))
                try:
                    final = episode.state
                except EpisodeBreach as exc:  # the lines above may hold forged replies: say so, no final state
                    typer.echo(json_line({"breach": str(exc)}))
                    fail(f"{code}: the episode is not to be believed: {exc}", code=BREACH_EXIT)
                typer.echo(json_line({"final_state": final}))

    @sub.command("check", help="Start the sandbox and print the backend it picked and what it protects.")
    def check(config: Path | None = typer.Option(None, "--config", "-c", help="Config file (sandbox section).")) -> None:
        with _open_pool(config) as pool:
            info = pool.info()
        typer.echo(f"backend: {info['backend']} (python {info['python']}, {info['workers']} warm workers, "
                   f"seccomp {'on' if info['seccomp'] else 'OFF'})")
        for item in info["protections"]:
            typer.echo(f"  - {item}")

    app.add_typer(sub, name=verb, help=help_text)
