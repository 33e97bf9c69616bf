"""Secrets inside `llm.extra_body`: never stored with a run, never part of the cache key.

An endpoint behind a gateway may want a token in the body (`{"provider": {"api_token": "..."}}`). The
run's stored settings and flow parameters (both end up in databases and dashboards) hold `MASK` in place
of every string value whose key is named like a secret (api_key, api_token, secret, password,
Authorization, ...); an outside check found such a token stored verbatim in `runs.data`, while `api_key`
was stripped. The process that masked it remembers the real value, so a flow it runs in-process gets it
back (`unmask_extra_body`); another process (a `resume`, a worker) takes it from its environment
(ENVSCALER_LLM__EXTRA_BODY__<KEY>__<KEY>, or the whole ENVSCALER_LLM__EXTRA_BODY), else a one-line
ConfigError names the field and that variable."""

from __future__ import annotations

import re
from typing import Any

MASK = "***not stored: a secret***"
_WORDS = {"password", "passwd", "pwd", "pass", "token", "secret", "key", "auth", "authorization", "credential",
          "credentials", "signature", "sig", "bearer", "cookie", "apikey"}
_ENDINGS = ("password", "passwd", "token", "secret", "apikey", "accesskey", "secretkey", "sslkey")
_REAL: dict[tuple[str, ...], Any] = {}  # path in extra_body -> the real value, for what this process masked


def secret_key(name: str) -> bool:
    """Whether a field or parameter named `name` holds a secret: a word of it (snake, kebab, dotted, camel
    case) is one of the words above, or it ends like one (accesstoken, sslpassword). `max_tokens`,
    `budget_tokens` are not. Also what `secret_urls` masks in a URL's query."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    words = set(re.split(r"[_\-.\s]+", spaced.lower()))
    return bool(words & _WORDS) or name.lower().endswith(_ENDINGS)


def masked(body: Any, remember: bool = False, _path: tuple[str, ...] = ()) -> Any:
    """`body` with every secret string value replaced by MASK (nested objects and lists walked); with
    `remember`, this process keeps the real values for `unmask_extra_body`."""
    if isinstance(body, dict):
        out: dict[str, Any] = {}
        for key, value in body.items():
            path = (*_path, str(key))
            if isinstance(value, str) and value != MASK and secret_key(str(key)):
                if remember:
                    _REAL[path] = value
                out[key] = MASK
            else:
                out[key] = masked(value, remember, path)
        return out
    if isinstance(body, list):
        return [masked(v, remember, (*_path, str(i))) for i, v in enumerate(body)]
    return body


def unmask_extra_body(body: Any, from_env: Any, _path: tuple[str, ...] = ()) -> Any:
    """`body` with each MASK put back: from this process's memory, else from the environment's
    extra_body (`from_env`, the same shape); else ValueError naming the field and its variable."""
    if isinstance(body, dict):
        env = from_env if isinstance(from_env, dict) else {}
        return {k: unmask_extra_body(v, env.get(k), (*_path, str(k))) for k, v in body.items()}
    if isinstance(body, list):
        env_list = from_env if isinstance(from_env, list) else []
        return [unmask_extra_body(v, env_list[i] if i < len(env_list) else None, (*_path, str(i)))
                for i, v in enumerate(body)]
    if body != MASK:
        return body
    if _path in _REAL:
        return _REAL[_path]
    if isinstance(from_env, str) and from_env != MASK:
        return from_env
    name = "ENVSCALER_LLM__EXTRA_BODY__" + "__".join(p.upper() for p in _path)
    raise ValueError(f"llm.extra_body.{'.'.join(_path)} is a secret, not stored with the run: give it to this "
                     f"process again ({name}, or the whole ENVSCALER_LLM__EXTRA_BODY, in its environment)")
