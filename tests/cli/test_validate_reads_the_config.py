"""Spec: `envscaler validate` reads `validate.*` as every verb reads its settings, in layers, later ones
winning: the defaults < a config file (`-c`) < ENVSCALER_* variables < the flags given (docs/configuration.md).
An outside check (rt22-R12 F1) saw the flags' own defaults (mode both, 30 rounds, 3 chains) replace the
file and the environment: `rounds: abc` passed without a word, `rounds: 3` ran 30, and `mode: programmatic`,
set to avoid paying for an LLM, ran the LLM pass. Run as a user runs it: the real executable, the real
sandbox, the real mock LLM over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.helpers import assert_one_line_error
from tests.cli.test_validate import envscaler, files, full


def config(tmp_path: Path, text: str, name: str = "factory.yaml") -> str:
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


def test_an_invalid_rounds_in_the_config_file_is_one_error_line_naming_it_and_the_file(tmp_path: Path) -> None:
    code, state = files(tmp_path)
    bad = config(tmp_path, "validate:\n  rounds: abc\n")
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic", "-c", bad)
    assert_one_line_error(out, "validate.rounds", bad)


def test_an_invalid_chains_or_mode_in_the_config_file_is_refused_too(tmp_path: Path) -> None:
    code, state = files(tmp_path)
    for text, setting in (("validate:\n  chains: [1]\n", "validate.chains"), ("validate:\n  mode: cheap\n", "validate.mode")):
        out = envscaler(tmp_path, "--code", code, "--state", state, "-c", config(tmp_path, text))
        assert_one_line_error(out, setting)


def test_an_invalid_rounds_variable_is_one_error_line_naming_the_variable(tmp_path: Path) -> None:
    code, state = files(tmp_path)
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic",
                   ENVSCALER_VALIDATE__ROUNDS="abc")
    assert_one_line_error(out, "validate.rounds", "ENVSCALER_VALIDATE__ROUNDS")


def rounds_run(tmp_path: Path, mock: Any, *args: str, **variables: str) -> int:
    """The rounds an llm-mode validation of the to-do class ran (the pass may add a few probes of its own)."""
    code, state = files(tmp_path)
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "llm", *args, base_url=mock.base_url,
                    **variables)
    return full(out)["rounds"]


def test_rounds_and_chains_from_the_config_file_run_as_the_same_flags_do(tmp_path: Path, mock_server: Any) -> None:
    from_file = rounds_run(tmp_path, mock_server, "-c", config(tmp_path, "validate:\n  rounds: 3\n  chains: 1\n"))
    assert from_file == rounds_run(tmp_path, mock_server, "--rounds", "3", "--chains", "1") < 10


def test_the_environment_wins_over_the_file_and_a_flag_over_both(tmp_path: Path, mock_server: Any) -> None:
    three = ("-c", config(tmp_path, "validate:\n  rounds: 3\n  chains: 1\n"))
    as_flags = {n: rounds_run(tmp_path, mock_server, "--rounds", str(n), "--chains", "1") for n in (3, 8)}
    assert as_flags[3] != as_flags[8]
    assert rounds_run(tmp_path, mock_server, *three, ENVSCALER_VALIDATE__ROUNDS="8") == as_flags[8]
    assert rounds_run(tmp_path, mock_server, *three, "--rounds", "3", ENVSCALER_VALIDATE__ROUNDS="8") == as_flags[3]


def test_chains_from_the_config_file_split_the_llm_pass(tmp_path: Path, mock_server: Any) -> None:
    """Each chain is its own episode with its own closing turn: more chains, more requests for the same rounds."""
    code, state = files(tmp_path)
    counts = {}
    for chains in (1, 3):
        mock_server.reset()
        out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "llm", "--rounds", "6",
                        "-c", config(tmp_path, f"validate:\n  chains: {chains}\n"), base_url=mock_server.base_url)
        full(out)
        counts[chains] = mock_server.stats()["requests_total"]
    mock_server.reset()
    flagged = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "llm", "--rounds", "6", "--chains", "3",
                        base_url=mock_server.base_url)
    full(flagged)
    assert counts[3] == mock_server.stats()["requests_total"] != counts[1], counts


def test_programmatic_mode_from_the_config_file_calls_no_llm(tmp_path: Path, mock_server: Any) -> None:
    code, state = files(tmp_path)
    mock_server.reset()
    out = envscaler(tmp_path, "--code", code, "--state", state,
                    "-c", config(tmp_path, "validate:\n  mode: programmatic\n"), base_url=mock_server.base_url)
    verdict = full(out)
    assert out.returncode == 0 and verdict["mode"] == "programmatic"
    assert mock_server.stats()["requests_total"] == 0


def test_programmatic_mode_from_the_config_file_needs_no_api_key(tmp_path: Path) -> None:
    code, state = files(tmp_path)
    out = envscaler(tmp_path, "--code", code, "--state", state,
                    "-c", config(tmp_path, json.dumps({"validate": {"mode": "programmatic"}}), "factory.json"))
    assert out.returncode == 0 and full(out)["accepted"]


def test_a_mode_flag_wins_over_the_config_file(tmp_path: Path, mock_server: Any) -> None:
    code, state = files(tmp_path)
    mock_server.reset()
    out = envscaler(tmp_path, "--code", code, "--state", state, "--mode", "programmatic",
                    "-c", config(tmp_path, "validate:\n  mode: llm\n"), base_url=mock_server.base_url)
    assert full(out)["mode"] == "programmatic" and mock_server.stats()["requests_total"] == 0
