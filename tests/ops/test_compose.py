"""Spec: the ops files (docker-compose.yml, Dockerfile, deployments/prefect.yaml) agree with the code.

There is no Docker engine in CI, so the topology cannot be brought up here; instead every name one
file uses for something another file (or the code) defines is checked against that definition:
environment variables against what `load_settings` and Prefect read, pool names, entrypoints and
parameter names, image versions against the pins, and the Dockerfile against the package list.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from envscaler_core.config import load_settings

REPO = Path(__file__).resolve().parents[2]
FACTORY_ENV_KEYS = ("ENVSCALER_DB_URL", "OPENAI_BASE_URL", "PREFECT_API_URL", "ENVSCALER_SANDBOX__PYTHON")
_DEFAULTED = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def _interpolate(value: str, environ: dict[str, str]) -> str:
    """Compose's `${VAR:-default}` substitution, for an operator who exported nothing."""
    return _DEFAULTED.sub(lambda m: environ.get(m.group(1)) or (m.group(2) or ""), value)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def prefect_yaml() -> dict[str, Any]:
    return yaml.safe_load((REPO / "deployments" / "prefect.yaml").read_text())


@pytest.fixture(scope="module")
def pyproject() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


@pytest.fixture(scope="module")
def dockerfile() -> list[str]:
    """Instructions with continuation lines joined."""
    return (REPO / "Dockerfile").read_text().replace("\\\n", " ").splitlines()


def _worker_env(compose: dict[str, Any]) -> dict[str, str]:
    env = compose["services"]["worker"]["environment"]
    return {k: _interpolate(str(v), {}) for k, v in env.items()}


def _option(argv: list[str] | str, flag: str) -> str:
    words = argv.split() if isinstance(argv, str) else argv
    assert flag in words, f"{flag} missing from {words}"
    return words[words.index(flag) + 1]


def _pinned_prefect(pyproject: dict[str, Any]) -> str:
    [pin] = [d for d in pyproject["project"]["dependencies"] if d.startswith("prefect==")]
    return pin.split("==", 1)[1]


def _pools(prefect_yaml: dict[str, Any]) -> set[str]:
    return {d["work_pool"]["name"] for d in prefect_yaml["deployments"]}


def test_compose_defines_the_topology_with_vllm_only_under_the_gpu_profile(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"postgres", "prefect-server", "worker", "mock-llm", "vllm"} <= set(services)
    assert services["vllm"].get("profiles") == ["gpu"]
    defaults = [name for name, svc in services.items() if name != "vllm" and svc.get("profiles")]
    assert defaults == [], f"services hidden behind a profile: {defaults}"


def test_worker_env_names_are_the_ones_the_code_reads(compose: dict[str, Any]) -> None:
    env = _worker_env(compose)
    assert set(FACTORY_ENV_KEYS) <= set(env), sorted(set(FACTORY_ENV_KEYS) - set(env))
    settings = load_settings(environ=env)
    assert settings.store.url == env["ENVSCALER_DB_URL"]
    assert settings.llm.base_url == env["OPENAI_BASE_URL"] == "http://mock-llm:8000/v1"
    assert settings.llm.api_key == env["OPENAI_API_KEY"]
    assert settings.sandbox.python == env["ENVSCALER_SANDBOX__PYTHON"]


def test_worker_prefect_api_url_is_read_by_prefect_and_points_at_the_server(compose: dict[str, Any],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.settings.models.root import Settings as PrefectSettings

    url = _worker_env(compose)["PREFECT_API_URL"]
    monkeypatch.setenv("PREFECT_API_URL", url)
    assert PrefectSettings().api.url == url
    server = compose["services"]["prefect-server"]
    parts = urlsplit(url)
    assert parts.hostname == "prefect-server" and parts.path == "/api"
    assert str(parts.port) == _option(server["command"], "--port")


def test_worker_urls_name_real_services_and_credentials(compose: dict[str, Any]) -> None:
    services, env = compose["services"], _worker_env(compose)
    db = urlsplit(env["ENVSCALER_DB_URL"])
    pg = services["postgres"]["environment"]
    assert db.hostname == "postgres"
    assert (db.username, db.password, db.path.lstrip("/")) == (pg["POSTGRES_USER"], pg["POSTGRES_PASSWORD"], pg["POSTGRES_DB"])
    llm = urlsplit(env["OPENAI_BASE_URL"])
    assert llm.hostname == "mock-llm"
    assert str(llm.port) == _option(services["mock-llm"]["command"], "--port")


def test_prefect_server_database_is_created_by_the_init_script(compose: dict[str, Any]) -> None:
    url = urlsplit(compose["services"]["prefect-server"]["environment"]["PREFECT_API_DATABASE_CONNECTION_URL"])
    assert url.hostname == "postgres"
    init = (REPO / "deployments" / "postgres-init.sql").read_text()
    assert re.search(rf"CREATE DATABASE {re.escape(url.path.lstrip('/'))}\b", init), init
    mounts = compose["services"]["postgres"]["volumes"]
    assert any(m.startswith("./deployments/postgres-init.sql:/docker-entrypoint-initdb.d/") for m in mounts), mounts


def test_mock_llm_service_runs_a_real_cli_verb(compose: dict[str, Any], dockerfile: list[str]) -> None:
    [entrypoint] = [line for line in dockerfile if line.startswith("ENTRYPOINT")]
    assert '"envscaler"' in entrypoint
    command = compose["services"]["mock-llm"]["command"]
    cli = Path(sys.executable).with_name("envscaler")
    helped = subprocess.run([str(cli), command[0], "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0, helped.stderr
    for flag in (w for w in command if w.startswith("--")):
        assert flag in helped.stdout, f"`envscaler {command[0]}` has no {flag}"


def test_workers_and_deploy_use_the_pool_of_prefect_yaml(compose: dict[str, Any], prefect_yaml: dict[str, Any]) -> None:
    pools = _pools(prefect_yaml)
    assert len(pools) == 1, pools
    [pool] = pools
    services = compose["services"]
    assert _option(services["worker"]["entrypoint"], "--pool") == pool
    assert _option(services["worker"]["entrypoint"], "--type") == "process"
    deploy = " ".join(services["deploy"]["command"])
    assert f"work-pool create {pool} --type process" in deploy
    assert _option(deploy, "--prefect-file") == "deployments/prefect.yaml"


def test_prefect_yaml_templates_are_set_in_the_worker_env(compose: dict[str, Any]) -> None:
    """Pull steps are rendered by the worker at run time: every `{{ $VAR }}` must exist there."""
    names = set(re.findall(r"\{\{\s*\$(\w+)\s*\}\}", (REPO / "deployments" / "prefect.yaml").read_text()))
    env = _worker_env(compose)
    assert names <= set(env), f"worker env lacks {sorted(names - set(env))}"
    [workdir] = [line.split()[1] for line in (REPO / "Dockerfile").read_text().splitlines() if line.startswith("WORKDIR")]
    assert env.get("ENVSCALER_HOME") == workdir


@pytest.mark.parametrize("index", [0, 1])
def test_prefect_yaml_entrypoints_are_flows_taking_the_given_parameters(prefect_yaml: dict[str, Any], index: int) -> None:
    from prefect import Flow
    from prefect.flows import load_flow_from_entrypoint

    deployment = prefect_yaml["deployments"][index]
    path, _, name = deployment["entrypoint"].partition(":")
    assert (REPO / path).is_file(), deployment["entrypoint"]
    loaded = load_flow_from_entrypoint(f"{REPO / path}:{name}")
    assert isinstance(loaded, Flow)
    signature = inspect.signature(loaded.fn)
    given = set(deployment.get("parameters", {}))
    assert given <= set(signature.parameters), f"{deployment['name']}: unknown {sorted(given - set(signature.parameters))}"
    required = {n for n, p in signature.parameters.items() if p.default is inspect.Parameter.empty}
    assert required <= given, f"{deployment['name']}: a scheduled run would lack {sorted(required - given)}"
    for source in deployment["parameters"].get("sources", []):
        assert (REPO / source).is_file(), f"{deployment['name']}: source {source} (relative to ENVSCALER_HOME)"


def test_images_match_the_pinned_prefect_and_python(compose: dict[str, Any], prefect_yaml: dict[str, Any],
                                                    pyproject: dict[str, Any], dockerfile: list[str]) -> None:
    pinned = _pinned_prefect(pyproject)
    image = compose["services"]["prefect-server"]["image"]
    assert image.startswith("prefecthq/prefect:"), image
    tag = image.split(":", 1)[1]
    assert tag.split("-")[0] == pinned, f"{image} vs prefect=={pinned}"
    assert str(prefect_yaml["prefect-version"]) == pinned
    python = re.search(r"python(\d+\.\d+)", tag).group(1)  # type: ignore[union-attr]
    assert f"<{python.split('.')[0]}.{int(python.split('.')[1]) + 1}" in pyproject["project"]["requires-python"]
    [base] = [line for line in dockerfile if line.startswith("FROM")]
    assert f"python:{python}-" in base, base


def test_dockerfile_copies_every_packaged_top_level_package(pyproject: dict[str, Any], dockerfile: list[str]) -> None:
    patterns = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = sorted({p.name for pattern in patterns for p in REPO.glob(pattern.rstrip("*") + "*")
                       if (p / "__init__.py").is_file()})
    assert {pattern.rstrip("*") for pattern in patterns} <= set(packages), packages
    copied = {line.split()[1] for line in dockerfile if line.startswith("COPY")}
    assert set(packages) <= copied, f"Dockerfile does not COPY {sorted(set(packages) - copied)}"
    readme = pyproject["project"].get("readme")
    install = [i for i, line in enumerate(dockerfile) if "pip install" in line]
    copies = [i for i, line in enumerate(dockerfile) if line.startswith("COPY")]
    assert install and max(copies) < install[0], "pip install runs before every COPY"
    assert readme is None or any(readme in line.split() for line in dockerfile if line.startswith("COPY"))


def test_sandbox_python_of_the_image_is_installed_by_the_dockerfile(compose: dict[str, Any], dockerfile: list[str]) -> None:
    python = _worker_env(compose)["ENVSCALER_SANDBOX__PYTHON"]
    apt = " ".join(line for line in dockerfile if "apt-get install" in line).split()
    assert Path(python).name in apt and "bubblewrap" in apt, apt
    assert f"ENV ENVSCALER_SANDBOX__PYTHON={python}" in dockerfile
    assert {"seccomp=unconfined", "apparmor=unconfined"} <= set(compose["services"]["worker"]["security_opt"])



def test_the_image_installs_bfcl_eval_the_way_the_makefile_does(dockerfile: list[str]) -> None:
    """`envscaler eval bfcl-mt` needs bfcl-eval, which is not in pyproject.toml (pip would resolve its torch,
    faiss and numpy pin): `make bfcl` installs it with --no-deps beside mpmath, and so must the image."""
    makefile = (REPO / "Makefile").read_text()
    [pins] = [line.split(":=", 1)[1].split() for line in makefile.splitlines() if line.startswith("BFCL_PACKAGES")]
    assert any(p.startswith("bfcl-eval==") for p in pins) and any(p.startswith("mpmath==") for p in pins), pins
    installs = [line.split() for line in dockerfile if line.startswith("RUN") and "pip install" in line]
    bfcl = [words for words in installs if any(w.startswith("bfcl-eval") for w in words)]
    assert len(bfcl) == 1, f"the Dockerfile does not install bfcl-eval: {installs}"
    [words] = bfcl
    assert "--no-deps" in words, words
    assert sorted(w for w in words if "==" in w) == sorted(pins), (words, pins)
    runs = [i for i, line in enumerate(dockerfile) if line.startswith("RUN") and "pip install" in line]
    bfcl_at = next(i for i in runs if "bfcl-eval" in dockerfile[i])
    assert runs[0] < bfcl_at, "bfcl-eval installed before the project, whose resolution could then replace mpmath"
