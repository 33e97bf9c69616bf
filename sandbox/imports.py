"""Trusted, installed Python packages made importable (read-only) inside the jail.

The jail sees only /usr, the interpreter and the pool's world-readable work directory, and runs as uid
65534, which cannot read a virtualenv under /root. So a package that env code needs (a benchmark's
own API classes, say) is *copied* into `<workdir>/site/`, world-readable; the worker puts that
directory at the end of `sys.path` (it never shadows the standard library). Modules listed in
`preload` are imported once by the zygote, so each forked episode has them for free.

Only installed packages belong here, never LLM-written code: preloading runs a module's top level in
the zygote, which is in the jail (no network, read-only file system, uid 65534) but outside the
per-episode seccomp filter and rlimits.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

SITE_DIR = "site"


class JailImports(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    packages: tuple[Path, ...] = Field(default=(), description="Package directories or single-module files.")
    skip: tuple[str, ...] = Field(default=("__pycache__",), description="Globs on paths relative to a package's parent.")
    preload: tuple[str, ...] = Field(default=(), description="Modules the zygote imports once, before any fork.")
    warm_up: tuple[dict[str, Any], ...] = Field(default=(), description=(
        "Episodes ({code, class_name, init, calls: [{tool, args}]}) the zygote runs `warm_up_rounds` times "
        "after preloading, before any fork, so every unit starts warm (jail_zygote.py, `warm_up`). Trusted "
        "code and data only: they run in the zygote, outside the per-unit seccomp filter."))
    warm_up_rounds: int = Field(default=4, ge=1, le=50)

    @field_validator("preload")
    @classmethod
    def _dotted_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        bad = [n for n in names if not all(part.isidentifier() for part in n.split("."))]
        if bad:
            raise ValueError(f"preload entries must be dotted module names, got {bad}")
        return names


def _skipped(relative: str, patterns: tuple[str, ...]) -> bool:
    parts = relative.split("/")
    return any(fnmatch.fnmatch(relative, p) or any(fnmatch.fnmatch(part, p) for part in parts) for p in patterns)


def _readable(path: Path, is_dir: bool) -> None:
    os.chmod(path, 0o755 if is_dir else stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)


WARM_UP_FILE = "warm_up.json"  # read by the zygote (jail_zygote.py), next to the jail modules


def stage_imports(imports: JailImports, workdir: str) -> None:
    """Copy every package into `<workdir>/site/` (world-readable) and write the warm-up episodes; raise
    ValueError naming a bad entry."""
    if imports.warm_up:
        target = Path(workdir) / WARM_UP_FILE
        target.write_text(json.dumps({"rounds": imports.warm_up_rounds, "episodes": list(imports.warm_up)}),
                          encoding="utf-8")
        _readable(target, False)
    if not imports.packages:
        return
    site = Path(workdir) / SITE_DIR
    site.mkdir()
    _readable(site, True)
    for source in imports.packages:
        source = Path(source)
        if not source.exists():
            raise ValueError(f"jail import {source} does not exist")
        target = site / source.name
        if target.exists():
            raise ValueError(f"two jail imports are named {source.name!r}")
        if source.is_file():
            shutil.copyfile(source, target)
            _readable(target, False)
            continue
        for root, dirs, files in os.walk(source):
            rel_root = Path(root).relative_to(source.parent)
            dirs[:] = [d for d in dirs if not _skipped(str(rel_root / d), imports.skip)]
            (site / rel_root).mkdir(exist_ok=True)
            _readable(site / rel_root, True)
            for name in files:
                if _skipped(str(rel_root / name), imports.skip):
                    continue
                shutil.copyfile(Path(root) / name, site / rel_root / name)
                _readable(site / rel_root / name, False)
