"""Synthetic memories and queries, deterministic from a seed.

Varied kinds, titles and 1-4 sentence bodies drawn from a vocabulary of ~3,000
software and project words with Zipf-like frequencies (plus rare code identifiers,
error codes and ticket numbers), 0-4 tags, some session ids, importance 1-10 and
four scopes; queries of several shapes (one word, common and rare words, prefixes,
ticket numbers, misses, natural-language questions).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import msgspec

# ---- vocabulary ------------------------------------------------------------


def _words(text: str) -> list[str]:
    return text.split()


STOPWORDS = _words("""
the to and of a in is for on that with we it this be as by not when from are or at
use if an all should after before but into only so must no
""")

NOUNS = _words("""
cache queue worker service server client request response timeout retry backoff token
session user account login password secret key certificate config setting flag feature
release deploy deployment build pipeline job runner artifact image container cluster node
pod namespace volume disk memory cpu thread process lock mutex deadlock race condition
transaction commit rollback migration schema table column index query database replica
shard partition backup snapshot restore log logger metric dashboard alert alarm incident
outage latency throughput error exception stacktrace crash panic bug fix patch hotfix
regression test suite fixture mock stub assertion coverage benchmark profile trace span
endpoint route handler middleware proxy gateway balancer dns domain host port socket
connection pool limit quota rate budget cost invoice payment billing customer tenant
organization team owner reviewer review branch merge rebase conflict tag version semver
dependency package library module function method class interface type struct field
parameter argument return value variable constant enum string integer float boolean list
map array buffer stream file directory path folder bucket object blob upload download
storage network bandwidth packet protocol http grpc websocket json yaml toml csv parser
serializer encoder decoder schema validator validation permission role policy scope
audit compliance encryption signature hash checksum nonce salt vault credential oauth
jwt cookie header payload body message event topic subscriber publisher consumer producer
broker kafka redis postgres sqlite mysql mongo elasticsearch nginx docker kubernetes helm
terraform ansible jenkins github gitlab actions workflow cron scheduler timer interval
window batch chunk page cursor offset pagination filter sort order ranking score search
embedding vector model prompt agent tool memory context note reminder document readme
changelog spec design proposal decision tradeoff constraint requirement goal milestone
sprint ticket issue backlog estimate deadline priority severity oncall rotation handoff
runbook playbook procedure checklist template convention guideline standard lint
formatter linter compiler interpreter runtime sdk cli terminal shell script command
option default environment staging production sandbox preview canary rollout rollback
traffic region zone datacenter cloud instance vm machine laptop repo monorepo workspace
frontend backend api ui ux component widget form button modal layout theme font color
icon accessibility locale translation timezone date timestamp clock calendar schedule
notification email sms webhook callback integration plugin extension hook adapter
driver connector client library framework react vue django flask fastapi rails spring
""")

VERBS = _words("""
add remove update delete create read write load save parse render fetch send receive
retry cache flush evict expire refresh rotate revoke grant deny allow block skip ignore
validate verify check test mock stub measure profile trace log alert page notify escalate
deploy release ship build compile bundle package publish install upgrade downgrade pin
migrate backfill replay rebuild reindex compact vacuum prune archive restore backup
merge rebase revert squash cherry pick review approve reject comment document rename
refactor extract inline split join move copy clone fork sync mirror replicate shard
scale throttle limit queue schedule batch stream buffer encode decode serialize hash sign
encrypt decrypt authenticate authorize login logout register configure enable disable
toggle monitor debug reproduce investigate diagnose fix patch workaround handle catch
raise throw return yield await spawn kill restart reload drain cordon upgrade provision
""")

ADJECTIVES = _words("""
slow fast flaky stable broken stale fresh cold warm hot idle busy empty full large small
huge tiny old new legacy deprecated experimental internal external public private shared
global local remote primary secondary readonly writable async sync blocking concurrent
parallel sequential idempotent atomic durable transient persistent ephemeral critical
minor major breaking optional required default custom manual automatic nightly weekly
daily hourly noisy quiet verbose strict lenient safe unsafe secure insecure valid invalid
missing duplicate orphaned dangling pending failed succeeded partial complete
""")

KINDS: tuple[tuple[str, int], ...] = (
    ("fact", 28),
    ("decision", 12),
    ("lesson", 10),
    ("procedure", 8),
    ("preference", 6),
    ("event", 12),
    ("convention", 5),
    ("constraint", 3),
    ("task", 6),
    ("insight", 5),
    ("summary", 3),
    ("person", 1),
    ("thread", 1),
)
SCOPES: tuple[tuple[str, int], ...] = (
    ("global", 25),
    ("project:alpha", 30),
    ("project:alpha@main", 30),
    ("project:beta", 15),
)
TAG_POOL = _words("""
auth ci cd perf db frontend backend infra release security testing docs oncall migration
api billing search ux flaky outage postmortem tooling deps config observability logging
metrics alerting cache queue storage network k8s docker terraform python rust go typescript
sql schema data ml agent memory review style onboarding hiring planning roadmap cost
compliance privacy incident hotfix refactor tech-debt upgrade
""")
TICKET_PREFIXES = ("ALPHA", "BETA", "OPS", "SEC", "PR")


class Vocabulary(msgspec.Struct, frozen=True):
    """Word classes, each ranked; content words are sampled with Zipf-like weights."""

    stopwords: list[str]
    content: list[str]  # ranked, most frequent first
    nouns: list[str]
    verbs: list[str]
    stop_weights: list[float]
    content_weights: list[float]


def _zipf_cumulative(n: int, exponent: float, shift: float = 2.7) -> list[float]:
    """Cumulative Zipf-Mandelbrot weights 1 / (rank + shift) ** exponent."""
    total, out = 0.0, []
    for rank in range(1, n + 1):
        total += 1.0 / (rank + shift) ** exponent
        out.append(total)
    return out


def build_vocabulary(rng: random.Random) -> Vocabulary:
    nouns = list(dict.fromkeys(NOUNS))
    verbs = list(dict.fromkeys(VERBS))
    adjectives = list(dict.fromkeys(ADJECTIVES))
    words = list(dict.fromkeys([*nouns, *verbs, *adjectives]))
    rng.shuffle(words)
    # The long tail: code identifiers (one token each for FTS5) and error codes.
    combos = [v + n.capitalize() for v in verbs[:70] for n in nouns[:90]]
    identifiers = rng.sample(combos, 2000) + [f"E{rng.randrange(1000, 9999)}" for _ in range(250)]
    content = list(dict.fromkeys([*words, *identifiers]))
    stopwords = list(dict.fromkeys(STOPWORDS))
    return Vocabulary(
        stopwords=stopwords,
        content=content,
        nouns=nouns,
        verbs=verbs,
        stop_weights=_zipf_cumulative(len(stopwords), 1.0, shift=0.5),
        content_weights=_zipf_cumulative(len(content), 1.0),
    )


# ---- synthetic memories ----------------------------------------------------


class Generator:
    """Deterministic synthetic memories and queries from one seeded RNG."""

    def __init__(self, seed: int) -> None:
        # Separate streams: the queries do not change with --n, nor the corpus with --queries.
        self.vocab = build_vocabulary(random.Random(f"{seed}:vocabulary"))
        self.rng = random.Random(f"{seed}:memories")
        self.qrng = random.Random(f"{seed}:queries")
        self._kinds = [k for k, _ in KINDS]
        self._kind_w = [w for _, w in KINDS]
        self._scopes = [s for s, _ in SCOPES]
        self._scope_w = [w for _, w in SCOPES]

    def words(self, k: int, rng: random.Random | None = None) -> list[str]:
        v = self.vocab
        return (rng or self.rng).choices(v.content, cum_weights=v.content_weights, k=k)

    def stopword(self) -> str:
        v = self.vocab
        return self.rng.choices(v.stopwords, cum_weights=v.stop_weights, k=1)[0]

    def sentence(self) -> str:
        parts: list[str] = []
        for _ in range(self.rng.randint(2, 5)):
            if self.rng.random() < 0.7:
                parts.append(self.stopword())
            parts.extend(self.words(self.rng.randint(1, 2)))
        text = " ".join(parts)
        return text[0].upper() + text[1:] + "."

    def title(self) -> str:
        parts = self.words(self.rng.randint(2, 5))
        if self.rng.random() < 0.4:
            parts.insert(self.rng.randint(1, len(parts) - 1), self.stopword())
        text = " ".join(parts)
        return text[0].upper() + text[1:]

    def ticket(self) -> str:
        prefix = self.rng.choice(TICKET_PREFIXES)
        number = self.rng.randrange(1000, 100_000)
        return f"See {prefix}-{number}." if prefix != "PR" else f"Fixed in PR #{number}."

    def memory(self, sessions: int) -> dict[str, Any]:
        rng = self.rng
        body = " ".join(self.sentence() for _ in range(rng.randint(1, 4)))
        if rng.random() < 0.15:
            body += " " + self.ticket()
        item: dict[str, Any] = {
            "title": self.title(),
            "content": body,
            "kind": rng.choices(self._kinds, weights=self._kind_w, k=1)[0],
            "importance": rng.randint(1, 10),
            "scope": rng.choices(self._scopes, weights=self._scope_w, k=1)[0],
        }
        tags = rng.sample(TAG_POOL, rng.choices((0, 1, 2, 3, 4), weights=(20, 30, 25, 15, 10))[0])
        if tags:
            item["tags"] = tags
        if rng.random() < 0.4:
            item["session_id"] = f"sess-{rng.randrange(sessions):05d}"
        return item

    def memories(self, n: int) -> list[dict[str, Any]]:
        sessions = max(1, n // 40)
        return [self.memory(sessions) for _ in range(n)]

    def queries(self, n: int) -> list[tuple[str, str]]:
        """(shape, query) pairs: single/multi-word, common/rare, natural language, misses."""
        rng, content = self.qrng, self.vocab.content
        common = content[:60]
        mid = content[60:600]
        rare = content[1500:]
        nouns, verbs = self.vocab.nouns[:150], self.vocab.verbs[:80]
        natural = (
            "how do we {v} the {n}",
            "why did the {n} {v} after the {n2} change",
            "what is our {n} policy for {n2}",
            "when should we {v} {n}",
            "{n} {n2} not working",
            "where is the {n} {n2} configured",
        )
        shapes: list[tuple[str, float, Callable[[], str]]] = [
            ("1 common word", 0.12, lambda: rng.choice(common)),
            ("1 mid word", 0.10, lambda: rng.choice(mid)),
            ("1 rare word", 0.10, lambda: rng.choice(rare)),
            ("2 common words", 0.10, lambda: " ".join(rng.sample(common, 2))),
            ("common + rare", 0.10, lambda: f"{rng.choice(common)} {rng.choice(rare)}"),
            ("3 mixed words", 0.10, lambda: " ".join(self.words(3, rng))),
            ("prefix (word*)", 0.05, lambda: rng.choice(mid)[:4] + "*"),
            ("ticket number", 0.05, lambda: str(rng.randrange(1000, 100_000))),
            ("no match", 0.05, lambda: f"zq{rng.randrange(10**6)}x"),
            (
                "natural language",
                0.23,
                lambda: rng.choice(natural).format(
                    v=rng.choice(verbs), n=rng.choice(nouns), n2=rng.choice(nouns)
                ),
            ),
        ]
        counts = [max(1, round(n * share)) for _, share, _ in shapes]
        counts[-1] = max(1, counts[-1] + n - sum(counts))  # exactly n (rounding)
        out: list[tuple[str, str]] = []
        for (name, _, make), count in zip(shapes, counts, strict=True):
            out.extend((name, make()) for _ in range(count))
        rng.shuffle(out)
        return out
