"""Stage 1 (mine): source tasks -> stateful tasks -> environment topics -> a diverse selection."""

from envscaler_core.mine.importers import FileCounts, ImportResult, SourceProblem, read_sources
from envscaler_core.mine.llm_steps import Gateway, TopicResult, infer_topics, judge_tasks
from envscaler_core.mine.select import select_topics

__all__ = [
    "FileCounts", "Gateway", "ImportResult", "SourceProblem", "TopicResult",
    "infer_topics", "judge_tasks", "read_sources", "select_topics",
]
