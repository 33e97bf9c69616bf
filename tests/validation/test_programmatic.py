"""Spec: the programmatic pass, run in the real sandbox, accepts a healthy class and vetoes each
contract breach from facts alone (no LLM involved: the test state is given)."""

from __future__ import annotations

import asyncio

from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from tests.scenarios.helpers import LIBRARY_CODE, STATE

SETTINGS = Settings.model_validate({"validate": {"mode": "programmatic"}})
KINDS = {"list_books": "query", "get_book": "query", "lend_book": "state_change"}


def candidate(code: str) -> EnvCandidate:
    return EnvCandidate(topic_fp="t", class_name="Library", class_code=code,
                        tools=extract_tools(code, "Library"), tool_kinds=KINDS)


def validate(code: str, runtime):
    return asyncio.run(validate_candidate(candidate(code), runtime, None, SETTINGS, test_state=STATE))


def test_healthy_class_is_accepted_with_every_tool_probed(runtime) -> None:
    out = validate(LIBRARY_CODE, runtime)
    assert out.report.accepted, out.report
    assert out.env is not None and out.env.env_id == f"env_{out.candidate_fp[:12]}"
    assert set(out.report.per_tool) == set(KINDS)
    assert {r.case_type for r in out.rounds if r.tool == "lend_book"} == {"positive", "negative"}


def test_positive_probe_really_changed_state_in_the_sandbox(runtime) -> None:
    out = validate(LIBRARY_CODE, runtime)
    lend = next(r for r in out.rounds if r.tool == "lend_book" and r.case_type == "positive")
    assert lend.observation == {"success": True, "message": "lent"}
    assert lend.state_after["books"]["b1"]["status"] == "lent" and lend.state_before["books"]["b1"]["status"] == "available"


def test_escaping_exception_rejects(runtime) -> None:
    code = LIBRARY_CODE.replace('''        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}''', '''        return {"success": True, "data": self.books[book_id]}''')
    out = validate(code, runtime)
    assert not out.report.accepted
    assert any("exception in get_book" in c and "KeyError" in c for c in out.report.critical), out.report.critical


def test_query_that_mutates_state_rejects(runtime) -> None:
    code = LIBRARY_CODE.replace('''        return {"success": True, "data": list(self.books.values())}''', '''        self.loans.append({"audit": "listed"})
        return {"success": True, "data": list(self.books.values())}''')
    out = validate(code, runtime)
    assert not out.report.accepted and "query tool list_books changed state" in out.report.critical


def test_failed_call_that_half_applies_rejects(runtime) -> None:
    code = LIBRARY_CODE.replace('''        book = self.books.get(book_id)
        if book is None:''', '''        book = self.books.get(book_id)
        self.loans.append({"book_id": book_id, "member": member})
        if book is None:''')
    out = validate(code, runtime)
    assert "lend_book reported failure but changed state" in out.report.critical


def test_non_dict_return_rejects(runtime) -> None:
    code = LIBRARY_CODE.replace('''        return {"success": True, "data": list(self.books.values())}''', '''        return list(self.books.values())''')
    assert "list_books returned list, not a dict" in validate(code, runtime).report.critical


def test_nondeterministic_ids_are_a_warning_not_a_veto(runtime) -> None:
    code = "import uuid\n" + LIBRARY_CODE.replace(
        '''self.loans.append({"book_id": book_id, "member": member})''',
        '''self.loans.append({"book_id": book_id, "member": member, "loan_id": uuid.uuid4().hex})''')
    out = validate(code, runtime)
    lend = next(r for r in out.rounds if r.tool == "lend_book" and r.case_type == "positive")
    assert lend.verdict == "warning" and "nondeterministic" in lend.reason
    assert out.report.accepted


def test_state_that_does_not_load_is_a_failure_not_a_crash(runtime) -> None:
    code = LIBRARY_CODE.replace('''        cfg = init_config or {}''', '''        cfg = init_config or {}
        assert "members" in cfg, "members are required"''')
    out = validate(code, runtime)
    assert not out.report.accepted and out.failure and "no loadable test state" in out.failure


def test_class_without_tools_is_not_validated(runtime) -> None:
    empty = EnvCandidate(topic_fp="t", class_name="Library", class_code="class Library:\n    pass\n")
    out = asyncio.run(validate_candidate(empty, runtime, None, SETTINGS, test_state={}))
    assert not out.report.accepted and out.failure == "the class exposes no tools"


def test_hanging_tool_is_killed_and_rejects() -> None:
    from envscaler_core.config import SandboxSettings
    from sandbox import SandboxPool

    code = LIBRARY_CODE.replace('''        return {"success": True, "data": list(self.books.values())}''', '''        while True:
            pass''')
    with SandboxPool(SandboxSettings(call_timeout_s=0.5)) as fast_pool:
        out = validate(code, fast_pool)
    assert any(c.startswith("timeout in list_books") for c in out.report.critical), out.report.critical


def test_unserialisable_state_rejects(runtime) -> None:
    code = LIBRARY_CODE.replace('''        book["status"] = "lent"''', '''        book["status"] = "lent"
        book["lent_to"] = {member}''')
    out = validate(code, runtime)
    assert any(c.startswith("unserializable in lend_book") for c in out.report.critical), out.report.critical


def test_boundary_probes_reach_numeric_parameters(runtime) -> None:
    code = LIBRARY_CODE + '''
    def renew(self, book_id: str, days: int) -> dict:
        """Extend a loan.

        Args:
            book_id: the book id
            days: extra days
        """
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "message": f"renewed for {days} days"}
'''
    out = asyncio.run(validate_candidate(
        EnvCandidate(topic_fp="t", class_name="Library", class_code=code, tools=extract_tools(code, "Library"),
                     tool_kinds={**KINDS, "renew": "query"}), runtime, None, SETTINGS, test_state=STATE))
    assert {"book_id": "b1", "days": 10**9} in [r.args for r in out.rounds if r.tool == "renew"]
    assert out.report.accepted


def test_the_rounds_setting_bounds_only_the_optional_probes(runtime) -> None:
    """Reaching every tool, its guarded records and its missing id is never cut by the budget; the
    out-of-range extras are."""
    code = LIBRARY_CODE + '''
    def renew(self, book_id: str, days: int) -> dict:
        """Extend a loan.

        Args:
            book_id: the book id
            days: extra days
        """
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "message": f"renewed for {days} days"}
'''
    cand = EnvCandidate(topic_fp="t", class_name="Library", class_code=code, tools=extract_tools(code, "Library"),
                        tool_kinds={**KINDS, "renew": "query"})
    tight = Settings.model_validate({"validate": {"mode": "programmatic", "rounds": 1}})
    out = asyncio.run(validate_candidate(cand, runtime, None, tight, test_state=STATE))
    assert {r.check for r in out.rounds} >= {"contract", "missing"} and "boundary" not in {r.check for r in out.rounds}
    assert not out.report.unreached and set(out.report.per_tool) == {*KINDS, "renew"}


WEARS_OUT = LIBRARY_CODE.replace('''        self.loans = cfg.get("loans", [])
''', '''        self.loans = cfg.get("loans", [])
        self._calls = 0

    def _tick(self) -> None:
        self._calls += 1
        if self._calls > 2:
            raise RuntimeError("worn out")
''').replace('''        return {"success": True, "data": list(self.books.values())}''', '''        self._tick()
        return {"success": True, "data": list(self.books.values())}''').replace('''        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}''', '''        self._tick()
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}''')


def test_a_class_that_breaks_only_after_a_few_calls_in_one_episode_rejects(runtime) -> None:
    assert "self._tick()" in WEARS_OUT
    out = validate(WEARS_OUT, runtime)
    assert not out.report.accepted
    sequence = [r for r in out.rounds if r.check == "sequence"]
    assert len(sequence) == 1 and sequence[0].verdict == "fail"
    assert any("worn out" in c and "one episode" in c for c in out.report.critical), out.report.critical


def test_a_sound_class_gets_no_sequence_round(runtime) -> None:
    out = validate(LIBRARY_CODE, runtime)
    assert out.report.accepted
    assert not [r for r in out.rounds if r.check == "sequence"]


def test_a_class_that_breaks_only_past_a_dozen_calls_in_one_episode_rejects(runtime) -> None:
    """An outside check's class raising from its 7th call passed when the sequence was one
    call per tool cycled to six: a rollout of a few dozen steps meets it."""
    late = WEARS_OUT.replace("if self._calls > 2:", "if self._calls > 12:")
    out = validate(late, runtime)
    assert not out.report.accepted
    assert any("worn out" in c and "one episode" in c for c in out.report.critical), out.report.critical


SESSION = LIBRARY_CODE.replace('''        self.loans = cfg.get("loans", [])
''', '''        self.loans = cfg.get("loans", [])
        self.member = None

    def login(self, member: str) -> dict:
        """Start a session.

        Args:
            member: member name
        """
        if not member:
            return {"success": False, "error": "no member"}
        self.member = member
        return {"success": True, "message": "logged in"}

    def my_loans(self) -> dict:
        """The loans of the member logged in.

        Args:
        """
        if self.member is None:
            return {"success": False, "error": "log in first"}
        return {"success": True, "data": [l for l in self.loans if l["member"] == self.member]}
''')


def test_a_query_that_answers_only_after_a_login_is_reached_after_it(runtime) -> None:
    kinds = {**KINDS, "login": "state_change", "my_loans": "query"}
    candidate = EnvCandidate(topic_fp="t", class_name="Library", class_code=SESSION,
                             tools=extract_tools(SESSION, "Library"), tool_kinds=kinds)
    out = asyncio.run(validate_candidate(candidate, runtime, None, SETTINGS, test_state=STATE))
    assert out.report.accepted, (out.report.score, out.report.reasons)
    reached = [r for r in out.rounds if r.tool == "my_loans" and r.observation.get("success") is True]
    assert reached and "after login" in reached[0].reason


TOKENS = '''
class Bank:
    def __init__(self, init_config: dict = None):
        cfg = init_config or {}
        self.customers = cfg.get("customers", {})
        self.sessions = cfg.get("sessions", {})
        self.opened = cfg.get("opened", 0)

    def open_session(self, customer_id: str, pin: str) -> dict:
        """Open a session and hand back its token.

        Args:
            customer_id: the customer
            pin: their PIN
        """
        customer = self.customers.get(customer_id)
        if customer is None or customer["pin"] != pin:
            return {"success": False, "error": "authentication failed"}
        self.opened += 1
        token = f"tok-{self.opened}"
        self.sessions[token] = customer_id
        return {"success": True, "data": {"session_token": token}}

    def balance(self, session_token: str) -> dict:
        """The balance of the session's customer.

        Args:
            session_token: a token from open_session
        """
        owner = self.sessions.get(session_token)
        if owner is None:
            return {"success": False, "error": "invalid session"}
        return {"success": True, "data": self.customers[owner]["balance"]}

    def withdraw(self, session_token: str, amount: float) -> dict:
        """Withdraw money in a session.

        Args:
            session_token: a token from open_session
            amount: how much
        """
        owner = self.sessions.get(session_token)
        if owner is None:
            return {"success": False, "error": "invalid session"}
        if amount <= 0 or amount > self.customers[owner]["balance"]:
            return {"success": False, "error": "bad amount"}
        self.customers[owner]["balance"] -= amount
        return {"success": True, "message": "done"}
'''


def test_a_token_a_setup_call_returns_is_fed_to_the_tools_that_need_it(runtime) -> None:
    """`open_session` hands back a token that no state holds yet: a sound env was rejected because the
    later tools were only ever tried with made-up tokens."""
    kinds = {"open_session": "state_change", "balance": "query", "withdraw": "state_change"}
    candidate = EnvCandidate(topic_fp="t", class_name="Bank", class_code=TOKENS, tools=extract_tools(TOKENS, "Bank"),
                             tool_kinds=kinds)
    state = {"customers": {"c1": {"pin": "1234", "balance": 50.0}}, "sessions": {}, "opened": 0}
    out = asyncio.run(validate_candidate(candidate, runtime, None, SETTINGS, test_state=state))
    assert out.report.accepted, (out.report.score, out.report.reasons)
    fed = [r for r in out.rounds if r.tool == "withdraw" and r.observation.get("success") is True]
    assert fed and fed[0].args["session_token"] == "tok-1" and "session_token from its result" in fed[0].reason
