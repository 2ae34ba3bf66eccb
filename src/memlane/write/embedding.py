"""Embedding memories after they landed: the store's profile check and the vector writes.

An embedding failure never undoes a write: the memory stays, without current vectors,
and `embed --pending` picks it up later.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memlane.embed import Embedded, Embedder, entry_vector
from memlane.embed.blob import to_blob
from memlane.errors import Conflict, MemlaneError
from memlane.model import EmbedOutcome, Record
from memlane.store import EMBED_PROFILE_META, Store, Writer
from memlane.write.normalize import document_text

PROFILE_KEY = EMBED_PROFILE_META
# Records embedded per transaction by `embed --all/--pending`.
EMBED_CHUNK = 64


def check_profile(store: Store, embedder: Embedder) -> None:
    """Refuse to mix vectors: a store keeps the profile it was first embedded with."""
    recorded = store.meta(PROFILE_KEY)
    wanted = embedder.profile.signature
    if recorded is not None and recorded != wanted:
        name = embedder.profile.name
        raise Conflict(
            f"this store's vectors were made with {recorded}, not {wanted}: "
            f"run `memlane reembed --all --profile {name}` to convert it, or set "
            f"MEMLANE_EMBED_PROFILE to {recorded.split('/')[0]}"
        )


def embed_records(store: Store, embedder: Embedder, records: Sequence[Record]) -> EmbedOutcome:
    """Embed and store vectors for `records`, one transaction; failures are reported."""
    if not records:
        return EmbedOutcome((), ())
    try:
        check_profile(store, embedder)
        documents = embed_documents(embedder, [document_text(r) for r in records])
    except MemlaneError as exc:
        return EmbedOutcome((), tuple(r.id for r in records), str(exc))
    except Exception as exc:  # a backend's own failure must not fail a landed write
        return EmbedOutcome((), tuple(r.id for r in records), f"{type(exc).__name__}: {exc}")
    with store.write() as w:
        store_documents(store, w, embedder, records, documents)
    return EmbedOutcome(tuple(r.id for r in records), ())


def embed_parts(
    store: Store,
    embedder: Embedder,
    records: Sequence[Record],
    size: int,
    told: Callable[[int], None] = lambda done: None,
) -> EmbedOutcome:
    """`embed_records` over `records` in parts of `size`, a transaction each, inside the
    store's `bulk_vectors` (one index build after them on PostgreSQL); `told` how many
    are done after each part."""
    done: list[str] = []
    failed: list[str] = []
    error = None
    with store.bulk_vectors(embedder.dimension, len(records)):
        for start in range(0, len(records), size):
            part = records[start : start + size]
            outcome = embed_records(store, embedder, part)
            done += outcome.embedded
            failed += outcome.failed
            error = error or outcome.error
            told(start + len(part))
    return EmbedOutcome(tuple(done), tuple(failed), error)


def store_documents(
    store: Store,
    w: Writer,
    embedder: Embedder,
    records: Sequence[Record],
    documents: Sequence[Embedded],
) -> None:
    """Within `w`'s transaction: the records' vectors, and the store's profile when
    these are its first."""
    if store.meta(PROFILE_KEY) is None:
        w.set_meta(PROFILE_KEY, embedder.profile.signature)
    put_documents(w, embedder, records, documents)


def embed_documents(embedder: Embedder, texts: Sequence[str]) -> list[Embedded]:
    """Chunk every text and embed all chunks in one bulk call (batched by length)."""
    chunked = [embedder.chunks(text) for text in texts]
    vectors = embedder.embed_many([chunk for chunks in chunked for chunk in chunks])
    out, start = [], 0
    for chunks in chunked:
        rows = vectors[start : start + len(chunks)]
        out.append(Embedded(tuple(chunks), rows, entry_vector(rows)))
        start += len(chunks)
    return out


def put_documents(
    w: Writer, embedder: Embedder, records: Sequence[Record], documents: Sequence[Embedded]
) -> None:
    """Store each record's entry vector (chunk -1) and, for long texts, its chunk vectors."""
    signature = embedder.profile.signature
    for record, doc in zip(records, documents, strict=True):
        rows = [(-1, to_blob(doc.entry))]
        if len(doc.chunks) > 1:
            rows += [(i, to_blob(v)) for i, v in enumerate(doc.vectors)]
        w.put_vectors(record.id, signature, rows, embedder.dimension, record.dedup_hash)
