"""Opening harvest inputs safely: files, ``.zip`` members as streams, text with limits.

Every reader here is bounded: a zip member may not inflate beyond ``MAX_MEMBER_BYTES`` nor
beyond ``MAX_ZIP_RATIO`` times its compressed size (zip bombs), a text file may not exceed its
limit, and binary garbage is recognised before it reaches a parser. Errors are
:class:`HarvestError` naming the file (and member) and the byte position.

A ``.zip`` is opened once per use (:class:`Archive`: the central directory is read once, not
once per member opened — 10,000 members sniffed one by one re-read it 3,000 times) and all
the reads of its members share one budget of inflated bytes (:func:`archive_budget`): an
input cannot be made to inflate far more in all than any one member may, however many
members it holds or however often they are re-read.
"""

from __future__ import annotations

import io
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Final

from mind.harvest.errors import HarvestError, safe_reason

MAX_MEMBER_BYTES: Final = 8 * 1024**3  # one inflated zip member
MAX_ZIP_RATIO: Final = 200  # inflated / compressed, per member
MAX_TEXT_BYTES: Final = 256 * 1024**2  # one text / markdown / JSONL file read whole
SNIFF_BYTES: Final = 8192
ARCHIVE_READS: Final = 3  # every member inflated fully this many times over (sniff, parse)
MIN_ARCHIVE_BUDGET: Final = 16 * 1024**2


def archive_budget(compressed: int) -> int:
    """The inflated bytes every read of one archive may produce in all."""
    return max(MIN_ARCHIVE_BUDGET, compressed * MAX_ZIP_RATIO * ARCHIVE_READS)


class ArchiveError(HarvestError):
    """The input's archive cannot be read as it should: an error for the whole input, never
    taken for "not this source's file" while sniffing."""


class InflationError(ArchiveError):
    """A zip member that inflates, or declares it would inflate, beyond the limits (a zip
    bomb)."""


class DamagedArchive(ArchiveError):
    """A ``.zip`` that cannot be read as one: cut off mid-download, or corrupt."""


ZIP_MAGIC: Final = b"PK"
ZIP_SIGNATURES: Final = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")


def damaged(path: Path, reason: str) -> DamagedArchive:
    return DamagedArchive(f"the archive is damaged ({reason}): download it again",
                          path=str(path))


def check_archive(path: Path) -> None:
    """Refuse a file that is a zip archive by its name or its first bytes but that cannot be
    opened as one: a download cut off before the zip's directory at its end, or corrupt
    bytes — instead of importing the archive's bytes as a document or not knowing what it
    is."""
    if not path.is_file():
        return
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
        size = path.stat().st_size
    except OSError:
        return
    looks_zip = head.startswith(ZIP_SIGNATURES) or path.suffix.lower() == ".zip"
    if not looks_zip or zipfile.is_zipfile(path):
        return
    if head.startswith(ZIP_MAGIC) or not head:
        raise damaged(path, f"truncated at byte {size:,}, before the zip's directory")
    raise damaged(path, "named .zip, but it does not start like a zip archive")


def looks_binary(head: bytes) -> bool:
    """NUL bytes or mostly non-text bytes in the first block (UTF-8/16 BOMs are text)."""
    if not head:
        return False
    if head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return False
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
        return False
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:  # a multi-byte character cut by the block boundary
            return False
    control = sum(1 for b in head if b < 9 or 13 < b < 32)
    return control > len(head) // 10


class CountingReader(io.RawIOBase):
    """A binary stream that counts what it hands out and refuses to pass ``limit`` bytes."""

    def __init__(self, raw: IO[bytes], name: str, limit: int | None = None,
                 archive: Archive | None = None) -> None:
        self._raw = raw
        self.name = name
        self.limit = limit
        self.archive = archive  # charged for every byte read: its budget over all members
        self.position = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.position += n
        if self.limit is not None and self.position > self.limit:
            raise InflationError(
                f"inflates beyond {self.limit:,} bytes (a zip bomb?)",
                path=self.name, position=f"byte {self.position:,}",
            )
        if self.archive is not None:
            self.archive.charge(n, self.name, self.position)
        return n

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            chunks = []
            while chunk := self.read(1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        buf = bytearray(size)
        n = self.readinto(buf)
        return bytes(buf[:n])


def is_zip(path: Path) -> bool:
    return path.is_file() and zipfile.is_zipfile(path)


class Archive:
    """One ``.zip`` input opened once: its member names, each member streamed through the one
    ``ZipFile``, and :func:`archive_budget` over every read (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path)
            self.budget = archive_budget(path.stat().st_size)
        except zipfile.BadZipFile as exc:
            raise damaged(path, safe_reason(exc)) from exc
        except OSError as exc:
            raise HarvestError(f"not a readable zip archive ({safe_reason(exc)})",
                               path=str(path)) from exc
        self.names = [i.filename for i in self._zip.infolist() if not i.is_dir()]
        self.inflated = 0
        self._lock = threading.Lock()

    def charge(self, n: int, name: str, position: int) -> None:
        with self._lock:
            self.inflated += n
            over = self.inflated > self.budget
        if over:
            raise InflationError(
                f"the archive inflates beyond {self.budget:,} bytes in all (a zip bomb?)",
                path=name, position=f"byte {position:,}")

    @contextmanager
    def open(self, member: str) -> Iterator[CountingReader]:
        """Stream one member, guarded against inflation bombs."""
        try:
            info = self._zip.getinfo(member)
            limit = min(MAX_MEMBER_BYTES, max(info.compress_size, 1) * MAX_ZIP_RATIO)
            if info.file_size > limit:
                raise InflationError(
                    f"member {member} declares {info.file_size:,} bytes from "
                    f"{info.compress_size:,} compressed (a zip bomb?)", path=str(self.path),
                )
            with self._zip.open(info) as raw:
                yield CountingReader(raw, f"{self.path}!{member}", limit, self)
        except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
            raise damaged(self.path, f"member {member}: {safe_reason(exc)}") from exc
        except (KeyError, OSError, zipfile.LargeZipFile) as exc:
            raise HarvestError(f"cannot read zip member {member} ({safe_reason(exc)})",
                               path=str(self.path)) from exc

    def close(self) -> None:
        self._zip.close()


def find_member(names: list[str], wanted: str) -> str | None:
    """The member whose base name is ``wanted`` (shallowest first), or ``None``."""
    hits = [n for n in names if n.rsplit("/", 1)[-1] == wanted]
    return min(hits, key=lambda n: (n.count("/"), n)) if hits else None


@contextmanager
def open_member(path: Path, member: str) -> Iterator[CountingReader]:
    """Stream one zip member of an archive opened for this read alone."""
    archive = Archive(path)
    try:
        with archive.open(member) as reader:
            yield reader
    finally:
        archive.close()


@contextmanager
def open_binary(path: Path) -> Iterator[CountingReader]:
    """Stream a plain file, refusing binary garbage up front."""
    if not path.exists():
        raise HarvestError("no such file", path=str(path))
    if path.is_dir():
        raise HarvestError("is a directory, expected a file", path=str(path))
    try:
        with path.open("rb") as raw:
            if looks_binary(raw.read(SNIFF_BYTES)):
                raise HarvestError("binary data, not a text export", path=str(path),
                                   position="byte 0")
            raw.seek(0)
            yield CountingReader(raw, str(path))
    except OSError as exc:
        raise HarvestError(f"cannot read ({exc.strerror or exc})", path=str(path)) from exc


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 (BOM allowed) or UTF-16 with BOM; anything else is a clear error."""
    if looks_binary(data[:SNIFF_BYTES]):
        raise HarvestError("binary data, not text", path=name, position="byte 0")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise HarvestError(f"not UTF-8 text ({exc.reason})", path=name,
                           position=f"byte {exc.start:,}") from exc


def read_text(path: Path, limit: int = MAX_TEXT_BYTES) -> str:
    """A whole text file (markdown, plaintext, small JSON), size-limited and decoded."""
    if not path.is_file():
        raise HarvestError("no such file", path=str(path))
    size = path.stat().st_size
    if size > limit:
        raise HarvestError(f"is {size:,} bytes; the limit for this source is {limit:,}",
                           path=str(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise HarvestError(f"cannot read ({exc.strerror or exc})", path=str(path)) from exc
    return decode_text(data, str(path))
