"""Spec: installing the project prints no setuptools deprecation warning. setuptools >= 77 warns about a
`license = {text = ...}` table (PEP 639 wants an SPDX expression), and a License classifier next to an
SPDX expression is an error there, so the metadata must be the new form and ask for a setuptools that reads it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_license_is_an_spdx_expression_and_setuptools_reads_it() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "MIT"
    assert not [c for c in pyproject["project"].get("classifiers", []) if c.startswith("License ::")]
    setuptools = next(r for r in pyproject["build-system"]["requires"] if r.startswith("setuptools"))
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", setuptools)
    assert minimum and int(minimum.group(1)) >= 77, setuptools
