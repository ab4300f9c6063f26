"""The JSON codec used as arq's ``job_serializer`` / ``job_deserializer`` (no pickle anywhere).

arq hands the serializer a dict: for a job ``{"t", "f", "a", "k", "et"}`` (try, function name,
args, kwargs, enqueue time ms), for a result additionally ``{"s", "r", "st", "ft", "q", "id"}``.
Both ``create_pool(...)`` and the ``WorkerSettings`` must use this pair::

    create_pool(settings, job_serializer=serialize, job_deserializer=deserialize)

Encoding (stdlib ``json``, compact separators, UTF-8, ``ensure_ascii=False``, no NaN/inf):

- pydantic models anywhere inside (jobs, ops, results) → ``model_dump(mode="json")``; the
  receiver re-validates with ``parse_job`` / ``parse_op`` (the codec never rebuilds classes);
- dataclass instances (the owner's op results, ``actors/results.py``) → their fields, so a
  host's ``apply_op`` result is JSON like everything else;
- exceptions (arq stores the exception of a failed job as its result) →
  ``{"error": "<type name>", "message": "<str(exc)>"}``, so a failure never breaks the
  serializer; ``Job.result()`` then raises ``arq.jobs.SerializationError`` carrying that dict;
- aware datetimes → house UTC ISO with ``Z`` (naive ones are refused), dates → ``YYYY-MM-DD``,
  enums → their value, UUIDs → hex string, :class:`Vector` → base64; tuples become lists
  (``deserialize`` turns arq's ``"a"`` back into a tuple, each object in it a
  :class:`Payload`: a ``dict`` with a short ``repr``).

A finished job's result is stored **without the job's arguments** (``"a"`` is empty): the
arguments are the payload, up to ~150 KB of vectors for a cognify batch's ``apply_index``,
which arq would otherwise encode and write to Redis a second time per job; nothing reads them
back (dead letters are recorded by :mod:`workers.queue` with what they need).

Decoding only parses JSON (duplicate keys, NaN/Infinity and non-object tops are refused): it
never executes code. Bytes that are not such JSON — e.g. a payload pickled by a client that
forgot ``job_serializer`` — raise :class:`PayloadError` (a ``ValueError``) starting
``"not a hive-mind JSON job payload"``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import uuid
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

from queue_schemas.errors import PayloadError
from queue_schemas.vector import Vector
from vocabulary.timestamps import format_ts

_NOT_OURS = "not a hive-mind JSON job payload"


def _encode(value: Any) -> Any:
    """``json.dumps`` ``default`` hook: objects JSON does not know natively."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # one level: ``json`` calls back here for the dataclasses inside (``asdict`` deep-copied
        # every leaf: a 200-frame save's result took 3.5 ms against 1.2,
        # bench/components/op_codec.py)
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    if isinstance(value, datetime):
        return format_ts(value)  # raises on naive datetimes
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, uuid.UUID):
        return value.hex
    if isinstance(value, Vector):
        return value.to_base64()
    raise TypeError(f"cannot encode {type(value).__name__} as hive-mind JSON")


def dumps(obj: object, *, ensure_ascii: bool) -> str:
    """``obj`` as hive-mind JSON text (the encoding above), which :func:`serialize` writes for
    arq's dicts."""
    return json.dumps(
        obj,
        default=_encode,
        ensure_ascii=ensure_ascii,
        allow_nan=False,
        separators=(",", ":"),
    )


def serialize(obj: dict[str, Any]) -> bytes:
    """Encode arq's job/result dict as compact UTF-8 JSON. A result is stored without its job's
    arguments (see the module docstring)."""
    if "r" in obj and obj.get("a"):
        obj = {**obj, "a": ()}
    text = dumps(obj, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them instead (still round-trips)
        return dumps(obj, ensure_ascii=True).encode("ascii")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise PayloadError(f"{_NOT_OURS}: duplicate key {key!r}")
            seen.add(key)
    return result


class Payload(dict[str, Any]):
    """A job's argument object as decoded: a ``dict`` whose ``repr`` names the job instead of
    printing it (arq logs ``repr`` of every job's arguments as it starts it; for an
    ``apply_index`` that was ~150 KB of base64 vectors formatted, then cut to 80 characters)."""

    def __repr__(self) -> str:
        named = {k: self[k] for k in ("kind", "mind_id", "op_id") if k in self}
        return f"{{{', '.join(f'{k!r}: {v!r}' for k, v in named.items())}, …}}"


def _no_constants(name: str) -> Any:
    raise PayloadError(f"{_NOT_OURS}: {name} is not JSON")


def deserialize(data: bytes | bytearray | memoryview) -> dict[str, Any]:
    """Decode bytes written by :func:`serialize`; never executes code."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise PayloadError(f"{_NOT_OURS}: expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if data[:1] == b"\x80":
        raise PayloadError(
            f"{_NOT_OURS} (this is a pickle; hive-mind never unpickles — enqueue with "
            "job_serializer=queue_schemas.codec.serialize)"
        )
    try:
        text = data.decode("utf-8")
        decoded = json.loads(text, object_pairs_hook=_object, parse_constant=_no_constants)
    except PayloadError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PayloadError(f"{_NOT_OURS} ({type(exc).__name__}: {exc})"[:500]) from None
    if not isinstance(decoded, dict):
        raise PayloadError(f"{_NOT_OURS}: the top level is {type(decoded).__name__}, not an object")
    args = decoded.get("a")
    if isinstance(args, list):
        decoded["a"] = tuple(Payload(a) if isinstance(a, dict) else a for a in args)
    return decoded
