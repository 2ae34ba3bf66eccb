"""Ingest into a store that already holds memories: add-batch with the write policy on,
keyword-only and with the profile's vectors, next to the embedder's own batch
throughput on the same texts, in the same run.

Each timed add-batch writes into a copy of the built store (its vector index file
too), so the store itself stays as built and every run starts from the same state.
The write policy runs in full: capture (redaction, injection tagging), the
exact-duplicate gate, near-duplicates and contradictions against the store and
within the batch.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlane.benchmark.corpus import Generator
from memlane.benchmark.writes import AddResult, timed_add_batch
from memlane.memory import Memory
from memlane.retrieve.vectors import index_files
from memlane.scope import Context

if TYPE_CHECKING:
    from memlane.embed import Embedder

# The ingest goals (at least), at the store size they are set for: keyword-only and
# hash-vector memories a second, and ingest over the embedder's own throughput.
FLOORS = {
    "ingest_keyword_per_second": {100_000: 5_000.0},
    "ingest_hash_per_second": {100_000: 2_000.0},
    "ingest_to_embedder_ratio": {100_000: 0.85},
}
# The corpus seed of the ingested memories is the store's plus this: new texts in the
# store's vocabulary, so some restate stored memories, as real ingest does.
SEED_OFFSET = 2


def _copy_store(db: Path, into: Path) -> Path:
    """The store at `db` (with its -wal file and vector index) copied into `into`."""
    copy = into / db.name
    for path in (db, db.with_name(db.name + "-wal"), *index_files(db)):
        if path.exists():
            shutil.copyfile(path, into / path.name)
    return copy


def _timed(
    db: Path, embedder: Embedder | None, items: list[dict[str, Any]], project: str
) -> AddResult:
    with Memory.open(
        db,
        agent="bench",
        context=Context(project=project),
        embedder=embedder,
        embed_on_write=embedder is not None,
    ) as mem:
        result, _ = timed_add_batch(mem, items, "ingest")
    return result


def _texts(db: Path, items: list[dict[str, Any]], project: str) -> list[str]:
    """What the write path embeds of each item (its draft's document text)."""
    from memlane.write.draft import build_draft
    from memlane.write.normalize import document_text

    with Memory.open(db, agent="bench", context=Context(project=project)) as mem:
        context = mem.rt.write_context()
    return [document_text(build_draft(dict(item), context).record) for item in items]


def embedder_per_second(embedder: Embedder, texts: list[str]) -> float:
    """The embedder's own batch throughput on `texts`: documents a second, through the
    write path's `embed_documents` (chunking, the entry vector) and nothing else."""
    from memlane.write.embedding import embed_documents

    start = time.perf_counter()
    embed_documents(embedder, texts)
    seconds = time.perf_counter() - start
    return len(texts) / seconds if seconds else float("nan")


def ingest_at_scale(
    db: Path, embedder: Embedder, sample: int, seed: int, project: str, workdir: Path
) -> dict[str, Any]:
    """add-batch of `sample` new memories into copies of the store at `db`: without
    vectors and with `embedder`'s; the embedder alone on the same texts; the ratio."""
    items = Generator(seed + SEED_OFFSET).memories(sample)
    out: dict[str, Any] = {"sample": sample, "profile": embedder.profile.signature}
    for label, used in (("keyword", None), ("vectors", embedder)):
        with tempfile.TemporaryDirectory(prefix="memlane-ingest-", dir=workdir) as tmp:
            result = _timed(_copy_store(db, Path(tmp)), used, items, project)
        out[label] = {
            "seconds": result.seconds,
            "per_second": result.per_second,
            "added": result.added,
            "failed": result.failed,
            "first_error": result.first_error,
        }
    out["embedder_per_second"] = embedder_per_second(embedder, _texts(db, items, project))
    out["ratio"] = out["vectors"]["per_second"] / out["embedder_per_second"]
    return out
