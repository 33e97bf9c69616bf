"""Spec: the two generic hooks BFCL needs, on plain classes.

* `JailImports`: an installed package the jail cannot read where it lives is copied (world-readable,
  read-only in the jail) and importable by env code; a preloaded module is imported once by the zygote;
  a preload that fails stops the pool with the module's error.
* `__sandbox_state__` / `__sandbox_restore__`: a class whose state is Python objects owns its state
  representation: the snapshot is the episode's state and diff, and the restore hook is what rolls a
  failed call back and rebuilds a killed episode.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envscaler_core.config import SandboxSettings
from envscaler_core.runtime import EnvLoadError
from sandbox import JailImports, SandboxPool, SandboxUnavailable

OBJECT_STATE = '''
import os
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)

class Canvas:
    def __init__(self, config=None):
        self.points = {Point(0, 0)} if False else [Point(0, 0)]
        self.loads = 0
    def add(self, x: int, y: int) -> str:
        self.points.append(Point(x, y))
        return "added"
    def add_then_fail(self, x: int) -> str:
        self.points.append(Point(x, x))
        raise ValueError("no")
    def die(self) -> str:
        os._exit(3)
    def __sandbox_state__(self):
        return {"points": [[p.x, p.y] for p in self.points]}
    def __sandbox_restore__(self, state):
        self.loads += 1
        self.points = [Point(x, y) for x, y in state["points"]]
'''

HALF_HOOKED = '''
class Half:
    def __init__(self, config=None):
        self.n = 0
    def __sandbox_state__(self):
        return {"n": self.n}
'''


@pytest.fixture(scope="module")
def pkg_pool(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("pkgsrc")
    package = root / "geometry_helpers"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("LOADED_BY = 'zygote'\ndef norm(x, y):\n    return (x * x + y * y) ** 0.5\n")
    (package / "data" / "big.json").write_text("{}")
    root.chmod(0o700)  # like /root: uid 65534 could not read it in place
    imports = JailImports(packages=[package], skip=("__pycache__", "geometry_helpers/data"), preload=("geometry_helpers",))
    pool = SandboxPool(SandboxSettings(workers=1), imports=imports)
    yield pool
    pool.close()


def test_an_unreadable_installed_package_is_importable_in_the_jail(pkg_pool: SandboxPool) -> None:
    code = ("import geometry_helpers, os\nclass Env:\n    def __init__(self, c=None):\n        pass\n"
            "    def norm(self) -> dict:\n        return {'n': geometry_helpers.norm(3, 4), 'by': geometry_helpers.LOADED_BY,\n"
            "                'data': os.path.exists(os.path.join(os.path.dirname(geometry_helpers.__file__), 'data'))}\n")
    with pkg_pool.open_episode(code, "Env", {}) as ep:
        out = ep.call("norm", {})
    assert out.ok and out.result == {"n": 5.0, "by": "zygote", "data": False}


def test_the_copied_package_is_read_only_in_the_jail(pkg_pool: SandboxPool) -> None:
    code = ("import geometry_helpers\nclass Env:\n    def __init__(self, c=None):\n        pass\n"
            "    def tamper(self) -> str:\n        open(geometry_helpers.__file__, 'a').write('x=1')\n        return 'written'\n")
    with pkg_pool.open_episode(code, "Env", {}) as ep:
        out = ep.call("tamper", {})
    assert not out.ok and out.error_kind == "exception"


def test_a_preload_that_fails_stops_the_pool_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="preloading no_such_module failed: ModuleNotFoundError"):
        SandboxPool(SandboxSettings(workers=1), imports=JailImports(preload=("no_such_module",)))


def test_a_missing_package_is_named(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="does not exist"):
        SandboxPool(SandboxSettings(workers=1), imports=JailImports(packages=[tmp_path / "nope"]))


def test_the_snapshot_hook_is_the_state_and_the_diff(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(OBJECT_STATE, "Canvas", {}) as ep:
        assert ep.state == {"points": [[0, 0]]}
        out = ep.call("add", {"x": 2, "y": 3})
    assert out.state == {"points": [[0, 0], [2, 3]]}
    assert out.state_diff == {"changes": [{"op": "add", "path": "/points/1", "new": [2, 3]}]}


def test_a_failed_call_is_rolled_back_through_the_restore_hook(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(OBJECT_STATE, "Canvas", {}) as ep:
        failed = ep.call("add_then_fail", {"x": 7})
        after = ep.call("add", {"x": 1, "y": 1})
    assert not failed.ok and failed.state == {"points": [[0, 0]]}
    assert after.state == {"points": [[0, 0], [1, 1]]}


def test_a_killed_episode_is_rebuilt_through_the_restore_hook(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(OBJECT_STATE, "Canvas", {}) as ep:
        ep.call("add", {"x": 5, "y": 5})
        dead = ep.call("die", {})
        after = ep.call("add", {"x": 6, "y": 6})
        restarts = ep.restarts
    assert dead.error_kind == "crash" and restarts == 1
    assert after.state == {"points": [[0, 0], [5, 5], [6, 6]]}


def test_a_class_with_one_hook_does_not_load(sandbox_pool: SandboxPool) -> None:
    with pytest.raises(EnvLoadError, match="both __sandbox_state__ and __sandbox_restore__"):
        sandbox_pool.open_episode(HALF_HOOKED, "Half", {})
