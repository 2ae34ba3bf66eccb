"""Retrieval quality on LoCoMo's conversations and questions, through the public API only.

Each conversation becomes its own store; every dialog turn one memory whose
`occurred_at` is its session's date; every question a query over its conversation.
Gold is the question's evidence turns. No LLM anywhere.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from memlane.errors import Invalid
from memlane.memory import Memory
from memlane.scope import Context

if TYPE_CHECKING:
    from memlane.embed import Embedder

# Evidence ids come malformed ("D:11:26", "D30:05", several in one string).
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")
_SESSION = re.compile(r"^session_(\d+)$")
HEADLINE = (1, 2, 3, 4)
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


class Turn(msgspec.Struct, frozen=True):
    dia_id: str
    speaker: str
    text: str
    when: datetime


class Question(msgspec.Struct, frozen=True):
    conversation: str
    text: str
    category: int
    evidence: tuple[str, ...]


def score(question: Question, ranked: Sequence[str], k: int) -> dict[str, Any]:
    """One question's metrics given the dia_ids retrieved, best first."""
    gold = set(question.evidence)
    ranks = [i + 1 for i, dia in enumerate(ranked) if dia in gold]
    return {
        "conversation": question.conversation,
        "question": question.text,
        "category": question.category,
        "gold": sorted(gold),
        "retrieved": list(ranked[:k]),
        "r@5": _recall(ranks, gold, 5),
        "r@10": _recall(ranks, gold, 10),
        "hit@10": 1.0 if ranks and ranks[0] <= 10 else 0.0,
        "mrr": 1.0 / ranks[0] if ranks else 0.0,
        "ndcg@10": _ndcg(ranks, len(gold), 10),
    }


def off_topic(question: Question, conversation: str, ranked: Sequence[str]) -> dict[str, Any]:
    """Another conversation's question asked of this one's store: answered well with
    nothing."""
    return {
        "conversation": conversation,
        "question": question.text,
        "category": question.category,
        "off_topic": True,
        "asked_of": question.conversation,
        "silent": not ranked,
    }


class Scores(msgspec.Struct):
    """Per-question result rows, averaged by `summary`."""

    rows: list[dict[str, Any]] = msgspec.field(default_factory=list)

    def summary(self, categories: Sequence[int]) -> dict[str, float]:
        """The mean of each metric over the questions of `categories`, and, when other
        conversations' questions were asked too, the share of them answered with
        nothing (`silent`, over `off-topic` questions)."""
        rows = [r for r in self.rows if r["category"] in categories and not r.get("off_topic")]
        keys = ("r@5", "r@10", "hit@10", "mrr", "ndcg@10")
        out = {key: sum(r[key] for r in rows) / len(rows) if rows else 0.0 for key in keys}
        out["questions"] = float(len(rows))
        asked = [r for r in self.rows if r["category"] in categories and r.get("off_topic")]
        if asked:
            out["silent"] = sum(1 for r in asked if r["silent"]) / len(asked)
            out["off-topic"] = float(len(asked))
        return out

    def folds(self, categories: Sequence[int]) -> dict[str, dict[str, float]]:
        """The summary of each conversation: with leave-one-conversation-out tuning,
        each is a held-out fold's figures."""
        names = dict.fromkeys(r["conversation"] for r in self.rows)
        return {
            name: Scores([r for r in self.rows if r["conversation"] == name]).summary(categories)
            for name in names
        }


def fold_mean(folds: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The unweighted mean of the folds' figures (each conversation counts once), and
    the spread of R@10 across them (the smallest and the largest)."""
    if not folds:
        return {}
    keys = ["r@5", "r@10", "hit@10", "mrr", "ndcg@10"]
    keys += ["silent"] if all("silent" in f for f in folds.values()) else []
    mean = {key: sum(f[key] for f in folds.values()) / len(folds) for key in keys}
    tens = [f["r@10"] for f in folds.values()]
    return {**mean, "folds": float(len(folds)), "r@10 min": min(tens), "r@10 max": max(tens)}


def _recall(ranks: list[int], gold: set[str], k: int) -> float:
    return sum(1 for r in ranks if r <= k) / len(gold)


def _ndcg(ranks: list[int], gold: int, k: int) -> float:
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks if r <= k)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(gold, k)))
    return dcg / ideal if ideal else 0.0


def parse_date(text: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023"."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        raise Invalid(f"unreadable LoCoMo session date {text!r}") from None


def turns_of(sample: dict[str, Any]) -> list[Turn]:
    conv = sample["conversation"]
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)) and conv[key]
    )
    turns = []
    for number, key in sessions:
        when = parse_date(conv[f"session_{number}_date_time"])
        for turn in conv[key]:
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares image: {turn['blip_caption']}]"
            turns.append(Turn(turn["dia_id"], turn["speaker"], text, when))
    return turns


def questions_of(sample: dict[str, Any], known: set[str]) -> list[Question]:
    """Questions with their normalised evidence; those left without any are skipped."""
    out = []
    for qa in sample["qa"]:
        found = _EVIDENCE.findall(" ".join(map(str, qa.get("evidence", []))))
        evidence = tuple(dict.fromkeys(f"D{s}:{t}" for s, t in found if f"D{s}:{t}" in known))
        if evidence:
            out.append(Question(sample["sample_id"], qa["question"], int(qa["category"]), evidence))
    return out


def memory_fields(turn: Turn) -> dict[str, Any]:
    """One turn as a memory, written as an agent writes one: what was said, by whom,
    when it happened (its event time, not a date in the text) and its LoCoMo session
    as its session."""
    return {
        "content": f"{turn.speaker}: {turn.text}",
        "kind": "event",
        "occurred_at": turn.when.isoformat(),
        "source_ref": f"locomo:{turn.dia_id}",
        # One memlane session per LoCoMo session, so recall can see a turn's neighbours.
        "session_id": f"locomo-{turn.dia_id.split(':')[0]}",
        "scope": "global",
    }


Search = Callable[[Memory, str, int], list[str]]
# A fresh, empty store's location per conversation, removed afterwards.
Stores = Callable[[str], AbstractContextManager[str]]
# A run's progress: questions asked of all there are, and what it does now.
Progress = Callable[[int, int | None, str], None]


def _untold(done: int, total: int | None, what: str) -> None:
    """The progress of a run nobody watches."""


@contextmanager
def sqlite_store(sample_id: str) -> Iterator[str]:
    """A store file in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="memlane-locomo-") as folder:
        yield str(Path(folder) / "store.db")


def postgres_stores(server_url: str) -> Stores:
    """A database per conversation on the server `server_url` names (whose user may
    create databases), dropped afterwards: each conversation is its own store, as on
    SQLite, so the results compare up to ties."""

    def database(sample_id: str) -> AbstractContextManager[str]:
        from memlane.store.postgres.scratch import scratch_database

        return scratch_database(server_url, f"memlane_locomo_{sample_id}")

    return database


def run(
    data: Path,
    search: Search,
    embedder: Embedder | None = None,
    k: int = 10,
    conversations: int | None = None,
    stores: Stores = sqlite_store,
    off_topic_questions: bool = True,
    progress: Progress = _untold,
) -> Iterator[dict[str, Any]]:
    """Yield one result row per scored question (see `score`) and, with
    `off_topic_questions`, per question of another conversation (see `off_topic`);
    each conversation in a fresh store from `stores` (default: a SQLite file).
    `progress` is told the questions asked of all there are to ask."""
    for _, row in run_grid(
        data, {"": search}, embedder, k, conversations, stores, off_topic_questions, progress
    ):
        yield row


def run_grid(
    data: Path,
    searches: Mapping[str, Search],
    embedder: Embedder | None = None,
    k: int = 10,
    conversations: int | None = None,
    stores: Stores = sqlite_store,
    off_topic_questions: bool = True,
    progress: Progress = _untold,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """`run` for several named searches (settings to compare) over the same stores:
    each conversation is written once and every search asks every question; yields
    (search name, result row). With `off_topic_questions`, each store is also asked
    the other conversations' questions of categories 1-4 (see `off_topic`)."""
    samples = json.loads(data.read_text(encoding="utf-8"))[:conversations]
    asked: dict[str, list[Question]] = {}
    for sample in samples:
        known = {t.dia_id for t in turns_of(sample)}
        asked[sample["sample_id"]] = questions_of(sample, known)
    total, done = _to_ask(asked, off_topic_questions), 0
    for sample in samples:
        turns = turns_of(sample)
        progress(done, total, f"{sample['sample_id']}: writing")
        with (
            stores(sample["sample_id"]) as location,
            Memory.open(location, context=Context(), embedder=embedder) as mem,
        ):
            batch = mem.add_batch(memory_fields(t) for t in turns)
            if batch.failed:
                raise Invalid(f"{sample['sample_id']}: {batch.failed[0].error}")
            dia_of = {mid: t.dia_id for mid, t in zip(batch.ids, turns, strict=True) if mid}
            for question in asked[sample["sample_id"]]:
                for name, search in searches.items():
                    ranked = [dia_of[m] for m in search(mem, question.text, k) if m in dia_of]
                    yield name, score(question, ranked, k)
                done += 1
                progress(done, total, f"{sample['sample_id']}: asking")
            others = [
                q
                for other, questions in asked.items()
                if other != sample["sample_id"]
                for q in questions
                if q.category in HEADLINE
            ]
            for question in others if off_topic_questions else []:
                for name, search in searches.items():
                    found = search(mem, question.text, k)
                    yield name, off_topic(question, sample["sample_id"], found)
                done += 1
                progress(done, total, f"{sample['sample_id']}: asking")


def _to_ask(asked: Mapping[str, list[Question]], off_topic_questions: bool) -> int:
    """How many questions a run asks: each conversation's own and, with
    `off_topic_questions`, the other conversations' of categories 1-4."""
    headline = {name: sum(q.category in HEADLINE for q in qs) for name, qs in asked.items()}
    others = sum(headline.values())
    return sum(
        len(qs) + (others - headline[name] if off_topic_questions else 0)
        for name, qs in asked.items()
    )


# What answering off-topic questions with nothing may cost in R@10.
SILENCE_COST = 0.01
OBJECTIVES = ("quality", "silence")


class Asking(msgspec.Struct, frozen=True):
    """How the questions are asked: results kept, conversations, where the stores
    live, and whether each store is asked the others' questions too."""

    k: int = 10
    conversations: int | None = None
    stores: Stores = sqlite_store
    off_topic: bool = True


def _best(trained: Mapping[str, Mapping[str, float]], objective: str) -> str:
    """The settings best on their training folds' mean figures (see cross_validate);
    the first of equals, in the order given (and the first when there is no other
    fold to train on)."""
    if not all(trained.values()):
        return next(iter(trained))

    def quality(name: str) -> float:
        return (trained[name]["r@10"] + trained[name]["mrr"]) / 2

    if objective == "quality":
        return max(trained, key=quality)
    best = max(figures["r@10"] for figures in trained.values())
    near = [n for n, figures in trained.items() if figures["r@10"] >= best - SILENCE_COST]
    return max(near, key=lambda n: (trained[n].get("silent", 0.0), quality(n)))


class HeldOut(msgspec.Struct, frozen=True):
    """One fold of leave-one-conversation-out: the settings chosen on the other
    conversations, and how they do on this one."""

    conversation: str
    chosen: str
    figures: dict[str, float]


def cross_validate(
    results: Mapping[str, Scores],
    categories: Sequence[int] = HEADLINE,
    objective: str = "quality",
) -> list[HeldOut]:
    """For each conversation, the settings (a key of `results`) best on the other
    conversations, and their figures on it. The mean of these held-out figures is what
    the settings are expected to do on a conversation nobody tuned on.

    Best, for `objective` "quality": the highest fold mean of (R@10 + MRR) / 2. For
    "silence" (tuning when recall answers with nothing): the most off-topic questions
    answered with nothing among the settings within SILENCE_COST of the best R@10, then
    quality."""
    if objective not in OBJECTIVES:
        raise Invalid(f"unknown objective {objective!r}; choose from: {', '.join(OBJECTIVES)}")
    folds = {name: scores.folds(categories) for name, scores in results.items()}
    conversations = list(next(iter(folds.values()), {}))
    out = []
    for held in conversations:
        trained = {
            name: fold_mean({c: f for c, f in by.items() if c != held})
            for name, by in folds.items()
        }
        chosen = _best(trained, objective)
        out.append(HeldOut(held, chosen, folds[chosen][held]))
    return out
