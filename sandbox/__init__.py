"""The subprocess sandbox: `SandboxPool` implements `envscaler_core.runtime.EnvRuntime`.

Design, threat model and limits: docs/sandbox.md. Nothing in here is imported by envscaler_core.
"""

from sandbox.backend import SandboxUnavailable
from sandbox.episode import SandboxEpisode
from sandbox.imports import JailImports
from sandbox.limits import SandboxLimits
from sandbox.pool import SandboxPool

__all__ = ["JailImports", "SandboxEpisode", "SandboxLimits", "SandboxPool", "SandboxUnavailable"]
