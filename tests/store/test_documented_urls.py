"""Spec: every DuckDB store URL the docs show is one the store accepts (a doc that still said
`duckdb:///envscaler.duckdb` sent new users to a refused, directory-dependent URL)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envscaler_core.store.urls import parse_store_url

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
URL = re.compile(r"duckdb:///[^\s`'\")\]]+")


def _documented() -> list[tuple[str, str]]:
    return [(path.name, url.rstrip(".,;:")) for path in DOCS for url in URL.findall(path.read_text(encoding="utf-8"))]


def test_the_docs_show_store_urls() -> None:
    assert _documented(), "no duckdb URL found in the docs: the pattern is stale"


@pytest.mark.parametrize(("doc", "url"), _documented())
def test_each_documented_duckdb_url_is_accepted(doc: str, url: str) -> None:
    if "..." in url:
        pytest.skip("a placeholder")
    assert parse_store_url(url).path is not None
