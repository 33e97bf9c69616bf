"""What an import was made from (each file's digest, the sidecar, `--solve`), kept on its run row, and what
differs when the same run id is imported again.

An import into an existing import run used to be compared by source paths alone: a changed file at the
same path, another sidecar or `--solve` was accepted, its records were stored beside the old ones (by
fingerprint) and the store held two audits of one run, with the rollout's trajectories tied to the old
one (interop re-check, F1). Now the same inputs are a no-op and any difference is refused, naming it.
"""

from __future__ import annotations

from pathlib import Path

from envscaler_core.interop.read import reading_names
from envscaler_core.mine.source_report import file_digest
from envscaler_core.models.source_report import SourceFileReport, SourceReport

ENVS, SCENARIOS, SIDECAR, OPTION = "envscaler-envs", "envscaler-scenarios", "envscaler-solutions", "import-option"


def import_sources(envs_path: Path, scenario_paths: list[Path], solutions_path: Path | None, solve: bool,
                   attempts: int) -> SourceReport:
    """The inputs of one import, each file with the sha256 of its bytes now (before it is read); `--solve`
    as one entry of its own, since the agent's solutions change what is stored."""
    files = [_entry(envs_path, ENVS), *(_entry(p, SCENARIOS) for p in scenario_paths)]
    if solutions_path is not None:
        files.append(_entry(solutions_path, SIDECAR))
    if solve:
        files.append(SourceFileReport(path=f"--solve --attempts {attempts}", dataset=OPTION))
    return SourceReport(files=files)


def _entry(path: Path, kind: str) -> SourceFileReport:
    return SourceFileReport(path=str(Path(path).resolve()), dataset=kind, sha256=file_digest(path))


def difference(before: SourceReport | None, now: SourceReport) -> str | None:
    """The first way `now` differs from the inputs the run was imported from, in words; None if identical.
    An import stored before digests were kept cannot be compared: that is a difference too."""
    if before is None or not any(f.sha256 for f in before.files):
        return "it was imported before an import kept its files' digests, so these cannot be shown to be the same"
    old, new = _by_kind(before), _by_kind(now)
    for kind, what in ((ENVS, "env metadata file"), (SCENARIOS, "scenario files"), (SIDECAR, "reference-solutions "
                       "sidecar"), (OPTION, "--solve option")):
        o, n = old.get(kind, {}), new.get(kind, {})
        if set(o) != set(n):
            return f"its {what} {_paths(o) or '(none)'}, here {_paths(n) or '(none)'}"
        changed = [p for p in n if n[p] != o[p]]
        if changed and kind != SIDECAR:
            return f"the contents of {', '.join(changed)} changed since it was imported"
        if changed:
            return f"the contents of its {what} {', '.join(changed)} changed since it was imported"
    return None


def _by_kind(report: SourceReport) -> dict[str, dict[str, str | None]]:
    out: dict[str, dict[str, str | None]] = {}
    for f in report.files:
        out.setdefault(f.dataset, {})[f.path] = f.sha256
    return out


def _paths(found: dict[str, str | None]) -> str:
    return ", ".join(sorted(found))


def counted(inputs: SourceReport, envs: int, env_problems: list, scenarios: list, scen_problems: list,
            solutions: int = 0, sol_problems: int = 0) -> SourceReport:
    """`inputs` with what reading them gave (records kept and malformed per file), as `status` shows it."""
    files = []
    scenario_files = [Path(f.path) for f in inputs.files if f.dataset == SCENARIOS]
    names = iter(reading_names(scenario_files))  # a file given twice: each reading counted on its own
    for f in inputs.files:
        name = next(names) if f.dataset == SCENARIOS else Path(f.path).name
        if f.dataset == ENVS:
            kept, bad = envs, len(env_problems)
        elif f.dataset == SCENARIOS:
            kept = sum(1 for s in scenarios if s.source.startswith(name + "["))
            mine = [p for p in scen_problems if getattr(p, "file", None) == name]
            repeats = [str(p) for p in mine if p.duplicate]
            bad = len(mine) - len(repeats)
            files.append(f.model_copy(update={"records": kept + bad + len(repeats), "kept": kept, "malformed": bad,
                                              "duplicates": len(repeats), "problems": repeats[:5]}))
            continue
        elif f.dataset == SIDECAR:
            kept, bad = solutions, sol_problems
        else:
            files.append(f)
            continue
        files.append(f.model_copy(update={"records": kept + bad, "kept": kept, "malformed": bad}))
    return inputs.model_copy(update={"files": files})
