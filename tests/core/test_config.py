"""Configuration: defaults, file, environment overrides, and one-line errors that name the field."""

from __future__ import annotations

import pytest

from envscaler_core.config import ConfigError, load_settings


def test_defaults_match_the_reference_thresholds():
    s = load_settings(environ={})
    assert (s.validate_.rounds, s.validate_.threshold) == (30, 0.85)
    assert (s.mine.min_usefulness, s.mine.min_modelability) == (7, 7)
    assert s.store.url.startswith("duckdb:///")


def test_conventional_openai_variables_are_honoured():
    s = load_settings(environ={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k"})
    assert (s.llm.base_url, s.llm.api_key) == ("http://127.0.0.1:9/v1", "k")


def test_file_then_environment_precedence(tmp_path):
    path = tmp_path / "cfg.toml"
    path.write_text("[validate]\nrounds = 12\nthreshold = 0.5\n")
    s = load_settings(path, environ={"ENVSCALER_VALIDATE__ROUNDS": "7"})
    assert (s.validate_.rounds, s.validate_.threshold) == (7, 0.5)


def test_out_of_range_value_names_the_field(tmp_path):
    path = tmp_path / "cfg.toml"
    path.write_text("[validate]\nthreshold = 3\n")
    with pytest.raises(ConfigError, match=r"cfg.toml: validate.threshold"):
        load_settings(path, environ={})


def test_unknown_section_is_an_error(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text('{"valdiate": {"rounds": 3}}')
    with pytest.raises(ConfigError, match="valdiate"):
        load_settings(path, environ={})


def test_unparseable_file_is_reported(tmp_path):
    path = tmp_path / "cfg.toml"
    path.write_text("[validate\n")
    with pytest.raises(ConfigError, match="not valid toml"):
        load_settings(path, environ={})


def test_missing_file_is_reported(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.toml", environ={})
