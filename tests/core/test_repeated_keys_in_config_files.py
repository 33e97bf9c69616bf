"""Spec: a JSON or YAML settings file that names a section or a key twice is refused with one line naming
the key, where it is and the file, as TOML refuses a repeated table (rt22-R11 F1: a JSON config naming
"mine" twice ran on the defaults, and YAML kept the second of two values, both without a word)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envscaler_core.config import ConfigError, load_settings


def refused(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_json_config_naming_a_section_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "factory.json"
    path.write_text('{"mine": {"select_n": 3}, "mine": {"seed": 7}}')
    message = refused(path)
    assert str(path) in message and "'mine' twice at the top level" in message


def test_a_json_config_naming_a_key_twice_in_a_section_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "factory.json"
    path.write_text('{"mine": {"select_n": 3, "seed": 1, "select_n": 4}}')
    message = refused(path)
    assert str(path) in message and "'select_n' twice in mine" in message


def test_a_yaml_config_naming_a_key_twice_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "factory.yaml"
    path.write_text("mine:\n  select_n: 3\n  select_n: 4\n")
    message = refused(path)
    assert str(path) in message and "'select_n' twice in mine" in message and "line 3" in message


def test_a_yaml_config_naming_a_section_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "factory.yml"
    path.write_text("mine:\n  select_n: 3\nvalidate:\n  rounds: 4\nmine:\n  seed: 7\n")
    assert "'mine' twice at the top level" in refused(path)


def test_the_same_key_in_two_sections_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "factory.yaml"
    path.write_text("mine:\n  llm_batch: 3\nflow:\n  batch_size: 4\n")
    settings = load_settings(path, environ={})
    assert settings.mine.llm_batch == 3 and settings.flow.batch_size == 4
