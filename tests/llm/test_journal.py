"""Spec: an answered call is safe from a kill once it returns, without waiting for the store's commit.

The rows go to a journal file beside the store first; the next gateway on the store puts what a killed
one left into it (and its cache), so a resumed run pays for no call that had returned. The kill test
is a real process killed with SIGKILL while its store commit cannot finish, talking to the real mock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envscaler_core.llm import LLMGateway
from envscaler_core.llm.journal import CallJournal, JournalError, journal_dir, replay_orphans
from envscaler_core.models.llm import LLMCall
from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows

TASK = TaskInput(task="Cancel my Friday table for four at the harbour restaurant.")
ROOT = Path(__file__).resolve().parents[2]

KILLED_AFTER_THE_CALL = textwrap.dedent("""
    import os, signal, sys, time
    from envscaler_core.llm import LLMGateway
    from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
    from envscaler_core.store import Store
    from tests.fixtures.llm import mock_llm_settings

    def never_commits(self, calls, call_ids=None):
        time.sleep(600)  # the database is slow: the kill lands before any commit

    Store.record_llm_calls = never_commits
    store = Store.from_url(sys.argv[1])
    gateway = LLMGateway(mock_llm_settings(sys.argv[2]), store=store, run_id="killed")

    async def main():
        answer = await gateway.structured(JUDGE_STATEFUL, TaskInput(task=sys.argv[3]))
        print(answer.model_dump_json(), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    import asyncio
    asyncio.run(main())
""")


def test_a_call_that_returned_before_a_kill_is_not_paid_for_again(mock_stats_reset, tmp_path: Path) -> None:
    url = f"duckdb:///{tmp_path / 'k.duckdb'}"
    Store.from_url(url).close()
    proc = subprocess.run([sys.executable, "-c", KILLED_AFTER_THE_CALL, url, mock_stats_reset.base_url, TASK.task],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    answered = json.loads(proc.stdout)
    assert mock_stats_reset.stats()["requests_total"] == 1
    with Store.from_url(url) as store:
        gateway = LLMGateway(mock_llm_settings(mock_stats_reset.base_url), store=store, run_id="killed")
        again = gateway.structured_sync(JUDGE_STATEFUL, TASK)
        rows = call_rows(store, "killed")
    assert again.model_dump(mode="json") == answered
    assert mock_stats_reset.stats()["requests_total"] == 1, "the resumed run paid for the call again"
    assert [r["status"] for r in rows] == ["ok", "cached"]
    assert not list((tmp_path / "k.duckdb.journal").glob("*.jsonl")), "the replayed journal was left behind"


def test_a_clean_close_leaves_no_journal_and_every_row_in_the_store(mock_stats_reset, tmp_path: Path) -> None:
    url = f"duckdb:///{tmp_path / 'c.duckdb'}"
    with Store.from_url(url) as store:
        LLMGateway(mock_llm_settings(mock_stats_reset.base_url), store=store, run_id="r").structured_sync(JUDGE_STATEFUL, TASK)
        assert [r["status"] for r in call_rows(store, "r")] == ["ok"]
    assert not list((tmp_path / "c.duckdb.journal").glob("*.jsonl"))


def _row(fingerprint: str) -> LLMCall:
    return LLMCall(fingerprint=fingerprint, run_id="r", stage="mine", prompt_id="p@1", model="m", status="ok",
                   attempts=1, response={"content": fingerprint})


def _orphan(directory: Path, rows: list[tuple[str, LLMCall]], tail: bytes = b"") -> Path:
    """A journal whose writer is gone: written, then its descriptor (and lock) closed."""
    journal = CallJournal(directory)
    for call_id, call in rows:
        journal.append(call_id, call)
    path = journal.path
    assert path is not None and journal._fd is not None
    os.write(journal._fd, tail)
    os.close(journal._fd)
    return path


def test_replay_skips_rows_the_store_already_has(tmp_path: Path) -> None:
    with Store.from_url(f"duckdb:///{tmp_path / 's.duckdb'}") as store:
        directory = journal_dir(store)
        assert directory == tmp_path / "s.duckdb.journal"
        store.record_llm_calls([_row("a")], call_ids=["id-a"])
        _orphan(directory, [("id-a", _row("a")), ("id-b", _row("b"))])
        assert replay_orphans(directory, store) == 1
        assert sorted(store.cached_response(fp)["content"] for fp in ("a", "b")) == ["a", "b"]  # type: ignore[index]
        assert len(call_rows(store, "r")) == 2
        assert not list(directory.glob("*.jsonl"))


def test_a_row_the_store_refuses_is_set_aside_and_the_others_are_recorded(tmp_path: Path) -> None:
    """A row the store cannot take (a count over its 32-bit column, written before counts were bounded)
    used to stop every later run on that store at the same replay; it is kept beside the journal."""
    with Store.from_url(f"duckdb:///{tmp_path / 's.duckdb'}") as store:
        directory = journal_dir(store)
        poison = _row("p").model_copy(update={"prompt_tokens": 3_000_000_000})
        path = _orphan(directory, [("id-a", _row("a")), ("id-p", poison), ("id-b", _row("b"))])
        replay_orphans(directory, store)
        assert sorted(store.cached_response(fp)["content"] for fp in ("a", "b")) == ["a", "b"]  # type: ignore[index]
        assert len(call_rows(store, "r")) == 2 and store.cached_response("p") is None
        assert not path.exists()
        [kept] = [json.loads(line) for line in path.with_name(path.name + ".rejected").read_text().splitlines()]
        assert kept["call_id"] == "id-p" and kept["call"]["prompt_tokens"] == 3_000_000_000 and kept["refused"]
        assert replay_orphans(directory, store) == 0, "nothing left to stop the next run"


def test_a_torn_last_line_is_the_kill_cutting_a_write_and_is_ignored(tmp_path: Path) -> None:
    with Store.from_url(f"duckdb:///{tmp_path / 't.duckdb'}") as store:
        directory = journal_dir(store)
        _orphan(directory, [("id-a", _row("a"))], tail=b'{"call_id": "id-b", "call": {"fingerp')
        assert replay_orphans(directory, store) == 1


def test_a_damaged_journal_is_an_error_naming_the_file_and_line_and_is_kept(tmp_path: Path) -> None:
    with Store.from_url(f"duckdb:///{tmp_path / 'd.duckdb'}") as store:
        directory = journal_dir(store)
        path = _orphan(directory, [("id-a", _row("a"))], tail=b"not json at all\n")
        with pytest.raises(JournalError, match=rf"{path.name}, line 2"):
            replay_orphans(directory, store)
        assert path.exists() and call_rows(store, "r") == []


def test_a_line_repeated_in_one_journal_is_one_call(tmp_path: Path) -> None:
    """Red team: the same call id twice in one file failed every resume on the store's unique key."""
    with Store.from_url(f"duckdb:///{tmp_path / 'r.duckdb'}") as store:
        directory = journal_dir(store)
        _orphan(directory, [("id-a", _row("a")), ("id-a", _row("a")), ("id-b", _row("b"))])
        assert replay_orphans(directory, store) == 2
        assert len(call_rows(store, "r")) == 2


def test_a_line_nested_too_deep_is_an_error_naming_the_file_and_line(tmp_path: Path) -> None:
    with Store.from_url(f"duckdb:///{tmp_path / 'n.duckdb'}") as store:
        directory = journal_dir(store)
        path = _orphan(directory, [("id-a", _row("a"))], tail=b"[" * 200_000 + b"\n")
        with pytest.raises(JournalError, match=rf"{path.name}, line 2: .*RecursionError"):
            replay_orphans(directory, store)


def test_a_directory_named_like_a_journal_is_not_one(tmp_path: Path) -> None:
    with Store.from_url(f"duckdb:///{tmp_path / 'x.duckdb'}") as store:
        directory = journal_dir(store)
        _orphan(directory, [("id-a", _row("a"))])
        (directory / "odd.jsonl").mkdir()
        assert replay_orphans(directory, store) == 1


def test_a_store_made_anew_at_a_deleted_ones_path_does_not_take_its_journal(tmp_path: Path) -> None:
    """Red team: a killed run's journal, left when its store file was deleted, was replayed into the new
    store at that path, whose run was then charged for 19 calls it never made."""
    from envscaler_core.llm.audit import open_audit

    path = tmp_path / "s.duckdb"
    with Store.from_url(f"duckdb:///{path}") as old:
        left = _orphan_of(journal_dir(old), old.store_id(), [("id-a", _row("a"))])
    path.unlink()
    with Store.from_url(f"duckdb:///{path}") as new:
        audit = open_audit(new)
        assert audit is not None
        audit.flush()
        assert call_rows(new, "r") == []
    assert not left.exists() and left.with_name(left.name + ".other-store").exists()


def test_a_stores_own_named_journal_is_replayed(tmp_path: Path) -> None:
    with Store.from_url(f"duckdb:///{tmp_path / 'o.duckdb'}") as store:
        _orphan_of(journal_dir(store), store.store_id(), [("id-a", _row("a"))])
        assert replay_orphans(journal_dir(store), store) == 1


def _orphan_of(directory: Path, owner: str | None, rows: list[tuple[str, LLMCall]]) -> Path:
    journal = CallJournal(directory, owner=owner)
    for call_id, call in rows:
        journal.append(call_id, call)
    assert journal.path is not None and journal._fd is not None and owner and journal.path.name.startswith(owner)
    os.close(journal._fd)
    return journal.path


def test_a_live_gateways_journal_is_not_replayed(tmp_path: Path) -> None:
    with Store.from_url(f"duckdb:///{tmp_path / 'l.duckdb'}") as store:
        directory = journal_dir(store)
        live = CallJournal(directory)
        live.append("id-a", _row("a"))  # its writer still holds the file
        assert replay_orphans(directory, store) == 0
        assert live.path is not None and live.path.exists() and call_rows(store, "r") == []
        live.discard()


def test_a_journal_that_fills_up_midway_is_deleted_once_its_rows_are_committed(tmp_path: Path) -> None:
    """Red team: a full disk switched the journal off correctly but left its file behind for good."""
    from envscaler_core.llm.audit import AuditLog

    class FillsUp(CallJournal):
        def append(self, call_id: str, call: LLMCall) -> None:
            if self.size:
                raise OSError(28, "No space left on device")
            super().append(call_id, call)

    with Store.from_url(f"duckdb:///{tmp_path / 'f.duckdb'}") as store:
        journal = FillsUp(journal_dir(store))
        log = AuditLog(store, journal=journal)
        log.submit(_row("a"))
        log.submit(_row("b"))
        log.flush()
        assert len(call_rows(store, "r")) == 2
        assert not list(journal_dir(store).glob("*.jsonl"))


def test_a_failed_commit_keeps_the_journal_and_is_raised_at_flush(tmp_path: Path) -> None:
    from envscaler_core.llm.audit import AuditLog

    class Broken:
        def record_llm_calls(self, calls, call_ids=None):
            raise OSError("disk full")

    journal = CallJournal(tmp_path / "j")
    log = AuditLog(Broken(), journal=journal)  # type: ignore[arg-type]
    log.submit(_row("a"))
    with pytest.raises(OSError, match="disk full"):
        log.flush()
    assert journal.path is not None and journal.path.exists(), "rows that reached no store must stay in the journal"
    os.close(journal._fd)  # type: ignore[arg-type]


def test_a_journal_that_cannot_be_written_falls_back_to_waiting_for_the_commit(tmp_path: Path) -> None:
    from envscaler_core.llm.audit import AuditLog

    class Recording:
        def __init__(self) -> None:
            self.rows: list[LLMCall] = []

        def record_llm_calls(self, calls, call_ids=None):
            self.rows += list(calls)

    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")  # the journal's directory cannot be made under a file
    store = Recording()
    log = AuditLog(store, journal=CallJournal(blocked / "journal"))  # type: ignore[arg-type]
    import asyncio

    asyncio.run(log.write(_row("a")))
    assert [r.fingerprint for r in store.rows] == ["a"] and log.journal is None


@pytest.mark.postgres
def test_a_postgres_stores_journal_is_found_under_any_url_that_reaches_it(
        postgres_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Named by the database, not by how its URL is written: a run killed through `127.0.0.1` and
    resumed through `localhost` once paid 189 calls again."""
    from envscaler_core.llm.audit import open_audit

    monkeypatch.setenv("ENVSCALER_DATA_DIR", str(tmp_path))
    with postgres_server.fresh_database("journal") as url:
        other = url.replace(f"@{postgres_server.host}:", "@localhost:")
        assert other != url
        with Store.from_url(url) as store:
            directory = journal_dir(store, tmp_path)
            _orphan(directory, [("id-a", _row("a"))])  # the killed run's, written through one spelling
        with Store.from_url(other) as store:  # resumed through the other
            assert journal_dir(store, tmp_path) == directory
            audit = open_audit(store)
            assert audit is not None
            audit.flush()
            assert len(call_rows(store, "r")) == 1
