"""Stage 1 selection: exact + embedding dedup, score filter, seeded diversity selection.

The embedding endpoint is replaced by a fixed table of vectors (the boundary, not our code), so each
test states exactly which topics are near each other.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from envscaler_core.config import MineSettings
from envscaler_core.mine import select_topics
from envscaler_core.mine.select import embedding_duplicates, farthest_point, kmeans_select
from envscaler_core.models.topic import EnvTopic


class TableEmbedder:
    """Embeds a topic text by looking its summary up in a table."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    async def embed(self, texts: list[str], *, stage: str = "embedding", **kw: Any) -> list[list[float]]:
        return [self.table[t.split("**")[1]] for t in texts]


def topic(summary: str, u: int = 8, m: int = 8) -> EnvTopic:
    return EnvTopic(summary=summary, introduction=f"{summary} intro.", usefulness=u, modelability=m,
                    example_task="t", source_task_fp="fp")


def run(topics: list[EnvTopic], table: dict[str, list[float]], **settings: Any) -> list[EnvTopic]:
    return asyncio.run(select_topics(topics, TableEmbedder(table), MineSettings(**settings)))


def test_exact_duplicate_summary_keeps_highest_modelability_then_usefulness() -> None:
    topics = [topic("Clinic scheduler", 9, 7), topic(" clinic  Scheduler", 7, 9), topic("Clinic scheduler", 8, 9)]
    out = run(topics, {"Clinic scheduler": [1, 0], " clinic  Scheduler": [1, 0]}, select_n=5)
    kept = out[2]
    assert kept.selected is True
    assert out[0].drop_reason == out[1].drop_reason == f"duplicate-of:{kept.fingerprint}"


def test_embedding_duplicates_at_or_above_threshold_are_dropped() -> None:
    table = {"Bank": [1.0, 0.0], "Bank accounts": [0.95, 0.05], "Library": [0.0, 1.0]}
    out = run([topic("Bank", m=9), topic("Bank accounts"), topic("Library")], table,
              similarity_threshold=0.99, select_n=5)
    assert [t.selected for t in out] == [True, False, True]
    assert out[1].drop_reason == f"duplicate-of:{out[0].fingerprint}"


def test_embedding_threshold_is_configurable() -> None:
    vectors = np.array([[1.0, 0.0], [0.9, 0.1]])
    assert embedding_duplicates(vectors, [0, 1], 0.999) == {}
    assert embedding_duplicates(vectors, [0, 1], 0.9) == {1: 0}


def test_embedding_dedup_in_blocks_matches_the_one_by_one_greedy_pass() -> None:
    """Blocks are an implementation detail: a duplicate maps to its most similar kept topic whether
    that one was kept in an earlier block or in its own, an exact copy to the earliest kept, and a
    topic dropped as a duplicate never becomes anyone's original."""
    rng = np.random.default_rng(7)
    base = rng.normal(size=(40, 6))
    vectors = np.vstack([base, base + rng.normal(scale=0.05, size=base.shape), base, rng.normal(size=(10, 6))])
    order = [int(i) for i in rng.permutation(len(vectors))]
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    kept: list[int] = []
    expected: dict[int, int] = {}
    for i in order:
        sims = [float(unit[k] @ unit[i]) for k in kept]
        if sims and max(sims) >= 0.97:
            expected[i] = kept[sims.index(max(sims))]
        else:
            kept.append(i)
    assert len(expected) >= 40
    for block in (1, 3, 16, 1000):
        assert embedding_duplicates(vectors, order, 0.97, block=block) == expected


def test_low_scores_are_dropped_with_reason() -> None:
    out = run([topic("A", u=6), topic("B", m=6), topic("C")], {"A": [1, 0], "B": [0, 1], "C": [1, 1]})
    assert [t.drop_reason for t in out] == ["low-score", "low-score", None]


def test_selection_keeps_n_and_marks_the_rest_not_selected() -> None:
    table = {f"T{i}": [float(np.cos(i)), float(np.sin(i)), float(i % 3)] for i in range(10)}
    out = run([topic(f"T{i}") for i in range(10)], table, select_n=4, similarity_threshold=1.0)
    assert sum(t.selected for t in out) == 4
    assert {t.drop_reason for t in out if not t.selected} == {"not-selected"}
    assert all(t.embedding is not None for t in out)


@pytest.mark.parametrize("pick", [farthest_point, kmeans_select])
def test_diversity_selection_is_reproducible_for_a_seed(pick: Any) -> None:
    vectors = np.random.default_rng(0).normal(size=(40, 8))
    assert pick(vectors, 6, 42) == pick(vectors, 6, 42)
    assert len(pick(vectors, 6, 42)) == 6


def test_farthest_point_prefers_spread_out_points() -> None:
    vectors = np.array([[1.0, 0.0], [0.99, 0.01], [0.0, 1.0], [-1.0, 0.0]])
    chosen = farthest_point(vectors, 3, seed=1)
    assert len({0, 1} & set(chosen)) == 1 and {2, 3} <= set(chosen)


def test_kmeans_picks_one_member_per_cluster() -> None:
    vectors = np.array([[0, 0], [0.1, 0], [10, 10], [10.1, 10], [-10, 5], [-10.1, 5]], dtype=float)
    chosen = kmeans_select(vectors, 3, seed=42)
    assert sorted(i // 2 for i in chosen) == [0, 1, 2]


def test_selection_larger_than_pool_selects_everything() -> None:
    out = run([topic("A"), topic("B")], {"A": [1, 0], "B": [0, 1]}, select_n=10, selection="kmeans")
    assert all(t.selected for t in out)


class CountingEmbedder(TableEmbedder):
    """Records every text it is asked to embed (each one is a paid request against a real endpoint)."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        super().__init__(table)
        self.asked: list[str] = []

    async def embed(self, texts: list[str], *, stage: str = "embedding", **kw: Any) -> list[list[float]]:
        self.asked += [t.split("**")[1] for t in texts]
        return await super().embed(texts, stage=stage, **kw)


def test_a_second_selection_embeds_only_topics_not_embedded_yet() -> None:
    """A resume that adds one topic re-runs selection over all of them: the others keep their vectors."""
    table = {"A": [1.0, 0.0], "B": [0.0, 1.0], "C": [-1.0, 0.0], "D": [0.0, -1.0]}
    embedder = CountingEmbedder(table)
    settings = MineSettings(select_n=2, similarity_threshold=1.0)
    first = asyncio.run(select_topics([topic("A"), topic("B"), topic("C")], embedder, settings))
    assert sorted(embedder.asked) == ["A", "B", "C"]
    embedder.asked.clear()
    again = asyncio.run(select_topics([*first, topic("D")], embedder, settings))
    assert embedder.asked == ["D"]
    fresh = asyncio.run(select_topics([topic("A"), topic("B"), topic("C"), topic("D")], TableEmbedder(table), settings))
    assert [(t.summary, t.selected, t.embedding) for t in again] == [(t.summary, t.selected, t.embedding) for t in fresh]


def test_a_short_embedding_answer_is_refused() -> None:
    class Short(TableEmbedder):
        async def embed(self, texts: list[str], *, stage: str = "embedding", **kw: Any) -> list[list[float]]:
            return (await super().embed(texts, stage=stage, **kw))[:-1]

    with pytest.raises(ValueError, match="returned 1 embeddings for 2 topics"):
        asyncio.run(select_topics([topic("A"), topic("B")], Short({"A": [1, 0], "B": [0, 1]}), MineSettings()))


def test_topics_the_run_built_on_stay_selected_when_added_sources_move_the_selection() -> None:
    """After `--add-sources` the selection runs over every topic: one that already has a candidate (and
    maybe an accepted env with scenarios) was marked not-selected, and the funnel then counted more
    candidates than selected topics. It stays selected, on top of the new selection."""
    table = {"A": [1.0, 0.0], "B": [0.0, 1.0], "C": [-1.0, 0.0], "D": [0.0, -1.0]}
    settings = MineSettings(select_n=2, similarity_threshold=1.0)
    first = asyncio.run(select_topics([topic("A"), topic("B")], TableEmbedder(table), settings))
    built = frozenset(t.fingerprint for t in first if t.selected)
    assert len(built) == 2
    plain = asyncio.run(select_topics([*first, topic("C"), topic("D")], TableEmbedder(table), settings))
    kept = asyncio.run(select_topics([*first, topic("C"), topic("D")], TableEmbedder(table), settings, keep=built))
    assert {t.fingerprint for t in plain if t.selected} != built  # the selection moved
    selected = {t.fingerprint for t in kept if t.selected}
    assert built <= selected and {t.fingerprint for t in plain if t.selected} <= selected
    assert all(t.drop_reason is None for t in kept if t.selected)


def test_keeping_topics_that_are_selected_anyway_changes_nothing() -> None:
    """A resume whose sources did not change selects exactly what an uninterrupted run selects."""
    table = {"A": [1.0, 0.0], "B": [0.0, 1.0], "C": [-1.0, 0.0]}
    settings = MineSettings(select_n=2, similarity_threshold=1.0)
    plain = asyncio.run(select_topics([topic("A"), topic("B"), topic("C")], TableEmbedder(table), settings))
    some = frozenset([next(t.fingerprint for t in plain if t.selected)])
    kept = asyncio.run(select_topics([topic("A"), topic("B"), topic("C")], TableEmbedder(table), settings, keep=some))
    assert [(t.selected, t.drop_reason) for t in kept] == [(t.selected, t.drop_reason) for t in plain]
