"""Secrets inside URL settings: masked wherever settings are shown or stored, put back where a flow runs.

A store URL may carry a database password, a base URL a token in its query string. Flow parameters and
the runs table (both end up in dashboards and databases) hold `mask_url`'s form; the process that masked
a URL remembers the real one, so a flow it runs in-process gets it back (`config.unmask_urls`), and a
worker gets it from its own environment."""

from __future__ import annotations

from urllib.parse import unquote_plus

from envscaler_core.secret_fields import secret_key

URL_SETTINGS = (("store", "url"), ("llm", "base_url"), ("llm", "embedding_base_url"))
"""(section, field) of the settings that may carry a secret."""

_MASK = "***"
_REAL_URLS: dict[str, str] = {}  # masked -> real, for the URLs this process masked itself


def remember_real_url(masked: str, real: str) -> None:
    _REAL_URLS[masked] = real


def remembered_real_url(masked: str) -> str | None:
    return _REAL_URLS.get(masked)


def _secret_param(name: str) -> bool:
    """A query parameter named like a secret (api_key, X-Auth-Token, sslpassword): the names
    `secret_fields` masks in a request body, one list for both."""
    return secret_key(unquote_plus(name))


def mask_url(url: str) -> str:
    """`url` with the password in its user info and the value of every query parameter named like a
    secret (password, token, api_key, sslpassword, ...) replaced by `***`; anything else, and a plain
    path, unchanged. What may be shown, logged and stored; `mask_url(mask_url(u)) == mask_url(u)`."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    netloc_end = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    netloc, tail = rest[:netloc_end], rest[netloc_end:]
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{_MASK}@{host}"
    path, question, query = tail.partition("?")
    if question:
        query, hash_, fragment = query.partition("#")
        parts = []
        for part in query.split("&"):
            name, eq, _value = part.partition("=")
            parts.append(f"{name}={_MASK}" if eq and _secret_param(name) else part)
        tail = f"{path}?{'&'.join(parts)}{hash_}{fragment}"
    return f"{scheme}://{netloc}{tail}"


def is_masked(url: str) -> bool:
    """Whether `url` carries a masked secret (`mask_url`'s `***`), so cannot be used as it is."""
    return _MASK in url and mask_url(url.replace(_MASK, "x")) == url
