# One image for every factory role (Prefect worker, mock LLM, CLI). The sandbox uses bubblewrap,
# which needs user namespaces inside the container: see docker-compose.yml (security_opt).
FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap python3.11 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY envscaler ./envscaler
COPY envscaler_core ./envscaler_core
COPY mock_llm ./mock_llm
COPY sandbox ./sandbox
COPY tasks ./tasks
COPY flows ./flows
COPY deployments ./deployments
RUN pip install --no-cache-dir .
# BFCL's multi-turn package for `envscaler eval bfcl-mt`, installed as `make bfcl` does: WITHOUT its declared
# dependencies (torch, faiss, provider SDKs, a numpy pin that would replace ours); it needs only mpmath.
# Keep the pins equal to BFCL_PACKAGES in the Makefile (tests/ops/test_compose.py checks it; docs/bfcl.md).
RUN pip install --no-cache-dir --no-deps bfcl-eval==2026.3.23 mpmath==1.3.0
ENV ENVSCALER_SANDBOX__PYTHON=/usr/bin/python3.11
ENTRYPOINT ["envscaler"]
