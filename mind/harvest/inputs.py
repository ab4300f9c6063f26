"""Opening harvest inputs safely: files, ``.zip`` members as streams, text with limits.

Every reader here is bounded: a zip member may not inflate beyond ``MAX_MEMBER_BYTES`` nor
beyond ``MAX_ZIP_RATIO`` times its compressed size (zip bombs), a text file may not exceed its
limit, and binary garbage is recognised before it reaches a parser. Errors are
:class:`HarvestError` naming the file (and member) and the byte position.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Final

from mind.harvest.errors import HarvestError, safe_reason

MAX_MEMBER_BYTES: Final = 8 * 1024**3  # one inflated zip member
MAX_ZIP_RATIO: Final = 200  # inflated / compressed, per member
MAX_TEXT_BYTES: Final = 256 * 1024**2  # one text / markdown / JSONL file read whole
SNIFF_BYTES: Final = 8192


class InflationError(HarvestError):
    """A zip member that inflates, or declares it would inflate, beyond the limits (a zip
    bomb): never taken for "not this source's file" while sniffing."""


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

    def __init__(self, raw: IO[bytes], name: str, limit: int | None = None) -> None:
        self._raw = raw
        self.name = name
        self.limit = limit
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


def zip_members(path: Path) -> list[str]:
    try:
        with zipfile.ZipFile(path) as zf:
            return [i.filename for i in zf.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError) as exc:
        raise HarvestError(f"not a readable zip archive ({safe_reason(exc)})",
                           path=str(path)) from exc


def find_member(names: list[str], wanted: str) -> str | None:
    """The member whose base name is ``wanted`` (shallowest first), or ``None``."""
    hits = [n for n in names if n.rsplit("/", 1)[-1] == wanted]
    return min(hits, key=lambda n: (n.count("/"), n)) if hits else None


@contextmanager
def open_member(path: Path, member: str) -> Iterator[CountingReader]:
    """Stream one zip member, guarded against inflation bombs."""
    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo(member)
            limit = min(MAX_MEMBER_BYTES, max(info.compress_size, 1) * MAX_ZIP_RATIO)
            if info.file_size > limit:
                raise InflationError(
                    f"member {member} declares {info.file_size:,} bytes from "
                    f"{info.compress_size:,} compressed (a zip bomb?)", path=str(path),
                )
            with zf.open(info) as raw:
                yield CountingReader(raw, f"{path}!{member}", limit)
    except (zipfile.BadZipFile, KeyError, OSError, EOFError, zipfile.LargeZipFile) as exc:
        raise HarvestError(f"cannot read zip member {member} ({safe_reason(exc)})",
                           path=str(path)) from exc


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
