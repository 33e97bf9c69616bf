"""Spec (red team round 5, F4): every command we print for the user to paste keeps each value that
comes from data (env ids, run ids, paths, store URLs) one inert shell word. An imported env id
`env_$(touch PWNED);x` was printed bare after `serve-mcp` by `status` and the HTML report: pasting it ran
`touch`. Each spec reads the printed command back with `shlex.split`, which is what a shell does to it."""

from __future__ import annotations

import html
import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from envscaler.cli_name import cli_call, resume_call
from envscaler_core.pipeline.report import build_summary, summary_text
from envscaler_core.report import render_report
from envscaler_core.shell import shell_word
from envscaler_core.store import Store
from envscaler_core.text_files import wide_text_advice
from tests.interop.conftest import FILES, run_import, settings_for
from tests.interop.test_an_env_whose_loads_fail_mid_import import SHOP as SHOP_WITH_GET

HOSTILE = "env_$(touch PWNED);x"
SHOP = SHOP_WITH_GET + '''
    def buy(self, item_id: str) -> dict:
        """Buy one of an item."""
        it = self.items.get(item_id)
        if it is None or it["stock"] < 1:
            return {"success": False, "error": "not available"}
        it["stock"] -= 1
        return {"success": True, "message": "bought"}
'''
ITEM = {"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}


def _import_shop_as(env_id: str, run_id: str, tmp: Path, pool: Any, code: str = SHOP) -> Any:
    """An import (run `run_id`, into the store under `tmp`) whose one env, accepted, has `env_id` as its id and
    `code` as its class; the import's settings."""
    env = {"env_id": env_id, "environment_summary": "shop", "environment_introduction": "A shop.",
           "state_space_definition": [], "constraints_rules": [], "env_class_name": "Shop", "env_class_code": code,
           "env_class_def": "", "env_structure": "",
           "operation_list": [{"operation_name": "get_item", "operation_type": "query"},
                              {"operation_name": "buy", "operation_type": "state_change"}],
           "tools": [{"type": "function", "function": {"name": n, "description": n, "parameters": ITEM}}
                     for n in ("get_item", "buy")]}
    check = "def check_func(final_state):\n    return final_state['items']['i1']['stock'] == 2\n"
    scenario = {"env_id": env_id, "env_class_name": "Shop", "task_id": "t1", "task": "Buy one i1.",
                "init_config": {"items": {"i1": {"item_id": "i1", "stock": 3}}}, "checklist": ["bought"],
                "checklist_with_func": [{"check_item": "bought", "check_func": check}]}
    directory = tmp / f"files-{run_id}"
    directory.mkdir()
    (directory / FILES[0]).write_text(json.dumps({env_id: env}))
    (directory / FILES[1]).write_text(json.dumps([scenario]))
    (directory / FILES[2]).write_text("[]")
    settings = settings_for(tmp)
    run_import(directory, settings, pool, run_id=run_id)
    return settings


@pytest.fixture(scope="module")
def hostile_import(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> Any:
    """An import whose one env, accepted, has `HOSTILE` as its id."""
    return _import_shop_as(HOSTILE, "hostile", tmp_path_factory.mktemp("hostile"), sandbox_pool)


def test_status_lists_a_hostile_env_id_as_the_one_word_to_paste(hostile_import: Any) -> None:
    with Store.from_url(hostile_import.store.url) as store:
        text = summary_text(build_summary(store, "hostile"))
    listed = re.search(r"^envs: (.*?)   \(play with one: envscaler serve-mcp --run hostile ENV_ID\)$", text, re.M)
    assert listed is not None, text
    assert shlex.split(listed.group(1)) == [HOSTILE], listed.group(1)


def test_the_html_report_prints_serve_mcp_with_the_env_id_quoted(hostile_import: Any) -> None:
    with Store.from_url(hostile_import.store.url) as store:
        page = render_report(store, "hostile")
    shown = re.search(r"Play with it: <code>(.*?)</code>", page)
    assert shown is not None
    assert shlex.split(html.unescape(shown.group(1))) == ["envscaler", "serve-mcp", "--run", "hostile", HOSTILE]


def test_cli_commands_keep_each_value_one_word() -> None:
    url = "duckdb:////tmp/my runs/$(touch PWNED).duckdb"
    assert shlex.split(cli_call("status", "run 1;x"))[1:] == ["status", "run 1;x"]
    assert shlex.split(resume_call("r1", url))[1:] == ["resume", "r1", "--db", url]


def test_the_iconv_advice_quotes_the_file_path() -> None:
    path = Path("/tmp/my files/$(touch PWNED).json")
    command = re.search(r"`(iconv .*)`", wide_text_advice(path, "UTF-16 (little-endian)"))
    assert command is not None
    assert shlex.split(command.group(1)) == ["iconv", "-f", "UTF-16", "-t", "UTF-8", str(path), ">",
                                            "utf8.$(touch PWNED).json"]


# red team round 6, F4: controls, line separators and a right-to-left override, kept raw by shlex.quote
ODD = "env_$(touch PWNED);x\x1b[2J\x07\u202eZ\u2028L\x85N\r'\\"
UNSAFE_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _bash_word(word: str) -> str:
    """What bash makes of one printed word."""
    return subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout.decode()


@pytest.fixture(scope="module")
def odd_import(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> Any:
    """An import whose one env, accepted, has `ODD` as its id."""
    return _import_shop_as(ODD, "odd", tmp_path_factory.mktemp("odd"), sandbox_pool)


def test_a_word_with_control_or_bidi_characters_is_printed_inert_and_pastes_as_itself() -> None:
    word = shell_word(ODD)
    assert not UNSAFE_RAW.search(word), word
    assert word.startswith("$'") and _bash_word(word) == ODD


def test_the_html_report_shows_such_an_id_escaped_and_its_command_pastes_as_shown(odd_import: Any) -> None:
    with Store.from_url(odd_import.store.url) as store:
        page = render_report(store, "odd")
    assert not UNSAFE_RAW.search(page)
    shown = re.search(r"Play with it: <code>envscaler serve-mcp --run odd (.*?)</code>", page)
    assert shown is not None and _bash_word(html.unescape(shown.group(1))) == ODD
    assert "pastes as shown in bash or zsh" in page
