"""Where a run's source files are: recorded absolute, so that a resume from any directory finds them.

A deployment's default source is relative (`envscaler_core/data/...`, resolved in the worker's
ENVSCALER_HOME); runs used to record it as given, and `envscaler resume` from any other directory
then said the file was gone although it was in place. New runs record absolute paths; a run recorded
before that is looked up in the directories a relative path can have meant, and its record is
rewritten to the absolute paths once they are found.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from envscaler_core.models import Run


def absolute(path: str, base: Path) -> str:
    """`path` as an absolute, normalised path; a relative one is taken in `base`."""
    return str((base / path).resolve()) if not Path(path).is_absolute() else str(Path(path).resolve())


def search_dirs(cwd: Path | None = None) -> list[Path]:
    """Where a relative recorded path can have been meant: this process's directory, then the
    worker checkout that deployments run in (ENVSCALER_HOME), once each."""
    dirs = [cwd or Path.cwd()]
    if home := os.environ.get("ENVSCALER_HOME"):
        dirs.append(Path(home).expanduser())
    return list(dict.fromkeys(d.resolve() for d in dirs))


def locate(paths: Sequence[str], dirs: Sequence[Path]) -> tuple[dict[str, str], list[str]]:
    """Each path that names a file, mapped to its absolute form (a relative one: the first of `dirs`
    holding it), and the paths found nowhere."""
    found: dict[str, str] = {}
    missing: list[str] = []
    for path in paths:
        candidates = [absolute(path, d) for d in ([Path("/")] if Path(path).is_absolute() else dirs)]
        hit = next((c for c in candidates if Path(c).is_file()), None)
        if hit is None:
            missing.append(path)
        else:
            found[path] = hit
    return found, missing


def where_looked(paths: Sequence[str], dirs: Sequence[Path]) -> str:
    """The directories a relative path among `paths` was looked for in, for an error line ('' if none)."""
    if all(Path(p).is_absolute() for p in paths):
        return ""
    return f" (relative paths resolved against {' and '.join(str(d) for d in dirs)})"


def with_sources_at(run: Run, found: dict[str, str]) -> Run:
    """`run` with its recorded sources (and its sources report's file paths) replaced by their
    absolute forms, so later resumes, checks and reports name the same file the same way."""
    if all(found.get(p, p) == p for p in run.sources):
        return run
    update: dict[str, object] = {"sources": list(dict.fromkeys(found.get(p, p) for p in run.sources))}
    if run.sources_report is not None:
        files = [f.model_copy(update={"path": found.get(f.path, f.path)}) for f in run.sources_report.files]
        update["sources_report"] = run.sources_report.model_copy(update={"files": files})
    return run.model_copy(update=update)


def missing_message(missing: Sequence[str], dirs: Sequence[Path], run: Run | None) -> str:
    """One line for sources not found: where relative ones were looked for, and, only for files the
    run really read before, that putting them back continues it."""
    line = f"source file(s) not found: {', '.join(missing)}{where_looked(missing, dirs)}"
    if run is not None and run.sources_report is not None:
        read = {f.path for f in run.sources_report.files}
        if all(p in read or absolute(p, dirs[0]) in read for p in missing):
            line += " (the run read its tasks from there; put the file back at that path to continue the run)"
    return line


def anchor_run_sources(store: object, run_id: str, sources: Sequence[str], reads: bool) -> list[str]:
    """The flow's sources as absolute paths, checked before anything is written: a source that is gone
    raises `SourceError` when the flow would read it (`reads`), so a new run leaves no failed row. An
    existing run recorded with relative paths gets its record rewritten to the absolute ones found."""
    from envscaler_core.pipeline.stages import SourceError

    run: Run | None = store.get_run(run_id)  # type: ignore[attr-defined]
    dirs = search_dirs()
    found, missing = locate(sources, dirs)
    if missing and reads:
        raise SourceError(missing_message(missing, dirs, run))
    if run is not None:
        fixed = with_sources_at(run, locate(run.sources, dirs)[0])
        if fixed is not run:
            store.save_run(fixed)  # type: ignore[attr-defined]
    return list(dict.fromkeys(found.get(p) or absolute(p, dirs[0]) for p in sources))
