"""Spec (red team 8, F5): an env id holding a line break (LF, CR, U+2028) never starts a line of its own
on any output path: the import's notes, `status`, `report`, `export` and serve-mcp's banner. The shared
table (`inert_text.UNSAFE`) keeps newline and tab raw, since whole multi-line texts pass through it; an id
inside one line of output is one word, so newline and tab are escaped there too (`inert_word`,
`shell_word`). Before, an id `env_x]: ok\\nimported EnvScaler data as run trusted ...` printed a whole
fake import summary, and `status` listed `'env_a` and `b'` on two lines.

Run as the real `envscaler` executable, on a real DuckDB store."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import clean_env, envscaler

LIB = '''
class Lib:
    def __init__(self, init_config=None):
        self.books = dict((init_config or {}).get("books", {}))

    def get_book(self, book_id: str) -> dict:
        """Get a book by id."""
        return {"success": book_id in self.books}
'''
TOOLS = [{"type": "function", "function": {"name": "get_book", "description": "Get a book by id.", "parameters": {
    "type": "object", "properties": {"book_id": {"type": "string"}}, "required": ["book_id"]}}}]
BREAKS = {"lf": "\n", "cr": "\r", "u2028": "\u2028"}


def _forged(out: subprocess.CompletedProcess[str]) -> list[str]:
    """Lines of the output the id's second half begins: what a reader would take for our own line."""
    return [line for line in (out.stdout + out.stderr).splitlines() if line.startswith("FORGED")]


@pytest.fixture(scope="module", params=list(BREAKS), ids=list(BREAKS))
def imported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, subprocess.CompletedProcess[str]]:
    """An import (run `r1`, its own store) of one env whose id breaks the line; the env, the id, the import's output."""
    tmp = tmp_path_factory.mktemp(request.param)
    env_id = f"env_a]: ok{BREAKS[request.param]}FORGED line"
    record = {"env_id": env_id, "env_class_code": LIB, "env_class_name": "Lib", "environment_introduction": "A lib.",
              "tools": TOOLS}
    (tmp / "envs.json").write_text(json.dumps({env_id: record}))
    (tmp / "rl.json").write_text("[]")
    env = clean_env(tmp, ENVSCALER_DATA_DIR=str(tmp / "data"))
    out = envscaler("import", "envscaler", "--envs", str(tmp / "envs.json"), "--scenarios", str(tmp / "rl.json"),
                    "--run-id", "r1", env=env, cwd=tmp)
    assert out.returncode == 0, out.stderr[-2000:]
    return env, env_id, out


def test_the_imports_notes_show_the_id_on_its_line(imported: tuple) -> None:
    _, _, out = imported
    assert "note: envs.json[env_a]: ok\\x" in out.stderr or "note: envs.json[env_a]: ok\\u2028" in out.stderr, out.stderr
    assert _forged(out) == [], out.stderr


@pytest.mark.parametrize("command", [("status", "r1"), ("report", "r1"), ("export", "r1", "--format", "rl")],
                         ids=["status", "report", "export"])
def test_status_report_and_export_show_the_id_on_its_line(imported: tuple, command: tuple[str, ...]) -> None:
    env, _, _ = imported
    out = envscaler(*command, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert _forged(out) == [], out.stdout + out.stderr


def test_serve_mcps_messages_show_the_id_on_their_line(imported: tuple) -> None:
    """Its banner and its one-line errors (here: no verified scenario to start from) print the id alike."""
    env, env_id, _ = imported
    out = envscaler("serve-mcp", "--run", "r1", env_id, env=env, timeout=120)
    assert "env_a]: ok\\x" in out.stderr or "env_a]: ok\\u2028" in out.stderr, out.stderr
    assert _forged(out) == [], out.stderr
