"""Configuration: defaults, file, environment overrides, and one-line errors that name the field."""

from __future__ import annotations

import re

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


def test_a_bad_yaml_file_is_one_line_naming_where(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("mine:\n  select_n: [3\n")
    with pytest.raises(ConfigError) as err:
        load_settings(path, environ={})
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}: cannot parse: ")
    assert "expected ',' or ']'" in message and "(line 3, column 1)" in message


def test_an_unknown_section_from_the_environment_names_the_variable():
    with pytest.raises(ConfigError) as err:
        load_settings(environ={"ENVSCALER_MINEE__SELECT_N": "3"})
    assert "minee: unknown setting; did you mean mine?" in str(err.value)
    assert "environment variable ENVSCALER_MINEE__SELECT_N='3'" in str(err.value)


def test_a_price_in_a_config_file_is_added_to_the_default_prices(tmp_path):
    path = tmp_path / "cfg.toml"
    path.write_text('[llm.prices."my-model"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n'
                    '[llm.prices."gpt-4.1-mini"]\ninput_per_mtok = 0.5\noutput_per_mtok = 3.0\n')
    prices = load_settings(path, environ={}).llm.prices
    assert (prices["my-model"].input_per_mtok, prices["my-model"].output_per_mtok) == (1.0, 2.0)
    assert (prices["gpt-4.1-mini"].input_per_mtok, prices["gpt-4.1-mini"].cached_input_per_mtok) == (0.5, None)
    assert prices["gpt-4.1"].output_per_mtok == 8.0 and "text-embedding-3-large" in prices


def test_a_cost_budget_with_a_stage_model_without_a_price_is_refused(tmp_path):
    path = tmp_path / "cfg.toml"
    path.write_text('[budget]\nmax_cost_usd = 1.0\n[llm.models]\nsynth = "their-model"\n')
    with pytest.raises(ConfigError, match=r"cfg.toml: budget.max_cost_usd=1.0 .*llm.models.synth='their-model'"):
        load_settings(path, environ={})
    unbudgeted = load_settings(path, environ={}, overrides={"budget": {"max_cost_usd": None}})
    assert unbudgeted.llm.models.synth == "their-model"


@pytest.mark.parametrize(("name", "right"), [
    ("ENVSCALER_SCEN_PER_ENV", "ENVSCALER_SCEN__PER_ENV (scen.per_env)"),
    ("ENVSCALER_LLM_MODELS_AGENT", "ENVSCALER_LLM__MODELS__AGENT (llm.models.agent)"),
    ("ENVSCALER_LLM__MODELS_AGENT", "ENVSCALER_LLM__MODELS__AGENT (llm.models.agent)"),
    ("ENVSCALER_VALIDATE_ROUNDS", "ENVSCALER_VALIDATE__ROUNDS (validate.rounds)"),
])
def test_a_setting_variable_with_single_underscores_names_the_right_one(name, right):
    with pytest.raises(ConfigError, match=rf"environment variable {name} is not a setting variable; did you mean "
                                          rf"{re.escape(right)}\?"):
        load_settings(environ={name: "3"})


@pytest.mark.parametrize("name", ["envscaler_rollout__min_steps", "Envscaler_scen__per_env"])
def test_a_setting_variable_with_a_lower_case_prefix_is_refused_naming_the_spelling_read(name):
    """An outside check: `envscaler_rollout__min_steps=abc` was ignored without a word."""
    with pytest.raises(ConfigError, match=rf"{name} is not read: the prefix is ENVSCALER_ in capitals "
                                          rf"\(e.g. ENVSCALER_{name[10:].upper()}\)"):
        load_settings(environ={name: "3"})


def test_other_single_underscore_variables_are_not_settings_and_stay_free():
    s = load_settings(environ={"ENVSCALER_DATA_DIR": "/tmp/x", "ENVSCALER_WORKERS": "2", "ENVSCALER_SCEN__PER_ENV": "3"})
    assert s.scen.per_env == 3
