"""The vector lane's derived index: exact cosine while small, sign codes with exact
re-scoring above `ANN_THRESHOLD` rows.

The vectors in the store are the source of truth; this index is derived from them and
rebuilt whenever the store's vector epoch moves (a vector written or removed, a memory's
content changed or its validity ended), so it never serves a deleted memory. Callers
still pass every candidate through the store's filters, which decide liveness, scope and
visibility. A memory scores the best cosine over its entry vector and its chunks.

Large indexes keep, beside the float32 rows, one bit a dimension: the sign of each row
after a fixed random rotation (SimHash). A query is rotated the same way; its smaller
half of components is ignored (their signs are noise), and the rows whose signs differ
least from the query's on the rest are re-scored exactly from the float32 rows. Only the
candidates are read from the rows, 1/32 of the scan. A batch of searches (the write
policy's neighbours for a batch of new memories) is exact at any size: matrix products
score hundreds of queries for each read of the rows (see SEARCH_BLOCK).

Why sign codes, against the other ways of searching large indexes (`memlane bench`
measures the index's build, speed and agreement with an exact scan):
- HNSW (usearch, i8/f16): inserts are slow enough that a 10^6-row index takes most of
  an hour to build, and it still misses a tenth or more of the exact top 10.
- k-means inverted lists: built fast, but miss a fifth or more of the exact top 10
  even when they scan a fifth of the rows.
- int8 brute force: numpy has no int8 BLAS; an exact i8 scan is only a few times faster
  than float32 and still linear at 384 bytes a row.
- Sign codes + exact re-scoring of 1,024 candidates: about 0.99 of the exact top 10 on
  MiniLM and on hash vectors alike, no training, built in seconds, no new dependency;
  the scan of 10^6 rows reads 48 MB of codes.

A store on disk keeps the index beside it (`<db>.vindex`: ids, rows, codes, rotation,
each memory's scope and kind),
stamped with the vector epoch, profile and dimension, so a new process maps it instead of
reading every vector from SQLite. A file whose stamp differs from the store is never used:
the index is rebuilt from the store and the file rewritten.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from memlane.embed.blob import from_blobs
from memlane.files import open_private
from memlane.model import replace
from memlane.store import Store

Matrix = npt.NDArray[np.float32]
Codes = npt.NDArray[np.uint64]  # (words, rows): bit j of word w is dimension 64w + j
Owners = npt.NDArray[np.int32]
Names = npt.NDArray[np.bytes_]

# Rows (entry and chunk vectors) up to which search is exact: an exact scan reads 1.5 KB
# a row at 384-d, a few milliseconds at this size, and the sign codes are faster beyond.
ANN_THRESHOLD = 20_000
# Candidates re-scored exactly: at least RESCORE_MIN, or RESCORE_PER_RESULT per memory
# wanted. 1,024 keeps about 0.99 of the exact top 10; each halving loses a point or two.
RESCORE_MIN = 1_024
RESCORE_PER_RESULT = 4
# Share of the rotated query's components, the smallest, left out of the comparison:
# their signs are noise, and ignoring half lifts the top-10 agreement by several points.
DEAD_ZONE = 0.5
# A store with fewer rows reads its vectors from SQLite faster than a file pays for itself.
PERSIST_MIN_ROWS = 5_000
# Changes applied to a loaded index instead of reading every vector again: up to one
# row in DELTA_SHARE, and at least DELTA_MIN (applying them copies every row anyway).
DELTA_SHARE = 20
DELTA_MIN = 1_000
# Scores held at once by a batch search (queries x rows, float32: 64 MB), over at most
# SEARCH_ROWS rows at a time (100 MB of 384-d rows).
# Trigger: many queries at once (a batch of new memories looking for their neighbours).
# Why: one matrix product scores a block of queries against a block of rows at a
# fraction of the cost of a scan per query, sign codes included: a scan reads its rows
# for one query, a product reads them once for hundreds. Bounding the rows keeps the
# block of queries large however many rows there are. Outcome: exact answers, in less
# time than the sign codes take to narrow each query.
SEARCH_BLOCK = 1 << 24
SEARCH_ROWS = 1 << 16
FILE_SUFFIX = ".vindex"
_SEED = 20_240_611
_BLOCK = 1 << 15  # rows per block when encoding and scanning (stays in cache)
_MAGIC = b"memlane-vindex\n"
_FORMAT = 4
_ALIGN = 64


class VectorHit(msgspec.Struct, frozen=True):
    memory_id: str
    score: float  # best cosine over the memory's entry vector and its chunks


class Signs(msgspec.Struct, frozen=True):
    """The sign codes of every row, and the rotation they were taken after."""

    rotation: Matrix  # (bits, dim), orthonormal columns
    codes: Codes  # (bits / 64, rows)


class Rows(msgspec.Struct, frozen=True):
    """One epoch of a profile's vectors: memory ids, row owners, the rows themselves,
    and each memory's scope and kind."""

    epoch: int
    ids: Names  # memory ids (UTF-8); after updates, some own no row
    owner: Owners  # row -> index into ids
    matrix: Matrix  # (rows, dim)
    signs: Signs | None  # None: exact search only
    scopes: Names  # each id's scope (UTF-8; empty: no longer live)
    kinds: Names  # each id's kind
    change: int = 0  # the store's last vector change these rows include

    def memory_id(self, i: int) -> str:
        return bytes(self.ids[i]).decode("utf-8")

    def memories(self) -> int:
        """How many memories own a row: a count per id, where np.unique would sort
        every row."""
        return int(np.count_nonzero(np.bincount(self.owner, minlength=len(self.ids))))

    def search(self, query: Matrix, k: int, *, exact: bool = False) -> list[VectorHit]:
        """The k memories whose best row is closest to `query` (see VectorIndex.search)."""
        if not len(self.ids) or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        k = min(k, len(self.ids))
        if self.signs is None or exact:
            found, scores = top_memories(dot(self.matrix, q), self.owner, k)
        else:
            found, scores = _narrowed(self, self.signs, q, k)
        pairs = zip(found.tolist(), scores.tolist(), strict=True)
        return [VectorHit(self.memory_id(i), s) for i, s in pairs]

    def search_many(self, queries: Matrix, k: int) -> list[list[VectorHit]]:
        """The exact k nearest memories of each query (rows of `queries`), the batch
        scored by matrix products over blocks of rows (see SEARCH_BLOCK)."""
        q = np.asarray(queries, dtype=np.float32).reshape(len(queries), self.matrix.shape[1])
        if not len(self.owner) or k <= 0:
            return [[] for _ in q]
        k = min(k, len(self.ids))
        span = min(len(self.owner), SEARCH_ROWS)
        step = max(1, SEARCH_BLOCK // span)
        out = []
        for start in range(0, len(q), step):
            found = [_best_memories(each, k) for each in self._blocks(q[start : start + step], k)]
            out += [[VectorHit(self.memory_id(i), s) for i, s in pairs] for pairs in found]
        return out

    def search_within(
        self, queries: Matrix, k: int, scopes: Sequence[str] | None, kinds: Sequence[str]
    ) -> list[list[VectorHit]]:
        """`search_many` among the memories of these scopes (None: any) and kinds
        (empty: any) alone.

        Trigger: the write policy's neighbours, which must share a new memory's scope
        and kind. Why: the k nearest of all rows, filtered afterwards, keep only the
        few of its own scope and kind (a store of four scopes and a dozen kinds keeps
        about a thirtieth), and a restatement can sit below ten rows of other scopes. Outcome:
        the rows of those memories are gathered once for the batch and searched
        exactly; a product over a fraction of the rows costs that fraction.
        """
        member = np.ones(len(self.ids), dtype=bool)
        if scopes is not None:
            member &= np.isin(self.scopes, [s.encode("utf-8") for s in scopes])
        if kinds:
            member &= np.isin(self.kinds, [k.encode("utf-8") for k in kinds])
        rows = np.flatnonzero(member[self.owner])
        matrix = np.asarray(self.matrix)[rows]
        part = replace(self, owner=self.owner[rows], matrix=matrix, signs=None)
        return part.search_many(queries, k)

    def _blocks(self, queries: Matrix, k: int) -> list[list[tuple[Owners, Matrix]]]:
        """For each query, the k best memories of each block of SEARCH_ROWS rows."""
        each: list[list[tuple[Owners, Matrix]]] = [[] for _ in queries]
        for lo in range(0, len(self.owner), SEARCH_ROWS):
            owner = self.owner[lo : lo + SEARCH_ROWS]
            scores = queries @ np.asarray(self.matrix[lo : lo + SEARCH_ROWS]).T
            for found, row in zip(each, scores, strict=True):
                found.append(top_memories(row, owner, min(k, len(owner))))
        return each


def index_path(location: str) -> Path | None:
    """Where a store at `location` keeps its vector index; None when not a file."""
    if location in ("", ":memory:") or "://" in location:
        return None
    path = Path(location).expanduser()
    return path.with_name(path.name + FILE_SUFFIX)


def index_files(db: Path) -> list[Path]:
    """The derived files of the store at `db`: deleting them loses nothing."""
    path = index_path(str(db))
    return [path] if path is not None else []


class VectorIndex:
    """Search over one profile's vectors; memory-resident, rebuilt when stale."""

    def __init__(
        self,
        store: Store,
        profile: str,
        dim: int,
        *,
        ann_threshold: int = ANN_THRESHOLD,
        persist_min_rows: int = PERSIST_MIN_ROWS,
    ) -> None:
        self._store = store
        self.profile = profile
        self.dim = dim
        self.ann_threshold = ann_threshold
        self.persist_min_rows = persist_min_rows
        self.path = index_path(store.location)
        self._rows: Rows | None = None

    def __len__(self) -> int:
        """Memories with a current vector of this profile."""
        return self._refresh().memories()

    def describe(self) -> dict[str, Any]:
        rows = self._refresh()
        return {
            "kind": "exact" if rows.signs is None else "sign codes + exact re-scoring",
            "rows": len(rows.owner),
            "memories": rows.memories(),
            "rescored": 0 if rows.signs is None else RESCORE_MIN,
            "file": str(self.path) if self.path and self.path.exists() else None,
        }

    def search(self, query: Matrix, k: int, *, exact: bool = False) -> list[VectorHit]:
        """The k memories whose best vector is closest to `query` (unit length);
        `exact` scans every row even where sign codes would narrow the scan."""
        return self._refresh().search(query, k, exact=exact)

    def current(self) -> Rows:
        """The rows caught up with the store now (their `search` reads no store)."""
        return self._refresh()

    def snapshot(self) -> Rows:
        """The rows as last read, or as the file beside the store has them, not caught
        up with later writes (built now when there are none).

        Trigger: the write policy, once per write. Why: catching up copies the whole
        matrix, and rewrites the file, after every add: far more than a write costs.
        Outcome: the caller compares the memories changed since `Rows.change` itself
        (`vector_changes`); the next search catches up as usual.
        """
        if self._rows is None:
            persisted = self._load()
            if persisted is not None and self._same(persisted):
                self._rows = persisted
        return self._rows if self._rows is not None else self._refresh()

    def rebuild(self) -> None:
        """Read every vector again and rewrite the file, as after any write."""
        self._rows = self._build(self._store.vector_epoch())
        self._save(self._rows)

    def _refresh(self) -> Rows:
        epoch = self._store.vector_epoch()
        if self._rows is not None and self._rows.epoch == epoch:
            return self._rows
        base, from_file = self._rows, False
        if base is None:
            persisted = self._load()
            if persisted is not None and self._same(persisted):
                if persisted.epoch == epoch:
                    self._rows = persisted  # the file beside the store is current
                    return persisted
                base, from_file = persisted, True
        if base is not None:
            # Trigger: vectors changed since these rows. Why: reading every vector
            # again takes seconds at 10^5 memories and most of a minute at 10^6, after
            # every write. Outcome: only the changed memories' rows are replaced, while
            # the changes stay a small share of the rows. A stale file that caught up is
            # rewritten, so the next process maps it as it is (catching up reads the
            # whole mapped matrix once); in memory, nothing is written.
            limit = max(DELTA_MIN, len(base.owner) // DELTA_SHARE)
            delta = self._store.vector_changes(base.change, limit)
            if delta is not None:
                self._rows = self._apply(base, epoch, *delta)
                if from_file and self._rows.change != base.change:
                    self._save(self._rows)
                return self._rows
        self._rows = self._build(epoch)
        self._save(self._rows)
        return self._rows

    def _build(self, epoch: int) -> Rows:
        change = self._store.last_vector_change()  # before reading: a later one re-applies
        ids, owner, matrix = read_vectors(self._store, self.profile, self.dim)
        signs = None
        if len(owner) >= max(self.ann_threshold, 1):
            signs = encode(matrix, rotation(self.dim))
        scopes, kinds = read_groups(self._store, ids)
        return Rows(epoch, ids, owner, matrix, signs, scopes, kinds, change)

    def _apply(self, base: Rows, epoch: int, change: int, changed: list[str]) -> Rows:
        """`base` with the rows of the `changed` memories replaced by their current ones
        (none, when a memory was deleted, ended or awaits new vectors)."""
        if not changed:
            return replace(base, epoch=epoch, change=change)
        gone = np.isin(base.ids, np.asarray([i.encode("utf-8") for i in changed]))
        keep = ~gone[base.owner]
        new_ids, new_owner, new_matrix = read_vectors(self._store, self.profile, self.dim, changed)
        new_scopes, new_kinds = read_groups(self._store, new_ids, [i.decode() for i in new_ids])
        ids = np.concatenate([base.ids.astype(np.bytes_), new_ids.astype(np.bytes_)])
        scopes = np.concatenate([base.scopes.astype(np.bytes_), new_scopes])
        kinds = np.concatenate([base.kinds.astype(np.bytes_), new_kinds])
        owner = np.concatenate([base.owner[keep], new_owner + len(base.ids)]).astype(np.int32)
        matrix = np.concatenate([np.asarray(base.matrix)[keep], new_matrix])
        signs = None
        if base.signs is not None:
            added = encode(new_matrix, base.signs.rotation).codes
            codes = np.concatenate([base.signs.codes[:, keep], added], axis=1)
            signs = Signs(base.signs.rotation, np.ascontiguousarray(codes))
        elif len(owner) >= max(self.ann_threshold, 1):
            signs = encode(matrix, rotation(self.dim))
        return Rows(epoch, ids, owner, matrix, signs, scopes, kinds, change)

    # ---- the file beside the store --------------------------------------------

    def _stamp(self) -> dict[str, Any]:
        return {"format": _FORMAT, "profile": self.profile, "dim": self.dim}

    def _load(self) -> Rows | None:
        """The persisted rows of this profile, of whatever epoch; None when unusable."""
        if self.path is None:
            return None
        try:
            return read_file(self.path, self._stamp())
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a missing, partial or foreign file is simply rebuilt

    def _same(self, rows: Rows) -> bool:
        # Trigger: a file stamped with this epoch. Why: a store deleted and created
        # again at the same path can reach the same epoch with other memories. Outcome:
        # the file is used only if its first and last memories exist in this store.
        if not len(rows.ids):
            return True
        ends = (rows.memory_id(0), rows.memory_id(len(rows.ids) - 1))
        return all(self._store.get(memory_id) is not None for memory_id in ends)

    def _save(self, rows: Rows) -> None:
        if self.path is None or len(rows.owner) < self.persist_min_rows:
            return
        with contextlib.suppress(OSError):  # a read-only directory: it stays in memory
            stamp = {**self._stamp(), "epoch": rows.epoch, "change": rows.change}
            write_file(self.path, stamp, rows)


def read_vectors(
    store: Store, profile: str, dim: int, only: list[str] | None = None
) -> tuple[npt.NDArray[np.bytes_], Owners, Matrix]:
    """Every current vector of `profile` (of the `only` memories, if given): memory ids,
    row owners and the rows."""
    ids: list[bytes] = []
    index: dict[str, int] = {}
    blobs: list[bytes] = []
    owner: list[int] = []
    for memory_id, _chunk, blob in store.vectors(profile, only):
        if len(blob) != dim * 4:
            continue  # a vector of another dimension cannot be compared
        if memory_id not in index:
            index[memory_id] = len(ids)
            ids.append(memory_id.encode("utf-8"))
        blobs.append(blob)
        owner.append(index[memory_id])
    matrix = from_blobs(blobs, dim) if blobs else np.zeros((0, dim), dtype=np.float32)
    id_array = np.asarray(ids, dtype=np.bytes_) if ids else np.zeros(0, dtype="S1")
    return id_array, np.asarray(owner, dtype=np.int32), matrix


def read_groups(store: Store, ids: Names, only: list[str] | None = None) -> tuple[Names, Names]:
    """The scope and kind of each of `ids` (empty for a memory no longer live), read
    for every live memory, or for the `only` memories when given."""
    found = {i.encode("utf-8"): (s, k) for i, s, k in store.scopes_and_kinds(only)}
    pairs = [found.get(bytes(i), ("", "")) for i in ids.tolist()]
    scopes = np.asarray([s.encode("utf-8") for s, _ in pairs], dtype=np.bytes_)
    kinds = np.asarray([k.encode("utf-8") for _, k in pairs], dtype=np.bytes_)
    return scopes, kinds


# ---- search ------------------------------------------------------------------


def dot(matrix: Matrix, q: Matrix) -> Matrix:
    """matrix @ q on this thread.

    Trigger: a matrix-vector product per query. Why: OpenBLAS splits one over threads
    that, on a busy 2-core machine, take several times longer to meet than numpy's own
    loop takes for the whole product. Outcome: einsum, which never calls BLAS.
    """
    out: Matrix = np.einsum("ij,j->i", matrix, q)
    return out


def top_memories(scores: Matrix, owner: Owners, k: int) -> tuple[Owners, Matrix]:
    """The k owners with the best row scores, best first, and those scores.

    The best rows are sorted; each owner's first row among them is its best one, so
    once k owners appear the answer is exact. The window widens until they do.
    """
    n = len(scores)
    window = min(n, 2 * k + 64)
    while True:
        top = np.argpartition(-scores, window - 1)[:window] if window < n else np.arange(n)
        top = top[np.argsort(-scores[top], kind="stable")]
        owners = owner[top]
        first = _first_of_each(owners)
        if len(first) >= k or window == n:
            break
        window = min(n, window * 4)
    first = np.sort(first)[:k]
    return owners[first], scores[top[first]]


def _best_memories(blocks: list[tuple[Owners, Matrix]], k: int) -> list[tuple[int, float]]:
    """The k best (owner, score) over each block's best owners: an owner whose rows
    span two blocks counts at its better score."""
    if len(blocks) == 1:
        owners, scores = blocks[0]
        return list(zip(owners.tolist(), scores.tolist(), strict=True))
    owners = np.concatenate([owners for owners, _ in blocks])
    scores = np.concatenate([scores for _, scores in blocks])
    order = np.argsort(-scores, kind="stable")
    first = np.sort(_first_of_each(owners[order]))[:k]
    return list(zip(owners[order[first]].tolist(), scores[order[first]].tolist(), strict=True))


def _first_of_each(owners: Owners) -> npt.NDArray[np.intp]:
    """The position of each distinct owner's first occurrence (np.unique's return_index,
    without the slow first call it pays in a new process)."""
    order = np.argsort(owners, kind="stable")
    ordered = owners[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return order[starts]


def _narrowed(rows: Rows, signs: Signs, q: Matrix, k: int) -> tuple[Owners, Matrix]:
    """Re-score exactly the rows whose signs differ least from the query's; widen the
    candidates until they hold k memories."""
    distance = sign_distance(signs, q)
    wanted = max(RESCORE_MIN, RESCORE_PER_RESULT * k)
    while True:
        candidates = nearest_codes(distance, wanted)
        owners = rows.owner[candidates]
        if len(_first_of_each(owners)) >= k or len(candidates) == len(distance):
            return top_memories(dot(rows.matrix[candidates], q), owners, k)
        wanted *= 4


def sign_distance(signs: Signs, q: Matrix) -> npt.NDArray[np.uint16]:
    """For every row: how many of the query's larger rotated components differ in sign."""
    y = signs.rotation @ q
    magnitude = np.abs(y)
    cut = int(len(y) * DEAD_ZONE)  # not np.quantile: slow on its first call in a process
    kept = magnitude > np.partition(magnitude, cut)[cut]
    query_signs = _pack(y[None, :] > 0)[:, 0]
    query_kept = _pack(kept[None, :])[:, 0]
    codes = signs.codes
    rows = codes.shape[1]
    out = np.zeros(rows, dtype=np.uint16)
    word = np.empty(min(rows, _BLOCK), dtype=np.uint64)
    count = np.empty(min(rows, _BLOCK), dtype=np.uint8)
    for start in range(0, rows, _BLOCK):
        end = min(rows, start + _BLOCK)
        x, c, acc = word[: end - start], count[: end - start], out[start:end]
        for w in range(codes.shape[0]):
            np.bitwise_xor(codes[w, start:end], query_signs[w], out=x)
            np.bitwise_and(x, query_kept[w], out=x)
            np.bitwise_count(x, out=c)
            acc += c
    return out


def nearest_codes(distance: npt.NDArray[np.uint16], wanted: int) -> npt.NDArray[np.intp]:
    """Rows with the `wanted` smallest distances (ties at the cut included), in row order.

    Distances are small integers, so a histogram finds the cut faster than a partition.
    """
    if wanted >= len(distance):
        return np.arange(len(distance))
    cumulative = np.cumsum(np.bincount(distance))
    cut = int(np.searchsorted(cumulative, wanted))
    return np.flatnonzero(distance <= cut)


# ---- sign codes --------------------------------------------------------------


def rotation(dim: int) -> Matrix:
    """A seeded random rotation onto a multiple of 64 dimensions (orthonormal columns)."""
    bits = -(-dim // 64) * 64
    gaussian = np.random.default_rng(_SEED).standard_normal((bits, dim))
    q, _ = np.linalg.qr(gaussian)
    return np.ascontiguousarray(q, dtype=np.float32)


def _pack(bits: npt.NDArray[np.bool_]) -> Codes:
    """(rows, 64w) booleans -> (w, rows) words."""
    packed = np.packbits(bits, axis=1, bitorder="little")
    return np.ascontiguousarray(packed.view("<u8").T).astype(np.uint64, copy=False)


def encode(matrix: Matrix, turn: Matrix) -> Signs:
    """The sign of every row after the rotation `turn`, one bit a dimension."""
    words = turn.shape[0] // 64
    codes = np.empty((words, len(matrix)), dtype=np.uint64)
    for start in range(0, len(matrix), _BLOCK):
        block = np.asarray(matrix[start : start + _BLOCK]) @ turn.T
        codes[:, start : start + len(block)] = _pack(block > 0)
    return Signs(turn, codes)


# ---- file format -------------------------------------------------------------
# MAGIC, an 8-byte header length, the JSON header (stamp, section offsets), then each
# array at a 64-byte aligned offset, so a reader maps them without copying.


def write_file(path: Path, stamp: dict[str, Any], rows: Rows) -> None:
    """Write atomically: a temporary file beside `path`, then rename."""
    arrays: dict[str, np.ndarray[Any, Any]] = {
        "ids": rows.ids,
        "owner": rows.owner,
        "matrix": rows.matrix,
        "scopes": rows.scopes,
        "kinds": rows.kinds,
    }
    if rows.signs is not None:
        arrays["rotation"] = rows.signs.rotation
        arrays["codes"] = rows.signs.codes
    sections: dict[str, Any] = {}
    offset = 0
    for name, array in arrays.items():
        sections[name] = {"offset": offset, "dtype": array.dtype.str, "shape": array.shape}
        offset += _aligned(array.nbytes)
    header = json.dumps({**stamp, "sections": sections}).encode()
    start = _aligned(len(_MAGIC) + 8 + len(header))
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as out:
            out.write(_MAGIC + len(header).to_bytes(8, "little") + header)
            for name, array in arrays.items():
                out.seek(start + sections[name]["offset"])
                out.write(np.ascontiguousarray(array).tobytes())
            out.truncate(start + offset)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def file_stamp(path: Path) -> dict[str, Any] | None:
    """The header of an index file (profile, dimension, epoch, change), or None."""
    try:
        with open(path, "rb") as f:
            if f.read(len(_MAGIC)) != _MAGIC:
                return None
            size = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(size))
    except (OSError, ValueError):
        return None
    return header if isinstance(header, dict) else None


def read_file(path: Path, stamp: dict[str, Any]) -> Rows | None:
    """The rows in `path` (memory-mapped), or None when its stamp differs from `stamp`."""
    with open(path, "rb") as f:
        if f.read(len(_MAGIC)) != _MAGIC:
            return None
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    if any(header.get(key) != value for key, value in stamp.items()):
        return None
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    start = _aligned(len(_MAGIC) + 8 + size)
    arrays = {name: _section(raw, start, s) for name, s in header["sections"].items()}
    # Trigger: every search scans the codes whole but reads a thousand rows of the
    # matrix. Outcome: the codes are read into memory at once (a mapped scan pays a
    # page fault per page on first use), the float32 rows stay mapped.
    for name in ("codes", "owner"):
        if name in arrays:
            arrays[name] = np.array(arrays[name])
    signs = Signs(arrays["rotation"], arrays["codes"]) if "codes" in arrays else None
    epoch, change = int(header["epoch"]), int(header.get("change", 0))
    return Rows(
        epoch,
        arrays["ids"],
        arrays["owner"],
        arrays["matrix"],
        signs,
        arrays["scopes"],
        arrays["kinds"],
        change,
    )


def _aligned(size: int) -> int:
    return -(-size // _ALIGN) * _ALIGN


def _section(raw: np.memmap[Any, Any], start: int, spec: dict[str, Any]) -> Any:
    dtype = np.dtype(spec["dtype"])
    shape = tuple(spec["shape"])
    count = math.prod(shape)
    offset = start + int(spec["offset"])
    if offset + count * dtype.itemsize > len(raw):
        raise ValueError("truncated vector index file")
    return np.frombuffer(raw, dtype=dtype, count=count, offset=offset).reshape(shape)
