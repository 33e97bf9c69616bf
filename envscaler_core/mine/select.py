"""Stage 1 selection: exact dedup, embedding dedup, score filter, seeded diversity selection.

Every topic comes back, with `selected` True/False and `drop_reason` (`duplicate-of:<fp>`,
`low-score`, `not-selected`), so the funnel is auditable. Unlike the reference there is a real
cosine threshold, `None` scores cannot crash the comparison (EnvTopic forbids them), and K larger
than the pool simply selects everything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from envscaler_core.config import MineSettings
from envscaler_core.mine.llm_steps import Gateway
from envscaler_core.models.topic import EnvTopic


def embedding_text(topic: EnvTopic) -> str:
    """The reference's embedded text: bold summary, colon, introduction."""
    return f"**{topic.summary}**: {topic.introduction}"


def normalise_summary(summary: str) -> str:
    """Case- and whitespace-insensitive summary key (the reference compared `strip()` only)."""
    return re.sub(r"\s+", " ", summary).strip().casefold()


def _rank(topic: EnvTopic) -> tuple[int, int]:
    return (topic.modelability, topic.usefulness)


def exact_duplicates(topics: Sequence[EnvTopic]) -> dict[int, int]:
    """index -> index of the kept topic with the same normalised summary (max modelability, then
    usefulness; the first seen wins ties)."""
    best: dict[str, int] = {}
    for i, topic in enumerate(topics):
        key = normalise_summary(topic.summary)
        if key not in best or _rank(topic) > _rank(topics[best[key]]):
            best[key] = i
    return {i: best[normalise_summary(t.summary)] for i, t in enumerate(topics) if best[normalise_summary(t.summary)] != i}


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def embedding_duplicates(vectors: np.ndarray, candidates: Sequence[int], threshold: float,
                         block: int = 256) -> dict[int, int]:
    """Greedy pass in order of `candidates` (callers pass best-first): a topic whose cosine to an
    already-kept one is >= threshold is a duplicate of the most similar kept one (the earliest on ties).

    The pass is inherently all-pairs (a kept topic is compared with every later one), so it runs in
    blocks: one matrix product per block against the topics kept before it, and the block's own pairs
    from one small product. Gathering the kept rows anew for every topic copied O(N^2 x dim) floats,
    which dominated selection at a few thousand topics (bench_scale)."""
    order = list(candidates)
    if not order:
        return {}
    unit = _unit(np.asarray(vectors, dtype=float))
    kept_rows = np.empty((len(order), unit.shape[1]))
    kept: list[int] = []
    dups: dict[int, int] = {}
    for start in range(0, len(order), block):
        ids = order[start:start + block]
        rows = unit[ids]
        if kept:
            earlier = rows @ kept_rows[:len(kept)].T
            best_earlier = earlier.argmax(axis=1)
            best_earlier_sim = earlier[np.arange(len(ids)), best_earlier]
        inner = rows @ rows.T
        kept_here: list[int] = []  # positions within the block
        kept_before = len(kept)
        for b, i in enumerate(ids):
            best_sim, best = -np.inf, -1
            if kept_before:
                best_sim, best = float(best_earlier_sim[b]), kept[int(best_earlier[b])]
            if kept_here:
                sims = inner[b, kept_here]
                k = int(np.argmax(sims))
                if sims[k] > best_sim:  # strictly: on a tie the earlier-kept topic wins
                    best_sim, best = float(sims[k]), ids[kept_here[k]]
            if best >= 0 and best_sim >= threshold:
                dups[i] = best
                continue
            kept_here.append(b)
            kept_rows[len(kept)] = rows[b]
            kept.append(i)
    return dups


def farthest_point(vectors: np.ndarray, n: int, seed: int) -> list[int]:
    """Seeded farthest-point sampling on cosine distance: start at a seeded random point, then
    repeatedly add the point farthest from everything chosen."""
    count = len(vectors)
    if n >= count:
        return list(range(count))
    unit = _unit(vectors)
    rng = np.random.default_rng(seed)
    chosen = [int(rng.integers(count))]
    dist = 1.0 - unit @ unit[chosen[0]]
    while len(chosen) < n:
        dist[chosen] = -np.inf
        nxt = int(np.argmax(dist))
        chosen.append(nxt)
        dist = np.minimum(dist, 1.0 - unit @ unit[nxt])
    return sorted(chosen)


def _sq_distances(data: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances (n x k) without an n*k*d intermediate (3072-d embeddings)."""
    d2 = (data**2).sum(axis=1)[:, None] - 2.0 * data @ centres.T + (centres**2).sum(axis=1)[None, :]
    return np.maximum(d2, 0.0)


def kmeans_select(vectors: np.ndarray, n: int, seed: int, iterations: int = 50) -> list[int]:
    """Seeded k-means (k-means++ init, Lloyd iterations); keeps the member nearest each centroid
    (Euclidean, as the reference)."""
    count = len(vectors)
    if n >= count:
        return list(range(count))
    rng = np.random.default_rng(seed)
    data = vectors.astype(float)
    picks = [int(rng.integers(count))]
    nearest = _sq_distances(data, data[picks])[:, 0]
    while len(picks) < n:
        total = nearest.sum()
        pick = int(rng.choice(count, p=nearest / total)) if total > 0 else int(rng.integers(count))
        picks.append(pick)
        nearest = np.minimum(nearest, _sq_distances(data, data[[pick]])[:, 0])
    centres = data[picks].copy()
    labels = np.full(count, -1)
    for _ in range(iterations):
        new_labels = _sq_distances(data, centres).argmin(axis=1)
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
        for k in range(n):
            members = data[labels == k]
            if len(members):
                centres[k] = members.mean(axis=0)
    chosen = []
    for k in range(n):
        members = np.flatnonzero(labels == k)
        if len(members):
            d = _sq_distances(data[members], centres[[k]])[:, 0]
            chosen.append(int(members[int(np.argmin(d))]))
    return sorted(chosen)


async def _embeddings(topics: list[EnvTopic], gateway: Gateway) -> list[list[float]]:
    """Each topic's vector: the one it already carries (a selection earlier in the run embedded it), else
    asked for. Re-embedding every topic on each pass cost a paid call whenever the set changed (one topic
    more after a resume re-sent them all, a different request than the cached one)."""
    missing = [t for t in topics if not t.embedding]
    fresh = await gateway.embed([embedding_text(t) for t in missing], stage="embedding") if missing else []
    if len(fresh) != len(missing):
        raise ValueError(f"gateway returned {len(fresh)} embeddings for {len(missing)} topics")
    new = {t.fingerprint: list(v) for t, v in zip(missing, fresh, strict=True)}
    return [new[t.fingerprint] if t.fingerprint in new else list(t.embedding or []) for t in topics]


async def select_topics(topics: list[EnvTopic], gateway: Gateway, settings: MineSettings,
                        keep: frozenset[str] = frozenset()) -> list[EnvTopic]:
    """Embed, dedup (exact then cosine), filter by score, select `settings.select_n` diverse topics.

    `keep`: topics that must stay selected whatever the selection says (the run has built a candidate
    on them: a selection over sources added later moved elsewhere and left their envs and scenarios
    counted under unselected topics). They are added to the selection, not swapped into it, so the
    selection of a run whose sources did not change is the same with or without them."""
    out = await _select(topics, gateway, settings)
    for t in out:
        if t.fingerprint in keep and not t.selected:
            t.selected, t.drop_reason = True, None
    return out


async def _select(topics: list[EnvTopic], gateway: Gateway, settings: MineSettings) -> list[EnvTopic]:
    if not topics:
        return []
    vectors_list = await _embeddings(topics, gateway)
    out = [t.model_copy(update={"embedding": list(map(float, v)), "selected": False, "drop_reason": None})
           for t, v in zip(topics, vectors_list, strict=True)]
    vectors = np.array(vectors_list, dtype=float)
    for i, j in exact_duplicates(out).items():
        out[i].drop_reason = f"duplicate-of:{out[j].fingerprint}"
    remaining = [i for i, t in enumerate(out) if t.drop_reason is None]
    remaining.sort(key=lambda i: (-out[i].modelability, -out[i].usefulness, i))
    for i, j in embedding_duplicates(vectors, remaining, settings.similarity_threshold).items():
        out[i].drop_reason = f"duplicate-of:{out[j].fingerprint}"
    pool = []
    for i, t in enumerate(out):
        if t.drop_reason is not None:
            continue
        if t.usefulness < settings.min_usefulness or t.modelability < settings.min_modelability:
            t.drop_reason = "low-score"
        else:
            pool.append(i)
    if pool:
        pick = farthest_point if settings.selection == "farthest_point" else kmeans_select
        chosen = {pool[k] for k in pick(vectors[pool], settings.select_n, settings.seed)}
        for i in pool:
            if i in chosen:
                out[i].selected = True
            else:
                out[i].drop_reason = "not-selected"
    return out
