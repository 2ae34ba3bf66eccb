"""The injection gate: which recalled memories a hook may put in front of the model
unasked. Pure: the prompt's terms and a recall result in, a verdict out.

Silence is the default. A recall always ranks *something* first (its relevance is
normalised to the best candidate, so the top hit looks perfect even when nothing
matches), so the gate cannot trust the ranking alone. It asks for evidence that a
memory is about what the prompt is about: the prompt's content words (lightly
stemmed) that the memory also contains, and how much of the prompt they cover.
Recent tool operations (ops) count at half weight: they point at what the session is
doing, not at what the user asked.

A prompt that names an action (commit, push, deploy, migrate, test, release, install)
says little else ("commit these changes"), so it could never share two words with
anything; yet the rules that govern the action are what a colleague would mention.
A memory of a governing kind (a procedure, convention, constraint, decision or
preference) that names the same action clears the gate on it when the prompt is short
enough that the action is most of what it asks. A fact or an event that mentions the
action does not: it tells what happened, not how to do it.

Tuned for precision first on the dev half of tests/hook_gold.py (bench/hook_gate.py
prints the grid): see the constants below.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec

from memlane.model import Kind
from memlane.retrieve.result import RecallResult
from memlane.retrieve.score import Scored

# The bar, tuned on the dev half of the gold set (bench/hook_gate.py --grid, sorted by
# precision, then recall, then strictness; hash and MiniLM chose the same bar). The words'
# rule, on the prompts that name no action (dev precision 1.00, recall 0.91):
# - MIN_EVIDENCE 1.5: one shared word is what a near-miss looks like ("Fridays" in a
#   poem, "Berlin" in a geography question), so one is never enough; 1.5 lets one prompt
#   word plus one tool-operation word through (at 1.0 dev precision fell to 0.56, nine
#   of 18 silent cases spoke; at 2.0 recall fell to 0.86).
# - MIN_COVERAGE 0.25: the shared words must be a real part of what is asked, so a long
#   pasted text that brushes a memory with two words stays silent (0.34: recall 0.82).
# - MIN_RELATIVE 0.8: a hit well below the best one rode along on the best one's words
#   (0.6-0.8 tie on dev; the strictest of the ties).
# - MIN_SHARE 1.0: a second memory comes along only with as much evidence as the best
#   one; one that shares fewer words shares the prompt's generic ones ("public API").
MIN_EVIDENCE = 1.5
MIN_COVERAGE = 0.25
MIN_RELATIVE = 0.8
MIN_SHARE = 1.0
# A tool operation's word is a hint, not a request: it counts half a prompt word.
OPS_WEIGHT = 0.5
# The action's rule (see the module docstring), on all dev prompts (precision 1.00,
# recall 0.89):
# - ACTION_WEIGHT 2: an action the prompt asks for, shared with a memory that governs
#   it, counts two words, in the prompt and in the memory alike. Alone it weighs what
#   two shared words do; a rule that also shares the prompt's object (3) outranks one
#   that only governs the action (2) under MIN_SHARE.
# - MIN_ACTION_COVERAGE 0.6: the shared words, so weighed, cover this much of the
#   prompt: the action and one word more pass on the action alone ("commit these
#   changes", 2/3); the action and two more do not (at 0.5, 2/4, "how do I install
#   Python on Windows?" spoke; at 0.67 recall fell to 0.68).
# - MIN_ACTION_RELATIVE 0.6: a short prompt's ranking leans on its one other word, so a
#   governing rule may rank lower than on the words' rule (at 0.8 recall fell to 0.86:
#   "test it before we merge" ranks the rule on merging first; 0.0-0.6 tie).
ACTION_WEIGHT = 2.0
MIN_ACTION_COVERAGE = 0.6
MIN_ACTION_RELATIVE = 0.6
# At most this many memories per prompt: a hook adds context, it does not answer.
MAX_INJECTED = 3

# Words that carry no topic in a prompt or a memory: function words, chat filler, the
# generic verbs of requests to a coding agent, and file-type noise. Unlike
# graph.entities.STOPWORDS (names), topic verbs such as deploy, test or install stay in.
FUNCTION_WORDS = frozenset(
    """
    a an the this that these those some any each every all both either neither no none
    another such what which whose who whom why how when where whatever
    i me my mine we us our ours you your yours he him his she her hers it its they them
    their theirs myself ourselves yourself itself themselves one ones someone something
    anyone anything everyone everything nobody nothing
    about above after against along among around at before behind below beside between
    beyond by despite down during except for from in inside into like near of off on onto
    out outside over past since through to toward towards under until up upon via with
    within without per and but or nor so yet because although though while if unless
    whether then than also however therefore thus instead anyway
    am is are was were be been being have has had having do does did done doing will
    would shall should can could may might must let lets
    dont doesnt didnt isnt arent wasnt werent cant cannot couldnt wont wouldnt shouldnt
    im ive id ill youre youve youll hes shes weve theyre thats theres whats heres
    not never always often just only very really now today here there again still even
    already maybe perhaps please yes ok okay sure well oh hi hello hey thanks thank
    good great nice cool fine right new old more most less least much many other same
    use using used make made get got getting going goes went know think want need
    like look see try help show tell explain give take put keep keeps let write read
    run
    fix add change update check find work works working thing things stuff way ways
    lot bit kind sort time times first last next back out
    code file files py js ts md txt
    """.split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# The actions a prompt may name, by the words that name them: the verb's forms and the
# nouns for the act. A word is matched whole, so "commitment" and "installment" name
# nothing (their stems would).
ACTIONS: dict[str, str] = {
    word: action
    for action, words in (
        ("commit", "commit commits committed committing"),
        ("push", "push pushes pushed pushing"),
        ("deploy", "deploy deploys deployed deploying deployment deployments"),
        ("migrate", "migrate migrates migrated migrating migration migrations"),
        ("test", "test tests tested testing"),
        ("release", "release releases released releasing"),
        ("install", "install installs installed installing installation installations"),
    )
    for word in words.split()
}
# The same words in a sense that is no project action: learning by heart, trying
# something out, a phone's notifications, objecting.
IDIOMS = re.compile(
    r"\bcommit\w*\s+(?:\S+\s+){0,3}?to memory\b|\btest(?:ing)? the waters\b"
    r"|\bto the test\b|\bpush notifications?\b|\bpush(?:ed|es|ing)? back\b"
)
# A prompt asks for an action, rather than mentions one ("the first release of Linux",
# "a spelling test", "a git commit"), when the action's word opens a clause ("commit
# these changes", "ok, deploy it"), follows a word that leads into a request or names
# the tool ("please", "can you", "how do I", "time to", "before", "git push"), or has a
# verb that puts it to be done shortly before it ("run the database tests", "cut a new
# release", "let's push").
REQUEST_LEADS = frozenset(
    """
    please pls and then now ok okay so also just to you we i me before after when while
    git npm pnpm yarn pip uv cargo poetry helm
    """.split()
)
REQUEST_VERBS = frozenset(
    """
    run runs running rerun do doing make making cut cutting start starting trigger
    prepare preparing write writing create creating finish let
    """.split()
)
# Words from such a verb to the action it puts: "run the integration tests" is three.
REQUEST_REACH = 3
_CLAUSE = re.compile(r"[.!?;:,\n]+")
# The kinds of memory that say how something is to be done. The cue extractor files a
# person's "always ..." and "never ..." as preferences, so they govern too.
GOVERNING = frozenset(
    {Kind.PROCEDURE, Kind.CONVENTION, Kind.CONSTRAINT, Kind.DECISION, Kind.PREFERENCE}
)
# Suffixes replaced before a word is cut to STEM_CHARS (first match wins): deploying,
# deployed, deploys and deployment all become "deploy"; migration and migrate "migrat".
_SUFFIXES = (
    ("ations", "at"),
    ("ation", "at"),
    ("ments", ""),
    ("ment", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ed", ""),
)
_ES = re.compile(r"(?:[sxz]|ch|sh)es$")  # boxes, caches: "es" is the plural
STEM_CHARS = 6
MIN_WORD_CHARS = 2


def stem(word: str) -> str:
    """A crude, stable stem: one common suffix off, a final e off (module and modules,
    cache and cached meet), then at most STEM_CHARS letters."""
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    else:
        if _ES.search(word) and len(word) > 4:
            word = word[:-2]
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word[:STEM_CHARS]


def terms(text: str) -> frozenset[str]:
    """The stems of a text's content words (see FUNCTION_WORDS)."""
    words = (w for w in _WORD.findall(text.casefold()) if len(w) >= MIN_WORD_CHARS)
    stems = (stem(w) for w in words if w not in FUNCTION_WORDS and not w.isdigit())
    return frozenset(s for s in stems if s not in FUNCTION_WORDS)  # looks -> look


def actions(text: str) -> frozenset[str]:
    """The actions (ACTIONS' values) a text mentions, idioms left out."""
    plain = IDIOMS.sub(" ", text.casefold())
    return frozenset(ACTIONS[w] for w in _WORD.findall(plain) if w in ACTIONS)


def requested(text: str) -> frozenset[str]:
    """The actions a prompt asks for (see REQUEST_LEADS), idioms left out."""
    asked: set[str] = set()
    for clause in _CLAUSE.split(IDIOMS.sub(" ", text.casefold())):
        words = _WORD.findall(clause)
        for i, word in enumerate(words):
            if word in ACTIONS and _put(words, i):
                asked.add(ACTIONS[word])
    return frozenset(asked)


def _put(words: list[str], i: int) -> bool:
    """Whether the action word at `i` of a clause's words is put as a request."""
    before = words[max(0, i - REQUEST_REACH) : i]
    return i == 0 or words[i - 1] in REQUEST_LEADS or not REQUEST_VERBS.isdisjoint(before)


class Bar(msgspec.Struct, frozen=True):
    """The gate's thresholds (the constants above; bench/hook_gate.py varies them)."""

    min_evidence: float = MIN_EVIDENCE
    min_coverage: float = MIN_COVERAGE
    min_relative: float = MIN_RELATIVE
    min_share: float = MIN_SHARE
    ops_weight: float = OPS_WEIGHT
    action_weight: float = ACTION_WEIGHT
    min_action_coverage: float = MIN_ACTION_COVERAGE
    min_action_relative: float = MIN_ACTION_RELATIVE
    max_injected: int = MAX_INJECTED


BAR = Bar()


class Evidence(msgspec.Struct, frozen=True):
    """Why one hit passed or failed the gate."""

    memory_id: str
    shared: tuple[str, ...]  # prompt stems the memory contains
    shared_ops: tuple[str, ...]  # further ops stems it contains
    evidence: float  # len(shared) + ops_weight * len(shared_ops), governed at action_weight
    coverage: float  # the words' evidence over the prompt's stems (and its ops', weighed alike)
    relative: float  # its score over the best hit's
    passed: bool
    governed: tuple[str, ...] = ()  # actions the prompt names that this memory governs
    action_coverage: float = 0.0  # shared over the prompt's stems, governed at action_weight


class Verdict(msgspec.Struct, frozen=True):
    """What the gate let through, best first, and the reason for a silence.

    reason: injected, empty-pool (recall found nothing), below-bar (nothing cleared it).
    """

    admitted: tuple[Scored, ...]
    reason: str
    evidence: tuple[Evidence, ...] = ()


def memory_text(hit: Scored) -> str:
    r = hit.record
    return " ".join((r.title, r.body, *r.tags))


def memory_terms(hit: Scored) -> frozenset[str]:
    return terms(memory_text(hit))


def governed(named: frozenset[str], hit: Scored) -> tuple[str, ...]:
    """The actions of `named` that `hit` governs: it is of a governing kind and names them."""
    if not named or hit.record.kind not in GOVERNING:
        return ()
    return tuple(sorted(named & actions(memory_text(hit))))


def weigh(
    prompt: frozenset[str],
    ops: frozenset[str],
    hit: Scored,
    top: float,
    bar: Bar = BAR,
    named: frozenset[str] = frozenset(),
) -> Evidence:
    """The evidence that `hit` is about the prompt, whose stems are `prompt` and whose
    requested actions (`requested`) are `named` (see the module docstring)."""
    mine = memory_terms(hit)
    shared = tuple(sorted(prompt & mine))
    shared_ops = tuple(sorted((ops - prompt) & mine))
    words = len(shared) + bar.ops_weight * len(shared_ops)
    asked = len(prompt) + bar.ops_weight * len(ops - prompt)
    coverage = words / asked if asked else 0.0
    relative = hit.score / top if top > 0 else 0.0
    rules = governed(named, hit)
    extra = (bar.action_weight - 1) * len(rules)
    # Tool operations are left out: what the session did does not dilute what it asks.
    # The prompt's other action, if it asks for two, is one more word to cover.
    stated = len(prompt) + extra
    action_coverage = (len(shared) + extra) / stated if rules and stated else 0.0
    on_words = (
        words >= bar.min_evidence and coverage >= bar.min_coverage and relative >= bar.min_relative
    )
    on_action = (
        bool(rules)
        and action_coverage >= bar.min_action_coverage
        and relative >= bar.min_action_relative
    )
    passed = on_words or on_action
    return Evidence(
        hit.record.id,
        shared,
        shared_ops,
        words + extra,
        coverage,
        relative,
        passed,
        rules,
        action_coverage,
    )


def could_clear(
    prompt: frozenset[str],
    ops: frozenset[str],
    bar: Bar = BAR,
    named: frozenset[str] = frozenset(),
) -> bool:
    """Whether any memory could clear the bar for this prompt: it names an action, or
    has enough content words (with its ops) to share. False means silence without a
    recall."""
    return bool(named) or len(prompt) + bar.ops_weight * len(ops - prompt) >= bar.min_evidence


def judge(
    prompt: frozenset[str],
    ops: Iterable[str],
    result: RecallResult,
    bar: Bar = BAR,
    named: frozenset[str] = frozenset(),
) -> Verdict:
    """The hits of `result` that clear the gate for a prompt with these stems (`terms`),
    recent tool-operation stems and requested actions (`requested`), at most
    `bar.max_injected`, in recall's order."""
    if not result.hits:
        return Verdict((), "empty-pool")
    top = result.hits[0].score
    hints = frozenset(ops)
    weighed = tuple(weigh(prompt, hints, h, top, bar, named) for h in result.hits)
    passed = [(h, e) for h, e in zip(result.hits, weighed, strict=True) if e.passed]
    if not passed:
        return Verdict((), "below-bar", weighed)
    best = max(e.evidence for _, e in passed)
    admitted = tuple(h for h, e in passed if e.evidence >= bar.min_share * best)
    return Verdict(admitted[: bar.max_injected], "injected", weighed)
