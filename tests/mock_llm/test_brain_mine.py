"""Spec: Stage 1 answers (stateful judgement, topic inference) and the mock's embeddings."""

from __future__ import annotations

import math

from mock_llm import brain, library
from envscaler_core.prompts import mine as PM
from tests.mock_llm.helpers import ask


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def _topic_vector(task: str) -> list[float]:
    topic = ask(PM.INFER_TOPIC, PM.TaskInput(task=task))
    return brain.embedding(f"**{topic.summary}**: {topic.introduction}")


def test_task_that_routes_to_a_domain_is_stateful():
    out = ask(PM.JUDGE_STATEFUL, PM.TaskInput(task="Reschedule my medical appointment with Dr. Smith for tomorrow."))
    assert out.stateful is True


def test_pure_calculation_is_not_stateful_even_with_domain_words():
    task = "Calculate the monthly premium for a health insurance claim in California."
    assert ask(PM.JUDGE_STATEFUL, PM.TaskInput(task=task)).stateful is False


def test_task_without_domain_is_not_stateful():
    assert ask(PM.JUDGE_STATEFUL, PM.TaskInput(task="Book a wellness retreat for two people in Bali.")).stateful is False


def test_topic_is_the_routed_domains():
    topic = ask(PM.INFER_TOPIC, PM.TaskInput(task="Set a medication reminder for my daily blood pressure pill."))
    assert topic.summary in library.by_name("medication_reminders").summary_variants
    assert topic.usefulness >= 7 and topic.modelability >= 7


def test_same_domain_topics_vary_in_text():
    tasks = ["Schedule a virtual consultation with a dentist in San Francisco.",
             "Reschedule a medical appointment with Dr. Smith at New York General Hospital.",
             "Schedule a lab test appointment for an allergy test in Los Angeles.",
             "Confirm the medical appointment for John Doe with Dr. Smith."]
    topics = {(t.summary, t.introduction) for t in (ask(PM.INFER_TOPIC, PM.TaskInput(task=x)) for x in tasks)}
    assert len(topics) > 1


def test_same_domain_topics_embed_above_the_dedup_threshold():
    a = _topic_vector("Schedule a virtual consultation with a dentist in San Francisco.")
    b = _topic_vector("Reschedule a medical appointment with Dr. Smith at New York General Hospital.")
    assert _cos(a, b) >= 0.9


def test_different_domain_topics_embed_far_apart():
    a = _topic_vector("Schedule a virtual consultation with a dentist in San Francisco.")
    b = _topic_vector("Check the status of an insurance claim with reference number ABC123.")
    assert _cos(a, b) < 0.5


def test_embedding_is_deterministic_unit_length_and_fixed_size():
    v = brain.embedding("Clinic appointment scheduler: doctors, slots and bookings.")
    assert v == brain.embedding("Clinic appointment scheduler: doctors, slots and bookings.")
    assert len(v) == brain.EMBEDDING_DIM and math.isclose(math.sqrt(_cos(v, v)), 1.0)


def test_embedding_of_empty_text_is_the_zero_vector():
    assert brain.embedding("") == [0.0] * brain.EMBEDDING_DIM


def test_a_batch_gets_the_answer_each_task_gets_alone():
    tasks = ["Reschedule my medical appointment with Dr. Smith for tomorrow.", "Write a poem about the sea.",
             "Set a medication reminder for my daily blood pressure pill."]
    batch = PM.TaskBatchInput(tasks=[PM.NumberedTask(id=i + 1, task=t) for i, t in enumerate(tasks)])
    judged = ask(PM.JUDGE_STATEFUL_BATCH, batch).judgements
    assert [(j.id, j.stateful) for j in judged] == [(i + 1, ask(PM.JUDGE_STATEFUL, PM.TaskInput(task=t)).stateful)
                                                    for i, t in enumerate(tasks)]
    topics = {t.id: t.summary for t in ask(PM.INFER_TOPIC_BATCH, batch).topics}
    assert topics == {1: ask(PM.INFER_TOPIC, PM.TaskInput(task=tasks[0])).summary,
                      3: ask(PM.INFER_TOPIC, PM.TaskInput(task=tasks[2])).summary}  # no domain for the poem
