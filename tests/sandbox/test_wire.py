"""Issue 10: the host trusts nothing it reads. A unit that writes its own reply frames (or rebinds the
worker's serialiser) gets a `crash` verdict naming the rule it broke; nothing raises out of `call`,
`open_episode` or `run_checks`, the episode goes on from its last good state and the pool still serves."""

from __future__ import annotations

import pytest

from envscaler_core.runtime import EnvLoadError
from sandbox import SandboxPool
from tests.sandbox.helpers import attack_code, benign_call_works, wait_for_process_count

DEEP = "b'{\"ok\":true,\"result\":' + b'[' * 5000 + b']' * 5000 + b',\"output\":\"\"}'"


@pytest.mark.parametrize("frame, needle", [
    (DEEP, "nesting deeper than"),
    ("b'{\"ok\":true,\"result\":NaN,\"output\":\"\"}'", "NaN is not JSON"),
    ("b'{\"ok\":true,\"result\":-Infinity,\"output\":\"\"}'", "-Infinity is not JSON"),
    ("b'{\"ok\":true,\"result\":1e999,\"output\":\"\"}'", "overflows to infinity"),
    ("b'{\"ok\":true,\"result\":\"\\\\udcff\",\"output\":\"\"}'", "lone surrogate"),
    ("b'{\"ok\":true,\"result\":' + b'7' * 4000 + b',\"output\":\"\"}'", "integer of 4000 digits"),
    ("b'{\"ok\":true,\"result\":\"\\xed\\xa0\\x80\",\"output\":\"\"}'", "not valid UTF-8"),
    ("b'{\"ok\":true,\"result\":\"\\xff\",\"output\":\"\"}'", "not valid UTF-8"),
    ("b'[1, 2]'", "not a JSON object"),
    ("b'{\"ok\":true,\"result\":1,\"output\":\"\",\"state\":[1]}'", "state is not an object"),
    ("b'{\"ok\":true,\"result\":1,\"output\":7}'", "output is not a string"),
    ("b'{\"ok\":true,\"result\":1,\"output\":\"\",\"extra\":1}'", "unexpected keys"),
    ("b'{\"ok\":\"yes\",\"error_kind\":\"exception\",\"error\":\"e\",\"output\":\"\"}'", "garbage on the wire"),
    ("b'{\"ok\":false,\"error_kind\":\"load\",\"error\":\"e\",\"output\":\"\"}'", "garbage on the wire"),
    ("b'{\"ok\":false,\"error_kind\":\"exception\",\"error\":[1],\"output\":\"\"}'", "garbage on the wire"),
    ("b'{\"ok\":true,\"result\":1,\"output\":\"' + b'x' * (200 << 10) + b'\"}'", "output cap"),
])
def test_forged_replies_are_crash_verdicts(jail: SandboxPool, frame: str, needle: str) -> None:
    with jail.open_episode(attack_code(f"forge({frame})"), "Attack", {"n": 0}) as ep:
        assert ep.call("ping", {}).state == {"n": 1}
        out = ep.call("attack", {})
        assert (out.ok, out.error_kind) == (False, "crash"), out
        assert needle in out.error, out.error
        assert out.state == {"n": 1}
        out.model_dump_json()  # nothing downstream chokes on the verdict
        after = ep.call("ping", {})
        assert after.ok and after.state == {"n": 2}, "not rebuilt from the last good state"
        assert ep.restarts == 1
    assert benign_call_works(jail)


@pytest.mark.parametrize("smuggled, needle", [
    ('\'{"a": NaN}\'', "NaN"),
    ('\'"\\\\ud800"\'', "lone surrogate"),
    ('"[" * 3000 + "]" * 3000', "nesting deeper than"),
    ('str(10 ** 3999)', "integer of 4000 digits"),
])
def test_a_rebound_serialiser_cannot_smuggle_what_the_wire_refuses(jail: SandboxPool, smuggled: str,
                                                                    needle: str) -> None:
    body = f"""
        import sys
        main = sys.modules['__main__']
        main.strict_dumps = lambda *a, **k: {smuggled}
        main.dumps = lambda *a, **k: {smuggled}
        return 1
    """
    with jail.open_episode(attack_code(body), "Attack", {"n": 0}) as ep:
        out = ep.call("attack", {})
        assert (out.ok, out.error_kind) == (False, "crash") and needle in out.error, out
        assert ep.call("ping", {}).ok


def test_a_forged_load_reply_is_a_load_error_not_an_exception(jail: SandboxPool) -> None:
    code = ("import os, sys, time\n"
            "fd = [int(n) for n in os.listdir('/proc/self/fd') if os.path.realpath(f'/proc/self/fd/{n}') != '/dev/null']\n"
            "body = b'{\"ok\":true,\"state\":' + b'[' * 5000 + b']' * 5000 + b',\"output\":\"\"}'\n"
            "for f in fd:\n"
            "    try:\n"
            "        os.write(f, len(body).to_bytes(4, 'big') + body)\n"
            "    except OSError:\n"
            "        pass\n"
            "time.sleep(30)\n")
    with pytest.raises(EnvLoadError, match="nesting deeper than"):
        jail.open_episode(code, "A", {})
    assert benign_call_works(jail)


def test_a_forged_check_reply_is_unscored(jail: SandboxPool, baseline: int) -> None:
    cheat = ("import os, sys, time, json\n"
             "def check_func(final_state):\n"
             "    body = b'{\"passed\":true,\"error\":null,\"x\":' + b'[' * 5000 + b']' * 5000 + b'}'\n"
             "    for fd in range(3, 64):\n"
             "        try:\n"
             "            os.write(fd, len(body).to_bytes(4, 'big') + body)\n"
             "        except OSError:\n"
             "            pass\n"
             "    time.sleep(30)\n")
    sneaky = ("import os, time\n"
              "def check_func(final_state):\n"
              "    body = b'{\"passed\":true,\"error\":null,\"bonus\":1}'\n"
              "    for fd in range(3, 64):\n"
              "        try:\n"
              "            os.write(fd, len(body).to_bytes(4, 'big') + body)\n"
              "        except OSError:\n"
              "            pass\n"
              "    time.sleep(30)\n")
    out = jail.run_checks([cheat, sneaky, "def check_func(s):\n    return False\n"], {}, {})
    assert [o.passed for o in out] == [None, None, False]
    assert "nesting deeper than" in out[0].error and "garbage on the wire" in out[1].error
    assert wait_for_process_count(jail, baseline) == baseline


def test_a_huge_state_diff_is_capped(jail: SandboxPool) -> None:
    code = attack_code("for i in range(60000):\n    setattr(self, f'k{i}', i)\nreturn 1")
    with jail.open_episode(code, "Attack", {"n": 0}) as ep:
        out = ep.call("attack", {})
        assert out.ok and out.state_diff["truncated"] is True and len(out.state_diff["changes"]) == 1000
        assert len(out.state) == 60001
