"""The runtime validation's passes run on: it remembers every episode caught forging replies.

An episode whose process sent a frame the host never asked for (`SandboxEpisode.breach`) may have forged
any reply the passes judged, so no verdict may come from it. Reading its state raises `EpisodeBreach`,
which `validate_candidate` turns into a rejection; but a pass may end an episode on a call and close it
without reading the state again, and the extra frame is then found only when it closes (kept in
`breach`). Wrapping each episode here catches that case too, without each pass having to look.
"""

from __future__ import annotations

from typing import Any

from envscaler_core.runtime import CallOutcome, EnvRuntime, Episode


class BreachWatch:
    """`runtime` as the passes see it; `breaches` lists why any episode they opened was not believed."""

    def __init__(self, runtime: EnvRuntime) -> None:
        self._runtime = runtime
        self.breaches: list[str] = []

    def open_episode(self, *args: Any, **kwargs: Any) -> Episode:
        return _Watched(self._runtime.open_episode(*args, **kwargs), self.breaches)

    def __getattr__(self, name: str) -> Any:  # run_checks, settings, ...: the runtime's own
        return getattr(self._runtime, name)


class _Watched:
    def __init__(self, episode: Episode, breaches: list[str]) -> None:
        self._episode, self._breaches = episode, breaches

    @property
    def state(self) -> dict[str, Any]:
        return self._episode.state  # raises EpisodeBreach once the episode is known to have forged replies

    def call(self, tool: str, args: dict[str, Any]) -> CallOutcome:
        return self._episode.call(tool, args)

    def close(self) -> None:
        self._episode.close()  # syncs first: a frame sent after the last reply is found here at the latest
        breach = getattr(self._episode, "breach", None)
        if breach is not None and breach not in self._breaches:
            self._breaches.append(breach)

    def __enter__(self) -> _Watched:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._episode, name)
