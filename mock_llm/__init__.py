"""The bundled mock LLM: an OpenAI-compatible HTTP server that answers the factory's own prompts for a
small library of hand-written domains. It is a MOCK that exercises the machinery end to end without an
API key; it is not a model, and everything it says is scripted from `library/`.

- `protocol`: what a handler receives and returns (the seam between the HTTP server and the brain).
- `server`: the HTTP server, fault injection and request counters.
- `brain`: dispatch from a prompt tag to the handler that answers it.
- `library`: the domains (real env classes, states, scenarios, checks, reference plans, defects).
"""
