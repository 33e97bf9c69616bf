"""Reading the text files users give us (sources, EnvScaler imports, `validate --code/--state`, config
files): UTF-8, with a leading UTF-8 byte order mark dropped (Windows tools write one; it is not data).
A file in UTF-16 or UTF-32 (Windows' "Unicode", PowerShell 5's `>` and `Out-File` default) starts with
its own byte order mark: it is named as what it is, with the command that converts it, instead of
being called binary or "not UTF-8" at some byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from envscaler_core.shell import shell_word

# longest first: the UTF-32 little-endian mark begins with the UTF-16 one
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32", "little-endian"), (b"\x00\x00\xfe\xff", "UTF-32", "big-endian"),
              (b"\xff\xfe", "UTF-16", "little-endian"), (b"\xfe\xff", "UTF-16", "big-endian"))


class NotUTF8(ValueError):
    """A file that is not UTF-8 text; the message says what it is and, for UTF-16/32, how to convert it."""


def wide_encoding(head: bytes) -> str | None:
    """'UTF-16 (little-endian)' etc. when `head` starts with a UTF-16 or UTF-32 byte order mark."""
    for bom, name, order in _WIDE_BOMS:
        if head.startswith(bom):
            return f"{name} ({order})"
    return None


def wide_text_advice(path: Path | str, encoding: str) -> str:
    family = encoding.split()[0]
    return (f"{encoding} text, not UTF-8 (it starts with a {family} byte order mark); convert it, e.g. "
            f"`iconv -f {family} -t UTF-8 {shell_word(path)} > {shell_word('utf8.' + Path(path).name)}`")


def not_utf8_reason(path: Path | str, data: bytes, exc: UnicodeDecodeError) -> str:
    """Why `data` (the file's bytes) is not UTF-8, in words a user can act on."""
    encoding = wide_encoding(data[:4])
    if encoding is not None:
        return wide_text_advice(path, encoding)
    return f"not UTF-8 text: {exc.reason} at byte {exc.start}"


def read_utf8(path: Path | str) -> str:
    """The file's text (UTF-8, a leading BOM dropped); NotUTF8 naming what it is otherwise. OSError passes."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotUTF8(not_utf8_reason(path, data, exc)) from None


class RepeatedKey(ValueError):
    """JSON or YAML text naming one key twice in one mapping; the message names the key and where it is."""


class _Repeated(dict):  # type: ignore[type-arg]
    """A JSON object that named `key` `times` times (json keeps the last value; we refuse it after the parse,
    when the object's place in the document is known)."""

    def __init__(self, pairs: list[tuple[str, Any]], key: str, times: int) -> None:
        super().__init__(pairs)
        self.key, self.times = key, times


def _pairs_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    keys = [k for k, _ in pairs]
    key = next(k for i, k in enumerate(keys) if k in keys[:i])
    return _Repeated(pairs, key, keys.count(key))


def _repeated_message(key: object, times: int, path: str, reader: str) -> str:
    place = f"in {path}" if path else "at the top level"
    return (f"names the key {key!r} {'twice' if times == 2 else f'{times} times'} {place} (a {reader} reader keeps "
            "only one of the values, silently); write it once")


def json_once(text: str) -> Any:
    """`json.loads(text)`, but RepeatedKey when an object names a key twice: a user's file (a config, a
    calls or state file) would otherwise lose one of the two values without a word (rt22-R11 F1: a JSON
    config naming "mine" twice ran on the defaults). Iterative walk: any depth the parse allowed is fine."""
    value = json.loads(text, object_pairs_hook=_pairs_once)
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Repeated):
            raise RepeatedKey(_repeated_message(item.key, item.times, path, "JSON"))
        if isinstance(item, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return value


def yaml_once(text: str) -> Any:
    """`yaml.safe_load(text)`, but RepeatedKey (with the key's line) when a mapping names a key twice:
    PyYAML keeps the last value silently. The document is composed first and its mappings walked (with
    anchors, a node can be reached twice: each is looked at once)."""
    import yaml  # installed with prefect

    stack: list[tuple[Any, str]] = [(yaml.compose(text, Loader=yaml.SafeLoader), "")]
    looked: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is None or id(node) in looked:
            continue
        looked.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = [(k.tag, k.value) if isinstance(k, yaml.ScalarNode) else None for k, _ in node.value]
            for i, (key_node, child) in enumerate(node.value):
                if keys[i] is not None and keys[i] in keys[:i]:
                    raise RepeatedKey(_repeated_message(key_node.value, keys.count(keys[i]), path, "YAML")
                                      + f" (line {key_node.start_mark.line + 1})")
                name = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
                stack.append((child, f"{path}.{name}" if path else str(name)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(node.value))
    return yaml.safe_load(text)


def json_value(text: str, where: str, error: type[Exception]) -> Any:
    """`json.loads(text)`, or `error` naming `where` and why in one line: not JSON, nested deeper than the
    parser recurses, an object naming a key twice (`json_once`), or an integer longer than Python reads
    from text (rt17-B F3: a bare RecursionError escaped naming no file, and a 5,000-digit integer in a
    JSONL line was called an unreadable Parquet file)."""
    try:
        return json_once(text)
    except RepeatedKey as exc:
        raise error(f"{where}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not JSON: {exc}") from None
    except RecursionError:
        raise error(f"{where}: nested too deeply to read") from None
    except ValueError:  # the only other: int() of a literal over the interpreter's digit limit
        raise error(f"{where}: an integer of more than {sys.get_int_max_str_digits()} digits, "
                    "which Python does not read from text") from None


def jsonl_objects(path: Path, error: type[Exception]) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL file (the BFCL data, an RL export); a line
    that is not UTF-8 or not a JSON object (`json_value`) raises `error` naming file and line, so each reader
    keeps its own error type (a UnicodeDecodeError named neither: rt10-A F5)."""
    rows = []
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(f"{path}:{lineno}: not UTF-8 (byte {exc.start + 1} of the line)") from None
            if not line.strip():
                continue
            row = json_value(line, f"{path}:{lineno}", error)
            if not isinstance(row, dict):
                raise error(f"{path}:{lineno}: expected a JSON object")
            rows.append((lineno, row))
    return rows
