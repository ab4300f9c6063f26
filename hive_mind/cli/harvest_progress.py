"""A harvest's progress on stderr: rich bars at a terminal, plain lines for logs and CI.

The facade reports :class:`~workers.harvest_summary.ProgressEvent` values: ``parse`` while the
export is read and written (indexing already runs beside it), ``index`` while the command
waits for the last frames' vectors, ``done`` at the end. Frames indexed = frames written minus
the mind's outbox (``pending_index``), so both views show the indexing as its own phase, with
its rate and the time it still needs.

- :class:`HarvestBars` (a terminal): rows for items parsed, frames written and frames indexed;
  the last one a bar over the frames written so far, with frames per second and an ETA.
- :class:`HarvestLines` (``--progress`` without a terminal): one line every
  :data:`LINE_SECONDS` and one when a phase starts or ends, e.g. ``harvest: index 1,200/3,000
  frames, 75/s, eta 0:00:24``.

In client mode the server reports no progress: both say so (``remote``) and wait.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from rich.progress import Progress, Task
    from rich.text import Text

    from workers.harvest_summary import ProgressEvent

LINE_SECONDS: Final = 5.0


def clock(seconds: float) -> str:
    """``H:MM:SS``."""
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


@dataclass(frozen=True, slots=True)
class Counts:
    """What an event says, as the rows show it."""

    phase: str
    items: int
    written: int
    indexed: int

    @classmethod
    def of(cls, event: ProgressEvent) -> Counts:
        pending = event.pending_index
        # written frames no longer in the outbox are indexed (the outbox may hold others)
        indexed = 0 if pending is None else max(0, event.frames_written - pending)
        return cls(event.phase, event.items, event.frames_written, indexed)


class HarvestBars:
    """Rich progress rows on the stderr console (a terminal)."""

    def __init__(self) -> None:
        self.progress: Progress | None = None
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> HarvestBars:
        from rich.progress import (
            BarColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        class RateEta(ProgressColumn):
            """Frames (items) per second since the start; the ETA on the rows that have one."""

            def render(self, task: Task) -> Text:
                elapsed = (task.finished_time if task.finished else task.elapsed) or 0.0
                speed = task.completed / elapsed if elapsed > 0 else 0.0
                if not speed:
                    return Text("")
                text = f"{speed:,.0f}/s"
                if task.fields["eta"] and task.total and not task.finished:
                    text += f"  eta {clock((task.total - task.completed) / speed)}"
                return Text(text, style="progress.data.speed")

        from hive_mind.cli.common import err_console

        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description:<16}"), BarColumn(),
            TextColumn("{task.completed:>9,.0f}{task.fields[of]}"), RateEta(),
            TimeElapsedColumn(), console=err_console(), transient=False)
        self.progress.start()
        for key, label in (("items", "items parsed"), ("written", "frames written"),
                           ("indexed", "frames indexed")):
            # the indexing row's clock (and rate) starts with the first frame written
            self.tasks[key] = self.progress.add_task(label, total=None, of="",
                                                     eta=key == "indexed",
                                                     start=key != "indexed")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def remote(self, url: str) -> None:
        """Client mode: the server reports no progress; one row says where the import runs."""
        if self.progress is None:
            return
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        for task in self.tasks.values():
            self.progress.update(task, visible=False)
        self.progress.stop()
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                 TimeElapsedColumn(), console=self.progress.console)
        self.progress.start()
        self.progress.add_task(f"importing at {url}: uploading, parsing, indexing")
        self.tasks = {}

    def __call__(self, event: ProgressEvent) -> None:
        if self.progress is None or not self.tasks:
            return
        now = Counts.of(event)
        p, t, parsing = self.progress, self.tasks, now.phase == "parse"
        p.update(t["items"], completed=now.items, total=None if parsing else now.items)
        p.update(t["written"], completed=now.written, total=None if parsing else now.written)
        if now.written:  # a bar over what is written so far; fixed once parsing is done
            p.start_task(t["indexed"])  # once: a started task keeps its start time
            p.update(t["indexed"], completed=min(now.indexed, now.written), total=now.written,
                     of=f" / {now.written:,}")


class HarvestLines:
    """Plain progress lines on ``stream`` (a log, a CI job)."""

    def __init__(self, stream: IO[str], every: float = LINE_SECONDS) -> None:
        self.stream, self.every = stream, every
        self.started = time.monotonic()
        self.last: tuple[float, Counts] | None = None  # when the last line was printed
        self.phase_started: dict[str, tuple[float, Counts]] = {}

    def __enter__(self) -> HarvestLines:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def remote(self, url: str) -> None:
        self.stream.write(f"harvest: importing at {url}: the server uploads, parses and "
                          "indexes it and reports no progress (client mode)\n")
        self.stream.flush()

    def __call__(self, event: ProgressEvent) -> None:
        at, now = time.monotonic(), Counts.of(event)
        new_phase = now.phase not in self.phase_started
        if new_phase:
            self.phase_started[now.phase] = (at, now)
        if not (new_phase or now.phase == "done"
                or self.last is None or at - self.last[0] >= self.every):
            return
        self.stream.write(self.line(at, now) + "\n")
        self.stream.flush()
        self.last = (at, now)

    def line(self, at: float, now: Counts) -> str:
        spent = clock(at - self.started)
        if now.phase == "done":
            return (f"harvest: done {now.items:,} items, {now.written:,} frames written, "
                    f"{now.indexed:,} indexed in {spent}")
        begun, first = self.phase_started[now.phase]
        moving = now.written - first.written if now.phase == "parse" else \
            now.indexed - first.indexed
        speed = moving / (at - begun) if at > begun else 0.0
        rate = f", {speed:,.0f}/s" if speed > 0 else ""
        if now.phase == "parse":
            return (f"harvest: parse {now.items:,} items, {now.written:,} frames written"
                    f"{rate}, {now.indexed:,} indexed ({spent})")
        left = now.written - now.indexed
        eta = f", eta {clock(left / speed)}" if speed > 0 and left else ""
        return f"harvest: index {now.indexed:,}/{now.written:,} frames{rate}{eta} ({spent})"


class NoProgress:
    """No progress shown."""

    def __enter__(self) -> NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def remote(self, url: str) -> None:
        pass

    def __call__(self, event: ProgressEvent) -> None:
        pass


def harvest_progress(show: bool | None) -> HarvestBars | HarvestLines | NoProgress:
    """``--progress`` (``True``), ``--no-progress`` (``False``) or neither (``None``: bars at
    a terminal, nothing otherwise); ``--progress`` without a terminal prints lines."""
    import sys

    terminal = sys.stderr.isatty()
    if show is False or (show is None and not terminal):
        return NoProgress()
    return HarvestBars() if terminal else HarvestLines(sys.stderr)
