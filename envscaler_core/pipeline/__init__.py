"""Resumable, Prefect-free batch operations that chain the stages over the store."""

from envscaler_core.pipeline.context import RunContext
from envscaler_core.pipeline.stages import BatchReport

__all__ = ["BatchReport", "RunContext"]
