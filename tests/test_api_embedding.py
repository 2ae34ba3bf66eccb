"""Embedding on write, the vector and hybrid lanes, deferral, and one profile per store."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from memlane import Context, Memory, Unavailable
from memlane.embed import Embedder, get_embedder
from memlane.embed.profiles import Profile
from memlane.model import WriteStatus


class Broken(Embedder):
    """An embedder whose backend fails, as a crashed model server would."""

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError("model server is down")


class Tiny(Embedder):
    """Another profile: 8 dimensions from character codes."""

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        rows = [[sum(map(ord, t)) % (i + 2) + 1.0 for i in range(8)] for t in texts]
        return np.asarray(rows, dtype=np.float32)


TINY = Profile("tiny", 8, "tiny-v1", None, None, "test profile")


def test_a_write_stores_vectors_and_the_vector_lane_finds_it(vmem):
    target = vmem.add("Kubernetes pods restart when the liveness probe fails.").id
    vmem.add("Invoices are due within thirty days.")
    assert vmem.store.unembedded(vmem.embedder.profile.signature) == []
    hits = vmem.search("liveness probes restarting pods", mode="vector", limit=1)
    assert [h.record.id for h in hits] == [target]


def test_hybrid_fuses_both_lanes(vmem):
    keyword_only = vmem.add("Ticket BILL-4411 tracks the rounding bug.").id
    both = vmem.add("The rounding bug in invoices is tracked in BILL-4411.").id
    vmem.add("Lunch is at noon.")
    ids = [h.record.id for h in vmem.search("BILL-4411 rounding bug", mode="hybrid")]
    assert set(ids[:2]) == {keyword_only, both}


def test_vector_results_respect_filters_and_deletion(vmem):
    gone = vmem.add("Cache invalidation happens on deploy.").id
    other_scope = vmem.add(
        "Cache invalidation happens on deploy, in beta.", scope="project:beta"
    ).id
    vmem.delete(gone)
    ids = [h.record.id for h in vmem.search("cache invalidation on deploy", mode="vector")]
    assert gone not in ids and other_scope not in ids
    assert other_scope in [
        h.record.id for h in vmem.search("cache invalidation", mode="vector", scope="all")
    ]


def test_a_failed_embedding_never_fails_the_write(db_path):
    with Memory.open(
        db_path, context=Context(), embedder=Broken(get_embedder("hash").profile)
    ) as mem:
        result = mem.add("Rotate the signing keys every quarter.")
        assert result.status is WriteStatus.EMBED_DEFERRED
        assert "model server is down" in result.warnings[0]
        assert mem.get(result.id).body == "Rotate the signing keys every quarter."
        batch = mem.add_batch([{"content": "one"}, {"content": "two", "no_embed": True}])
        assert [ln.result.status for ln in batch.lines] == [
            WriteStatus.EMBED_DEFERRED,
            WriteStatus.ADDED,
        ]
    with Memory.open(db_path, context=Context(), embedder=get_embedder("hash")) as mem:
        outcome = mem.embed(pending=True)
        assert len(outcome.embedded) == 3 and outcome.failed == ()
        assert mem.store.unembedded(mem.embedder.profile.signature) == []


def test_an_unusable_embedder_defers_and_says_why(db_path):
    with Memory.open(
        db_path, context=Context(), embed_problem="onnxruntime is not installed"
    ) as mem:
        result = mem.add("Something to remember.")
        assert result.status is WriteStatus.EMBED_DEFERRED
        assert "onnxruntime is not installed" in result.warnings[0]
        with pytest.raises(Unavailable, match="onnxruntime is not installed"):
            mem.search("remember", mode="vector")
        assert [h.record.id for h in mem.search("remember")] == [result.id]


def test_without_an_embedder_writes_are_plainly_added(mem):
    assert mem.add("No vectors here.").status is WriteStatus.ADDED


def test_another_profile_never_mixes_vectors_and_never_loses_a_write(db_path):
    with Memory.open(db_path, context=Context(), embedder=get_embedder("hash")) as mem:
        first = mem.add("Ship on Tuesdays.").id
    other = Tiny(TINY)
    with Memory.open(db_path, context=Context(), embedder=other) as mem:
        deferred = mem.add("Ship on Wednesdays.")
        assert deferred.status is WriteStatus.EMBED_DEFERRED
        assert "memlane reembed --all --profile tiny" in deferred.warnings[0]
        assert len(mem.list(scope="all", limit=0)) == 2  # the write landed
        assert {h.record.id for h in mem.search("Ship", mode="keyword", scope="all")} == {
            first,
            deferred.id,
        }
        with pytest.raises(Unavailable, match="memlane reembed --all --profile tiny"):
            mem.search("Ship on Wednesdays.", mode="vector", scope="all")
    with Memory.open(db_path, context=Context(), embedder=get_embedder("hash")) as mem:
        assert mem.embed(pending=True).embedded == (deferred.id,)  # the store's profile
    with Memory.open(db_path, context=Context(), embedder=other) as mem:
        assert mem.reembed(other, dry_run=True) == 2
        assert mem.reembed(other) == 2
        assert mem.reembed(other) == 2  # again: same result
        third = mem.add("Ship on Thursdays.")
        assert third.status is WriteStatus.ADDED
        hits = mem.search("Ship on Thursdays.", mode="vector", scope="all")
        assert {h.record.id for h in hits} == {first, deferred.id, third.id}


@pytest.mark.sqlite_only  # the PostgreSQL extra's pgvector adapter imports numpy
def test_reading_commands_never_load_numpy_or_a_model(cli_env, tmp_path):
    """A read that needs no vectors starts fast: no numpy, no model (the default profile),
    and none of the write policy's string matching either (rapidfuzz: 0.1 s to import)."""
    script = (
        "import sys\n"
        "from memlane.cli.main import cli\n"
        "cli.main(['list', '--json'], standalone_mode=False)\n"
        "cli.main(['search', 'anything'], standalone_mode=False)\n"
        "print('numpy' in sys.modules or 'rapidfuzz' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, **cli_env, "MEMLANE_EMBED_PROFILE": "minilm"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "False"


def test_changed_content_is_embedded_again(vmem):
    memory_id = vmem.add("Cache responses for one minute.").id
    vmem.update(memory_id, content="Kubernetes pods restart when the liveness probe fails.")
    assert vmem.store.unembedded(vmem.embedder.profile.signature) == []
    hits = vmem.search("liveness probe restarts", mode="vector", limit=1)
    assert [h.record.id for h in hits] == [memory_id]
    vmem.supersede(memory_id, "Pods restart after three failed liveness probes.")
    assert vmem.store.unembedded(vmem.embedder.profile.signature) == []


def test_recall_answers_from_its_other_lanes_when_the_embedder_fails(db_path):
    with Memory.open(db_path, context=Context(), embedder=get_embedder("hash")) as mem:
        target = mem.add("Kubernetes pods restart when the liveness probe fails.").id
        mem.add("Invoices are due within thirty days.")
    broken = Broken(get_embedder("hash").profile)  # the store's profile, failing at run time
    with Memory.open(db_path, context=Context(), embedder=broken) as mem:
        result = mem.recall("liveness probe")
        assert [h.record.id for h in result.hits] == [target]
        assert "model server is down" in result.skipped["vector"]
        assert "vector" not in result.lanes
        explained = mem.explain("liveness probe")
        assert "model server is down" in (explained.absent_lanes or "")
        with pytest.raises(Unavailable, match="model server is down"):
            mem.search("liveness probe", mode="hybrid")


def test_recall_says_when_a_configured_model_cannot_load(db_path):
    with Memory.open(db_path, context=Context()) as mem:
        target = mem.add("Kubernetes pods restart when the liveness probe fails.").id
    with Memory.open(db_path, context=Context(), embed_problem="onnxruntime is missing") as mem:
        result = mem.recall("liveness probe")
        assert [h.record.id for h in result.hits] == [target]
        assert result.skipped == {"vector": "onnxruntime is missing"}
    with Memory.open(db_path, context=Context()) as mem:  # none configured: nothing to say
        assert mem.recall("liveness probe").skipped == {}
