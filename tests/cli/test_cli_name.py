"""Spec: the commands the CLI prints (`resume RUN`, `status RUN`) can be pasted as they are. After
`make demo` the venv is not activated: they then name the executable by path, with the activate hint."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from envscaler.cli_name import cli_call, cli_command


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "proj" / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    exe = bin_dir / "envscaler"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    (bin_dir / "activate").write_text("")
    return exe


def test_not_on_path_it_is_named_relative_to_the_project(venv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(venv)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(venv.parents[2])
    shown, hint = cli_command()
    assert shown == ".venv/bin/envscaler" and cli_call("resume", "r1") == ".venv/bin/envscaler resume r1"
    assert hint == f"`envscaler` is not on your PATH: call it as .venv/bin/envscaler, or first `source {venv.parent / 'activate'}`"


def test_from_elsewhere_it_is_named_by_its_absolute_path(venv: Path, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "argv", [str(venv)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert cli_command()[0] == str(venv)


def test_on_path_it_is_just_envscaler(venv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(venv)])
    monkeypatch.setenv("PATH", f"{venv.parent}{os.pathsep}/usr/bin")
    assert cli_command() == ("envscaler", None) and cli_call("status") == "envscaler status"


def test_run_in_process_or_as_a_module_it_is_envscaler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/somewhere/envscaler/__main__.py"])
    assert cli_command() == ("envscaler", None)
