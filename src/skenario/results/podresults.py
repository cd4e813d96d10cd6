"""KEP-140's PodResults for a results file, spilled to disk as attempts happen.

Keeping every attempt of a large trace in memory until the end is what made a replay of 150,000
pods need 14 GB: each attempt's plugin results are tens of kilobytes. Here each attempt is
written, as the JSON it will have in the file, to a temporary file beside the results file the
moment it is made; memory keeps only where each pod's attempts lie. At the end the document is
written pod by pod, each pod's attempts read back in order, so the whole document is never in
memory either. The timeline's events spill to a second file the same way.

An attempt that kept its plugin results (`SchedulerSettings.plugin_results`) is written in full; one
that did not keeps its time, candidates, choice and message, with `allFilteredNodes` and
`pluginResults` null.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from skenario.results.files import atomic_path
from skenario.scheduling.attempts import Attempt
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.departed import AnyPod
from skenario.scheduling.history import TimelineEvent
from skenario.scheduling.pods import Pod


class ResultsFile:
    """A results file being written: attempts spill as they come, the document is put together at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Beside the results file: the spill is as large as the file will be, so it goes where the user
        # chose to put that much; it has no name and is gone when closed (or when the process ends).
        self._spill: IO[bytes] = tempfile.TemporaryFile(  # noqa: SIM115 - closed by `close` / the `with`
            dir=path.parent, prefix=f".{path.name}.", suffix=".spill"
        )
        self._end = 0
        self._where: dict[int, list[tuple[int, int]]] = {}  # pod id -> (offset, length) of each attempt
        self._events: IO[str] = tempfile.TemporaryFile(  # noqa: SIM115 - closed by `close` / the `with`
            "w+", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", suffix=".events"
        )

    def follow(self, controller: SchedulingController) -> None:
        """Hear every attempt and timeline event of `controller` as it happens."""
        controller.on_attempt = self.attempt
        controller.timeline.sink = self.event

    def attempt(self, pod: Pod, attempt: Attempt, kept: bool) -> None:
        """Spill one attempt: in full if it kept its plugin results, else its summary."""
        record = attempt.to_dict(plugin_results=kept)
        data = json.dumps(record, separators=(",", ":")).encode()
        self._spill.write(data)
        self._where.setdefault(pod.id, []).append((self._end, len(data)))
        self._end += len(data)

    def event(self, event: TimelineEvent) -> None:
        """Spill one timeline event, one JSON line."""
        self._events.write(json.dumps(event.as_dict()) + "\n")

    def events(self) -> Iterator[dict[str, Any]]:
        """The spilled timeline, in order."""
        self._events.flush()
        self._events.seek(0)
        for line in self._events:
            yield json.loads(line)

    def attempts(self, pod: AnyPod) -> list[dict[str, Any]]:
        """The pod's attempts, in the order they happened, as the file will have them."""
        spill, out = self._spill, []
        for offset, length in self._where.get(pod.id, ()):
            spill.seek(offset)
            out.append(json.loads(spill.read(length)))
        spill.seek(self._end)
        return out

    def write(self, pods: Iterable[AnyPod], timeline: Iterable[Mapping[str, object]]) -> None:
        """The document `{"pods": [PodResult...], "timeline": [...]}`, written whole or not at all."""
        self._spill.flush()
        with atomic_path(self.path) as partial, partial.open("w", encoding="utf-8") as out:
            out.write('{"pods": [')
            for k, pod in enumerate(pods):
                result = pod.result() | {"scheduleResult": self.attempts(pod)}
                out.write((",\n" if k else "\n") + json.dumps(result))
            out.write('\n],\n"timeline": [')
            for k, event in enumerate(timeline):
                out.write((",\n" if k else "\n") + json.dumps(event))
            out.write("\n]}\n")

    def close(self) -> None:
        self._spill.close()
        self._events.close()

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
