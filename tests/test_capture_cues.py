"""The cue extractor on the labelled sessions in tests/transcripts, per split, and the
mechanisms behind it: a cue kept with the sentences that support it, noise that ends
a memory, sentences that look like rules but are not. All pure: no store, no hooks.

`bench/capture_cues.py` prints the table; `--misses` lists the dev split's errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from memlane.evaluation import extraction
from memlane.hooks import cues, extract
from memlane.hooks.transcript import ASSISTANT, USER, Turn, read

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "bench"))

import capture_cues  # noqa: E402

# ---- the labelled sessions --------------------------------------------------------------


def test_the_dev_split_meets_the_targets_and_the_test_split_is_reported(capsys):
    """Measured: dev 112 of 115 kept right (0.974), 119 of 123 labels found (0.967);
    test, held out, 27 of 34 (0.794) and 27 of 40 (0.675). The test floors only catch a
    regression: the rules were never tuned on those sessions' errors."""
    scores = capture_cues.by_split(capture_cues.run())
    dev, test = scores[capture_cues.DEV], scores[capture_cues.TEST]
    with capsys.disabled():
        for name, s in (("dev", dev), ("test", test)):
            print(f"\ncapture cues, {name}: precision {s.precision:.3f}, recall {s.recall:.3f}")
    assert dev.labelled >= 100 and test.labelled >= 40
    assert dev.precision >= 0.9 and dev.recall >= 0.8
    assert test.precision >= 0.75 and test.recall >= 0.6


def test_every_label_is_said_in_its_transcript_and_names_its_split():
    transcripts = sorted((ROOT / "transcripts").glob("*.jsonl"))
    assert len(transcripts) >= 10
    splits = set()
    for path in transcripts:
        labels = json.loads(path.with_name(path.stem + ".labels.json").read_text("utf-8"))
        splits.add(labels["split"])
        said = " ".join(" ".join(t.text.split()) for t in read(path).turns)
        for item in labels["keep"]:
            assert " ".join(item["text"].split()) in said, (path.name, item["text"])
    assert splits == {"dev", "test"}


# ---- a cue and the sentences that support it -------------------------------------------


def memories(text: str) -> list[str]:
    return [c.content for c in extract.extract([Turn(USER, text)])]


def test_a_correction_keeps_its_instruction_and_its_reason():
    said = ("No, don't use docker compose here. We use the devcontainer's built-in Postgres "
            "on port 5433 because the compose file is stale. Can you rerun the tests?")  # fmt: skip
    [kept] = extract.extract([Turn(USER, said)])
    assert kept.kind == "lesson"
    assert kept.content == said.removesuffix(" Can you rerun the tests?")


def test_a_decision_keeps_its_rationale():
    said = ("hmm. We'll key the limiter on IP plus an email hash. Raw emails in Redis keys "
            "were flagged by security once.")  # fmt: skip
    assert memories(said) == [said.removeprefix("hmm. ")]


def test_a_reply_a_question_or_a_request_ends_a_memory():
    assert memories("Never merge on red. Thanks!") == ["Never merge on red."]
    assert memories("We always squash-merge. Can you open the PR?") == ["We always squash-merge."]
    assert memories("Never merge on red. Let's look at the logs now.") == ["Never merge on red."]


def test_the_sentence_before_a_cue_introduces_it():
    said = "Payloads contain customer addresses. We never log them at INFO."
    assert memories(said) == [said]


def test_list_items_and_paragraphs_are_memories_of_their_own():
    said = "Ground rules:\n- we never push to main\n- tests must pass before merging"
    assert memories(said) == ["we never push to main", "tests must pass before merging"]
    assert memories("We never push to main.\n\nNice weather today.") == ["We never push to main."]


def test_a_line_that_ends_without_a_full_stop_keeps_its_break():
    said = "ok here goes:\nto cut a release: bump the version, then tag it and push the tag."
    [kept] = memories(said)
    assert kept.endswith(
        "here goes:\nto cut a release: bump the version, then tag it and push the tag."
    )


def test_procedures_and_constraints_are_kinds_of_their_own():
    found = extract.extract([
        Turn(USER, "Before deploying staging, run the migration plan and paste it in the PR."),
        Turn(USER, "Seed emails must be on example.com, every one of them."),
    ])  # fmt: skip
    assert [c.kind for c in found] == ["procedure", "constraint"]


@pytest.mark.parametrize(
    "text",
    [
        "I guess we could always make it configurable later.",  # a possibility
        "Maybe we should always pin the versions.",
        "Let me check with them, I don't want to build an admin page for nothing.",  # own plan
        "I'm trying to compare the variants before we run an A/B test.",
        "By the way, we decided nothing yet about Postgres 16.",  # no decision
        "I bet that was me and it never got reverted.",  # a story
        "I've never actually looked at that part of the code.",
        "honestly, nobody ever looks at it until it's red",
        "Actually, never mind the refund tests for now.",
        "I'd rather not see that again.",  # short, and points elsewhere
        "ok this is a postmortem thing, not a 3am thing.",
        "Let's switch to the reindex job then.",
    ],
)
def test_what_only_sounds_like_a_rule_is_not_kept(text):
    assert memories(text) == []


# One sentence for each cue, as people say it: each is kept, as a memory of its family.
SAID_AS = {
    "no-then-instruction": "No, we deploy from the release branch.",
    "no-x-please": "No mocks please, the fixtures are fast enough.",
    "thats-wrong": "That's the old way, errors carry a code now.",
    "dont-x-use-y": "Don't call the worker directly, use the enqueue helper.",
    "instead": "Create the sequence lazily in the service instead.",
    "x-not-y": "Let's do the XDG path, not a dotfile in home.",
    "stop-doing": "Please stop adding type ignores.",
    "careful": "Careful, the users table has 40M rows.",
    "rather-prefer": "I'd rather keep the dependency tree small.",
    "dislike": "I don't like mocks in integration tests.",
    "want-like": "I want every admin page to have a query count test.",
    "i-like": "I like commit subjects that say what the code does.",
    "always-never": "Always include a How to test section.",
    "from-now-on": "From now on, jobs that are deterministic get no retries.",
    "decided": "The product team decided that ranges include today.",
    "going-with": "We're going with cursor pagination.",
    "go-with": "Let's stick with the grep check in CI.",
    "we-will": "We'll key the limiter on IP plus an email hash.",
    "we-changed": "We dropped the conventional-commit prefixes.",
    "decision-label": "The decision is: one table per tenant.",
    "rule-label": "Rule: test files mirror the module path.",
    "our-rule": "Every test creates its own tenant, that's been the rule for years.",
    "in-this-repo": "Notebooks in this repo only call code from recsys.",
    "we-always": "We squash-merge feature branches.",
    "always-never-rule": "Money is never a float here.",
    "the-way-we": "This is the way we deprecate things here: a warning first.",
    "keep-as-is": "Tests run with warnings as errors, keep it that way.",
    "placement": "Config stays in environment variables.",
    "scope": "The designer wants no rotated labels anywhere in the app.",
    "use-x": "Use respx for mocking httpx.",
    "must": "Seed emails must be on example.com.",
    "limit-is": "The limit for the dashboard chunk is 350 kB.",
    "one-per": "One running export per customer and year.",
    "not-ever": "No card data in logs, ever.",
    "requires": "Payments PRs need two approvals.",
    "have-to": "Optional backends need to be importable in the docs build.",
    "to-do-this": "To cut a release: bump the version and tag it.",
    "before-when": "Before deploying staging, run the migration plan.",
    "then-step": "Split it: add the column, backfill, then set NOT NULL.",
    "remember-label": "Heads up: staging resets every night.",
    "remember-that": "Remember that the jobs table is vacuumed at 03:00 UTC.",
}


def test_every_cue_has_a_sentence_it_reads():
    assert set(SAID_AS) == {name for _, name, _ in cues.CUES}
    for name, sentence in SAID_AS.items():
        assert name in {n for _, n in cues.cues_in(sentence)}, name
        assert memories(sentence) == [sentence], name


def test_emphasis_is_unwrapped_and_a_lone_asterisk_stays():
    assert extract.sentences("**Convention:** tests mirror the module path.") == [
        "Convention: tests mirror the module path."
    ]
    assert extract.sentences("We never cache Vary: * responses.") == [
        "We never cache Vary: * responses."
    ]


def test_abbreviations_do_not_end_a_sentence_and_lowercase_starts_do():
    assert extract.split("Use a formatter, e.g. ruff. right. we never use black.") == [
        "Use a formatter, e.g. ruff.",
        "right.",
        "we never use black.",
    ]


@pytest.mark.parametrize(
    ("sentence", "is_noise"),
    [
        ("Can you run the suite?", True),
        ("ok, makes sense", True),
        ("Thanks a lot!", True),
        ("Could you commit it please", True),
        ("Let's open the PR.", True),
        ("It reads better and the rest of the suite does it.", False),  # support
        ("Let's stick with ruff.", False),  # a decision
    ],
)
def test_noise_is_questions_replies_and_requests(sentence, is_noise):
    assert cues.noise(sentence) is is_noise


def test_the_assistant_counts_only_in_its_labelled_lines():
    said = "We always use ruff here, I noticed.\nRoot cause: the clock was not frozen."
    found = extract.extract([Turn(ASSISTANT, said)])
    assert [(c.kind, c.content) for c in found] == [
        ("lesson", "Root cause: the clock was not frozen.")
    ]


# ---- scoring memories of several sentences ----------------------------------------------


def test_a_label_is_found_only_when_one_memory_holds_all_of_its_sentences():
    labels = ["No, use pnpm. CI rejects other lockfiles.", "We deploy on Fridays."]
    whole = extraction.score([("No, use pnpm. CI rejects other lockfiles. Thanks.", "c", "user")],
                             labels)  # fmt: skip
    assert (whole.right, whole.found, whole.recall) == (1, 1, 0.5)
    cut = extraction.score([("no, use PNPM.", "c", "user")], labels)
    assert (cut.right, cut.found, cut.precision) == (1, 0, 1.0)  # right, but it lost its reason
    assert cut.partial == ("No, use pnpm. CI rejects other lockfiles.",)
    assert cut.missed == (*cut.partial, "We deploy on Fridays.")


def test_one_memory_may_hold_two_labels_and_pooling_sums_the_counts():
    labels = ["Use respx for mocking.", "Stop using mock.patch."]
    one = extraction.score([("Use respx for mocking. Stop using mock.patch.", "c", "user")], labels)
    assert (one.kept, one.right, one.found) == (1, 1, 2)
    none = extraction.score([("Hello there.", "r", "user")], ["Never push to main."])
    pooled = extraction.pooled([one, none])
    assert (pooled.kept, pooled.right, pooled.labelled, pooled.found) == (2, 1, 3, 2)
    assert pooled.precision == 0.5 and pooled.recall == pytest.approx(2 / 3)
