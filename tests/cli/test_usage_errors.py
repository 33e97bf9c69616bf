"""Spec: a usage mistake on any verb is click's own message in one line naming the option, exit 2 (never
"unexpected ... exit 1"); a bare `envscaler` or command group prints its help and exits 0; `--help`
shows no `<bool>` after a flag and no `<list[...]>` type. Walks every verb and subcommand, so a verb
added later is covered too."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from envscaler.cli import VERBS, _register, app
from tests.cli.helpers import assert_one_line_error, clean_env, envscaler


def _commands() -> list[tuple[list[str], Any]]:
    _register()
    root = typer.main.get_command(app)
    found: list[tuple[list[str], Any]] = []

    def walk(path: list[str], command: Any) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            found.append((path, command))
            for name, sub in subs.items():
                walk([*path, name], sub)
        else:
            found.append((path, command))

    for verb in VERBS:
        walk([verb], root.commands[verb])
    return found


COMMANDS = _commands()
LEAVES = [(path, cmd) for path, cmd in COMMANDS if not getattr(cmd, "commands", None)]
GROUPS = [(path, cmd) for path, cmd in COMMANDS if getattr(cmd, "commands", None)]


def _required(command: Any) -> list[Any]:
    return [p for p in command.params if p.required]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("usage")
    return clean_env(home)


def test_every_verb_is_walked() -> None:
    assert {path[0] for path, _ in COMMANDS} == set(VERBS)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_an_unknown_option_is_a_usage_error(path: list[str], env: dict[str, str]) -> None:
    out = envscaler(*path, "--bogus", env=env)
    assert_one_line_error(out, "No such option: --bogus", f"`envscaler {' '.join(path)} --help`")


@pytest.mark.parametrize("path", [p for p, c in LEAVES if _required(c)],
                         ids=[" ".join(p) for p, c in LEAVES if _required(c)])
def test_a_missing_required_parameter_is_named(path: list[str], env: dict[str, str]) -> None:
    command = dict((tuple(p), c) for p, c in LEAVES)[tuple(path)]
    first = _required(command)[0]
    out = envscaler(*path, env=env)
    named = next((o for o in first.opts if o.startswith("--")), first.name) if first.param_type_name == "option" \
        else first.name
    assert_one_line_error(out, "Missing", named)


def test_an_unknown_verb_is_a_usage_error(env: dict[str, str]) -> None:
    assert_one_line_error(envscaler("nonsense", env=env), "No such command 'nonsense'")


@pytest.mark.parametrize("path", [[]] + [p for p, _ in GROUPS], ids=["envscaler"] + [" ".join(p) for p, _ in GROUPS])
def test_a_bare_command_group_prints_its_help(path: list[str], env: dict[str, str]) -> None:
    out = envscaler(*path, env=env)
    assert out.returncode == 0 and "Usage:" in out.stdout, out
    assert out.stderr.strip() == "", out.stderr


@pytest.mark.parametrize("path", [p for p, _ in LEAVES], ids=[" ".join(p) for p, _ in LEAVES])
def test_help_shows_no_python_type_names_for_flags_and_lists(path: list[str], env: dict[str, str]) -> None:
    out = envscaler(*path, "--help", env={**env, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    assert "<bool>" not in out.stdout and "<list[" not in out.stdout, out.stdout


@pytest.mark.parametrize("verb", ["status", "validate", "run", "resume", "export", "report"])
def test_config_is_described(verb: str, env: dict[str, str]) -> None:
    out = envscaler(verb, "--help", env={**env, "COLUMNS": "200"})
    line = next(line for line in out.stdout.splitlines() if "--config" in line)
    assert "Settings file" in line, line


def test_usage_errors_show_no_traceback_even_with_debug(env: dict[str, str]) -> None:
    out = envscaler("status", "--bogus", "--debug", env=env)
    assert out.returncode == 2 and "Traceback" not in out.stderr
