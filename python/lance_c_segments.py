"""Segment metadata between lance-c and pylance.

lance-c's segment builders return a segment's metadata as bytes: the
``pb::IndexMetadata`` message of the Lance manifest (``table.proto``),
encoded as protobuf.  pylance's distributed-build API takes and returns
``lance.dataset.Index`` objects instead.  ``decode`` turns the bytes into an
``Index`` that ``LanceDataset.commit_existing_index_segments`` accepts, and
``encode`` turns an ``Index`` (for example from
``LanceDataset.create_index_uncommitted``) into bytes that
``lance_dataset_commit_index_segments`` (and its ``_with_options`` form)
accepts.

Only the standard library and pylance are needed: the protobuf wire format
and the portable Roaring bitmap format (the fragment coverage) are read and
written here.  See docs/segment-metadata.md for what travels and what does
not.
"""

from __future__ import annotations

import struct
import uuid as _uuid
from datetime import datetime, timedelta, timezone
from typing import Iterable, Iterator, List, Optional, Tuple

from lance.dataset import Index, IndexFile

__all__ = ["decode", "encode", "decode_bitmap", "encode_bitmap"]

# table.proto, message IndexMetadata
_UUID, _FIELDS, _NAME, _DATASET_VERSION, _FRAGMENT_BITMAP = 1, 2, 3, 4, 5
_INDEX_DETAILS, _INDEX_VERSION, _CREATED_AT, _BASE_ID, _FILES = 6, 7, 8, 9, 10
_COVERING_FIELDS = 11

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


# ---- protobuf wire format ----------------------------------------------


def _read_varint(data: bytes, pos: int) -> Tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _messages(data: bytes) -> Iterator[Tuple[int, int, object]]:
    """Yields (field number, wire type, value) for each field of a message."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _read_varint(data, pos)
        elif wire == _LEN:
            size, pos = _read_varint(data, pos)
            if pos + size > len(data):
                raise ValueError("truncated field")
            value, pos = data[pos : pos + size], pos + size
        elif wire == _I64:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == _I32:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(data):
            raise ValueError("truncated field")
        yield number, wire, value


def _int32(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >= 1 << 63 else v


def _repeated_int32(wire: int, value) -> List[int]:
    if wire == _VARINT:
        return [_int32(value)]
    out, pos = [], 0
    while pos < len(value):
        v, pos = _read_varint(value, pos)
        out.append(_int32(v))
    return out


def _put_varint(out: bytearray, value: int) -> None:
    value &= 0xFFFFFFFFFFFFFFFF
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _put_key(out: bytearray, number: int, wire: int) -> None:
    _put_varint(out, number << 3 | wire)


def _put_len(out: bytearray, number: int, payload: bytes) -> None:
    _put_key(out, number, _LEN)
    _put_varint(out, len(payload))
    out += payload


def _put_uint(out: bytearray, number: int, value: int) -> None:
    _put_key(out, number, _VARINT)
    _put_varint(out, value)


def _packed(values: Iterable[int]) -> bytes:
    out = bytearray()
    for v in values:
        _put_varint(out, v)
    return bytes(out)


# ---- Roaring bitmaps, portable serialization ----------------------------

_COOKIE_NO_RUNS = 12346
_COOKIE = 12347


def decode_bitmap(data: bytes) -> List[int]:
    """The sorted values of a portable-format Roaring bitmap."""
    if not data:
        return []
    (cookie,) = struct.unpack_from("<I", data, 0)
    pos = 4
    if cookie & 0xFFFF == _COOKIE:
        count = (cookie >> 16) + 1
        runs = data[pos : pos + (count + 7) // 8]
        pos += (count + 7) // 8
        has_run = [bool(runs[i // 8] >> (i % 8) & 1) for i in range(count)]
        has_offsets = count >= 4
    elif cookie == _COOKIE_NO_RUNS:
        (count,) = struct.unpack_from("<I", data, pos)
        pos += 4
        has_run = [False] * count
        has_offsets = True
    else:
        raise ValueError("not a Roaring bitmap")
    headers = [struct.unpack_from("<HH", data, pos + 4 * i) for i in range(count)]
    pos += 4 * count
    if has_offsets:
        pos += 4 * count
    values: List[int] = []
    for (key, card_minus_one), run in zip(headers, has_run):
        high = key << 16
        card = card_minus_one + 1
        if run:
            (n,) = struct.unpack_from("<H", data, pos)
            pos += 2
            for i in range(n):
                start, length = struct.unpack_from("<HH", data, pos + 4 * i)
                values.extend(high | v for v in range(start, start + length + 1))
            pos += 4 * n
        elif card <= 4096:
            values.extend(high | v for v in struct.unpack_from(f"<{card}H", data, pos))
            pos += 2 * card
        else:
            words = struct.unpack_from("<1024Q", data, pos)
            pos += 8192
            for w, word in enumerate(words):
                while word:
                    low = word & -word
                    values.append(high | (w * 64 + low.bit_length() - 1))
                    word ^= low
    return values


def _runs(lows: List[int]) -> List[Tuple[int, int]]:
    """The runs [start, end] of sorted, distinct `lows`."""
    runs: List[List[int]] = []
    for low in lows:
        if runs and runs[-1][1] + 1 == low:
            runs[-1][1] = low
        else:
            runs.append([low, low])
    return [(a, b) for a, b in runs]


def encode_bitmap(values: Iterable[int]) -> bytes:
    """A portable-format Roaring bitmap of `values`, laid out as the Lance
    core writes one: each container is stored as a run container when that
    is strictly smaller than its array or bitmap form (the core optimizes
    a bitmap before it serializes it), so bytes the library wrote encode
    back to the same bytes."""
    ordered = sorted(set(int(v) for v in values))
    if any(v < 0 or v > 0xFFFFFFFF for v in ordered):
        raise ValueError("bitmap values must be 32-bit unsigned integers")
    containers: List[Tuple[int, List[int]]] = []
    for v in ordered:
        if not containers or containers[-1][0] != v >> 16:
            containers.append((v >> 16, []))
        containers[-1][1].append(v & 0xFFFF)
    body = []
    is_run = []
    for _, lows in containers:
        runs = _runs(lows)
        plain = 2 * len(lows) if len(lows) <= 4096 else 8192
        is_run.append(plain > 2 + 4 * len(runs))
        if is_run[-1]:
            chunk = struct.pack("<H", len(runs))
            for start, end in runs:
                chunk += struct.pack("<HH", start, end - start)
            body.append(chunk)
        elif len(lows) <= 4096:
            body.append(struct.pack(f"<{len(lows)}H", *lows))
        else:
            words = [0] * 1024
            for low in lows:
                words[low // 64] |= 1 << (low % 64)
            body.append(struct.pack("<1024Q", *words))
    n = len(containers)
    if any(is_run):
        flags = bytearray((n + 7) // 8)
        for i, run in enumerate(is_run):
            if run:
                flags[i // 8] |= 1 << (i % 8)
        out = bytearray(struct.pack("<I", _COOKIE | ((n - 1) << 16))) + flags
        with_offsets = n >= 4
        offset = 4 + len(flags) + 4 * n + (4 * n if with_offsets else 0)
    else:
        out = bytearray(struct.pack("<II", _COOKIE_NO_RUNS, n))
        with_offsets = True
        offset = 8 + 8 * n
    for key, lows in containers:
        out += struct.pack("<HH", key, len(lows) - 1)
    if with_offsets:
        for chunk in body:
            out += struct.pack("<I", offset)
            offset += len(chunk)
    for chunk in body:
        out += chunk
    return bytes(out)


# ---- IndexMetadata <-> Index -------------------------------------------


def decode(data: bytes) -> Index:
    """Segment metadata bytes -> a pylance ``Index``.

    Fields the ``Index`` cannot hold (a clustering id, free-form segment
    metadata, fields of newer Lance versions) are dropped; ship the bytes
    themselves when nothing may be lost."""
    seg_uuid: Optional[str] = None
    fields: List[int] = []
    covering: List[int] = []
    name = ""
    dataset_version = 0
    fragments: List[int] = []
    details: Optional[Tuple[str, bytes]] = None
    index_version = 0
    created_at: Optional[datetime] = None
    base_id: Optional[int] = None
    files: Optional[List[IndexFile]] = None
    for number, wire, value in _messages(bytes(data)):
        if number == _UUID and wire == _LEN:
            raw = b"".join(v for n, w, v in _messages(value) if n == 1 and w == _LEN)
            seg_uuid = str(_uuid.UUID(bytes=raw))
        elif number == _FIELDS:
            fields += _repeated_int32(wire, value)
        elif number == _COVERING_FIELDS:
            covering += _repeated_int32(wire, value)
        elif number == _NAME and wire == _LEN:
            name = value.decode("utf-8")
        elif number == _DATASET_VERSION and wire == _VARINT:
            dataset_version = value
        elif number == _FRAGMENT_BITMAP and wire == _LEN:
            fragments = decode_bitmap(value)
        elif number == _INDEX_DETAILS and wire == _LEN:
            type_url, payload = "", b""
            for n, w, v in _messages(value):
                if n == 1 and w == _LEN:
                    type_url = v.decode("utf-8")
                elif n == 2 and w == _LEN:
                    payload = bytes(v)
            details = (type_url, payload)
        elif number == _INDEX_VERSION and wire == _VARINT:
            index_version = _int32(value)
        elif number == _CREATED_AT and wire == _VARINT:
            created_at = _EPOCH + timedelta(milliseconds=value)
        elif number == _BASE_ID and wire == _VARINT:
            base_id = value
        elif number == _FILES and wire == _LEN:
            path, size = "", 0
            for n, w, v in _messages(value):
                if n == 1 and w == _LEN:
                    path = v.decode("utf-8")
                elif n == 2 and w == _VARINT:
                    size = v
            files = (files or []) + [IndexFile(path=path, size_bytes=size)]
    if seg_uuid is None:
        raise ValueError("segment metadata without a UUID")
    return Index(
        uuid=seg_uuid,
        name=name,
        fields=fields,
        dataset_version=dataset_version,
        fragment_ids=set(fragments),
        index_version=index_version,
        created_at=created_at,
        base_id=base_id,
        files=files,
        index_details=details,
        covering_fields=covering,
    )


def encode(index: Index) -> bytes:
    """A pylance ``Index`` -> segment metadata bytes for lance-c."""
    out = bytearray()
    raw_uuid = _uuid.UUID(str(index.uuid)).bytes
    inner = bytearray()
    _put_len(inner, 1, raw_uuid)
    _put_len(out, _UUID, bytes(inner))
    if index.fields:
        _put_len(out, _FIELDS, _packed(index.fields))
    _put_len(out, _NAME, index.name.encode("utf-8"))
    _put_uint(out, _DATASET_VERSION, int(index.dataset_version))
    _put_len(out, _FRAGMENT_BITMAP, encode_bitmap(index.fragment_ids))
    if index.index_details is not None:
        type_url, payload = index.index_details
        any_msg = bytearray()
        _put_len(any_msg, 1, type_url.encode("utf-8"))
        _put_len(any_msg, 2, bytes(payload))
        _put_len(out, _INDEX_DETAILS, bytes(any_msg))
    _put_uint(out, _INDEX_VERSION, int(index.index_version))
    if index.created_at is not None:
        created = index.created_at
        if created.tzinfo is None:
            created = created.replace(tzinfo=timezone.utc)
        # Whole milliseconds, as the manifest keeps them (exact integer arithmetic).
        _put_uint(out, _CREATED_AT, (created - _EPOCH) // timedelta(milliseconds=1))
    if index.base_id is not None:
        _put_uint(out, _BASE_ID, int(index.base_id))
    for f in index.files or []:
        file_msg = bytearray()
        _put_len(file_msg, 1, f.path.encode("utf-8"))
        _put_uint(file_msg, 2, int(f.size_bytes))
        _put_len(out, _FILES, bytes(file_msg))
    if index.covering_fields:
        _put_len(out, _COVERING_FIELDS, _packed(index.covering_fields))
    return bytes(out)
