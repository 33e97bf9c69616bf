"""Interoperation with EnvScaler's own data (see docs/interop.md)."""
