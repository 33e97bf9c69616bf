"""Spec: a class whose own `__init__` makes a set (`self.banned: Set[str] = set()`, EnvScaler's usual
style) is validated in the faithful form whatever state it is tried on: the set comes back as EnvScaler's
set marker, not as an unserialisable state. Before, only a state that itself held a marker got the
faithful form, so the same class was accepted or rejected ("state is not JSON-serialisable") depending on
which scenarios happened to be imported, and `validate --state` rejected it on a marker-free state
(outside check F4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


from envscaler_core.models.interop import ImportedEnv
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for

REPO = Path(__file__).resolve().parents[2]

CODE = '''from typing import Dict, Set


class Club:
    def __init__(self, init_config: dict):
        self.members: Dict[str, dict] = {}
        self.banned: Set[str] = set()

    def get_member(self, name: str) -> dict:
        """Get a member by name."""
        if name not in self.members:
            return {"success": False, "error": "no such member"}
        return {"success": True, "data": self.members[name]}

    def join(self, name: str) -> dict:
        """Add a new member, unless banned or already a member."""
        if name in self.banned:
            return {"success": False, "error": "banned"}
        if name in self.members:
            return {"success": False, "error": "already a member"}
        self.members[name] = {"name": name}
        return {"success": True, "message": f"{name} joined"}
'''
TOOLS = [{"type": "function", "function": {"name": name, "description": text, "parameters": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
    for name, text in (("get_member", "Get a member by name."), ("join", "Add a new member."))]
ENV = {"env_id": "env_club", "environment_summary": "Club", "environment_introduction": "A club.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "Club", "env_class_code": CODE,
       "operation_list": [{"operation_name": "get_member", "operation_description": "Get.", "operation_type": "query"},
                          {"operation_name": "join", "operation_description": "Join.",
                           "operation_type": "state_change"}],
       "tools": TOOLS}


def test_an_env_with_no_scenario_is_accepted_on_the_empty_state(tmp_path: Path, sandbox_pool: Any) -> None:
    directory = tmp_path / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_club": ENV}))
    (directory / "rl_scenario_metadata.json").write_text("[]")
    (directory / "sft_scenario_metadata.json").write_text("[]")
    settings = settings_for(tmp_path)
    run_import(directory, settings, sandbox_pool, run_id="club")
    with Store.from_url(settings.store.url) as store:
        [env] = store.query(ImportedEnv, run_id="club")
    assert (env.status, env.reasons) == ("accepted", [])


def test_validate_on_a_marker_free_state_reports_the_set_as_a_marker(tmp_path: Path) -> None:
    (tmp_path / "club.py").write_text(CODE)
    (tmp_path / "state.json").write_text(json.dumps({"members": {"ann": {"name": "ann"}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "validate", "--code", str(tmp_path / "club.py"),
                          "--state", str(tmp_path / "state.json"), "--mode", "programmatic", "--full"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    joined = next(r for r in json.loads(out.stdout)["rounds"] if r["tool"] == "join" and r["verdict"] == "pass")
    assert joined["state_after"]["banned"] == {"__type__": "set", "items": []}
