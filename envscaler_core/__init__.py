"""EnvScaler factory core: domain models, prompts, parsers, codegen, validation, scenarios, agents,
exporters, the store and the LLM gateway. Orchestration-free by design (no Prefect import), so every
piece is testable in milliseconds."""
