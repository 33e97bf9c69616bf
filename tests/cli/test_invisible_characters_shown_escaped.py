"""Spec (rt22-R12 F3): env ids that differ only by invisible characters (a zero-width space, a word joiner,
a byte order mark, a soft hyphen, a tag character: Unicode's format category "Cf"; or a variation selector)
are shown different on every output path: the one escaper (`inert_text.UNSAFE`) writes each as its
`\\u200b`-style escape, `shell_word` quotes such an id as `$'...'`, and the report escapes it as it escapes
a control character. Before, `status` listed `env_lib` and `env_l<U+200B>ib` as the same-looking words,
and report.html held the characters raw in its sidebar, anchors and headings.

Run as the real `envscaler` executable, on a real DuckDB store."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from envscaler.terminal_text import visible
from envscaler_core.shell import shell_word
from tests.cli.helpers import ROOT, clean_env, envscaler
from tests.cli.test_line_breaks_in_ids_shown_escaped import LIB, TOOLS

# five ids a terminal or a browser shows as `env_lib`
LOOKALIKES = ["env_lib", "env_l\u200bib", "env_li\u2060b\ufeff", "env_\u00adlib", "env_lib\U000e0020"]
INVISIBLE = "\u200b\u2060\ufeff\u00ad\U000e0020"


def _bash_word(word: str) -> str:
    """What bash makes of one printed word."""
    return subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout.decode()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An import (run `r1`, its own store) of one env under each look-alike id; the environment to run in."""
    tmp = tmp_path_factory.mktemp("lookalikes")
    records = {i: {"env_id": i, "env_class_code": LIB, "env_class_name": "Lib", "environment_introduction": "A lib.",
                   "tools": TOOLS} for i in LOOKALIKES}
    (tmp / "envs.json").write_text(json.dumps(records, ensure_ascii=False))
    (tmp / "rl.json").write_text("[]")
    env = clean_env(tmp, ENVSCALER_DATA_DIR=str(tmp / "data"))
    out = envscaler("import", "envscaler", "--envs", str(tmp / "envs.json"), "--scenarios", str(tmp / "rl.json"),
                    "--run-id", "r1", env=env, cwd=tmp)
    assert out.returncode == 0, out.stderr[-2000:]
    return env


def test_status_lists_each_lookalike_id_escaped_and_pasting_as_itself(imported: dict[str, str]) -> None:
    out = envscaler("status", "r1", env=imported)
    assert out.returncode == 0, out.stderr[-2000:]
    assert not set(INVISIBLE) & set(out.stdout + out.stderr), ascii(out.stdout)
    listed = re.search(r"^envs: (.*?)   \(", out.stdout, re.M)
    assert listed is not None, out.stdout
    words = listed.group(1).split(" ")
    assert sorted(_bash_word(w) for w in words) == sorted(LOOKALIKES), words
    assert "$'env_l\\xe2\\x80\\x8bib'" in words, words


def test_the_report_holds_no_invisible_character_and_names_each_id_apart(imported: dict[str, str]) -> None:
    out = envscaler("report", "r1", env=imported)
    assert out.returncode == 0, out.stderr[-2000:]
    page = Path(out.stdout.strip()).read_text(encoding="utf-8")
    assert not set(INVISIBLE) & set(page)
    headings = re.findall(r'<section class="env" id="env-([^"]*)"><h2>([^ <]*)', page)
    assert sorted(h for _, h in headings) == sorted(["env_lib", "env_l\\u200bib", "env_li\\u2060b\\ufeff",
                                                     "env_\\u00adlib", "env_lib\\udb40\\udc20"]), headings
    assert all(anchor == shown for anchor, shown in headings)


def test_every_format_character_and_variation_selector_is_escaped() -> None:
    """The whole "Cf" category of this Python's Unicode database, and the variation selectors."""
    hidden = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    hidden += [chr(c) for c in (*range(0xfe00, 0xfe10), *range(0xe0100, 0xe01f0), *range(0x180b, 0x1810))]
    left = [f"U+{ord(c):04X}" for c in hidden if visible(c) == c]
    assert left == []


def test_an_astral_character_is_escaped_as_json_escapes_it() -> None:
    """A tag character becomes its UTF-16 pair, `\\udb40\\udc20`, so JSON printed raw stays the same JSON."""
    assert visible("a\U000e0020b") == "a\\udb40\\udc20b"
    assert json.loads(visible(json.dumps({"id": "a\U000e0020b"}, ensure_ascii=False))) == {"id": "a\U000e0020b"}


def test_a_word_with_a_format_character_pastes_as_itself() -> None:
    for word in LOOKALIKES[1:]:
        quoted = shell_word(word)
        assert quoted.startswith("$'") and not set(INVISIBLE) & set(quoted) and _bash_word(quoted) == word


def test_sandbox_exec_json_with_a_tag_character_stays_the_same_json(tmp_path: Path) -> None:
    """`sandbox exec` prints JSON with ensure_ascii=False through the one escaper."""
    key = "b1\U000e0020\u200bx"
    (tmp_path / "lib.py").write_text(LIB)
    (tmp_path / "state.json").write_text(json.dumps({"books": {key: {"title": "A"}}}))
    (tmp_path / "calls.json").write_text(json.dumps([{"tool": "get_book", "args": {"book_id": key}}]))
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "sandbox", "exec", "--code", str(tmp_path / "lib.py"),
                          "--class", "Lib", "--calls", str(tmp_path / "calls.json"), "--state",
                          str(tmp_path / "state.json")], cwd=ROOT, capture_output=True, text=True,
                         env=clean_env(tmp_path), timeout=300, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert not set(INVISIBLE) & set(out.stdout)
    assert json.loads(out.stdout.splitlines()[-1])["final_state"]["books"] == {key: {"title": "A"}}
