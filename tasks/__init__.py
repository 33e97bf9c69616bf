"""Prefect tasks: thin wrappers that give the core stage batches retries, names and logging.

One task per *batch* of items (Prefect costs ~25 ms per task run); the LLM calls inside a batch run
concurrently under the gateway's own limits. Prefect's result caching is off on purpose: what is
done is decided by the store (fingerprints), which also survives a brand-new flow run.
"""
