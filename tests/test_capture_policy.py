"""The capture policy as pure functions: secret redaction and injection signals over the
corpora in capture_corpus.py, plus properties of redact on generated text. No database."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capture_corpus import BENIGN_INSTRUCTIONS, BENIGN_LOOKALIKES, INJECTIONS, SECRETS
from memlane.write.injection import FAMILIES, injection_signals, is_injection
from memlane.write.secrets import KINDS, Redaction, find_secrets, redact

SECRET_TEXTS = [text for text, _, _ in SECRETS]
INJECTION_TEXTS = [text for text, _ in INJECTIONS]


def _ids(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """`kind-3` for the third example of a kind: failures name the corpus entry."""
    seen: Counter[str] = Counter()
    ids = []
    for row in rows:
        seen[row[1]] += 1
        ids.append(f"{row[1]}-{seen[row[1]]}")
    return ids


def _assert_spans_valid(text: str, found: list[Redaction]) -> None:
    ends = [0]
    for item in found:
        assert ends[-1] <= item.start < item.end <= len(text), found
        ends.append(item.end)


# ---- the corpora themselves ------------------------------------------------------------


def test_corpora_are_large_and_cover_every_kind_and_family():
    assert len(SECRETS) >= 70 and len(BENIGN_LOOKALIKES) >= 70
    assert len(INJECTIONS) >= 40 and len(BENIGN_INSTRUCTIONS) >= 60
    kinds = Counter(kind for _, kind, _ in SECRETS)
    assert set(kinds) == set(KINDS) and min(kinds.values()) >= 5
    assert {family for _, family in INJECTIONS} == set(FAMILIES)
    for text, _, secret in SECRETS:
        assert secret in text


# ---- secrets -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS, ids=_ids(SECRETS))
def test_every_secret_is_redacted_and_named(text, kind, secret):
    redacted, found = redact(text)
    assert secret not in redacted
    assert [item.kind for item in found] == [kind]
    assert f"[REDACTED:{kind}]" in redacted


@pytest.mark.parametrize("text", BENIGN_LOOKALIKES)
def test_benign_lookalikes_come_back_unchanged(text):
    redacted, found = redact(text)
    assert found == []
    assert redacted is text


@pytest.mark.parametrize("text", SECRET_TEXTS + BENIGN_LOOKALIKES)
def test_redact_is_idempotent(text):
    once, _ = redact(text)
    twice, found = redact(once)
    assert twice == once and found == []


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS, ids=_ids(SECRETS))
def test_offsets_point_into_the_original_text(text, kind, secret):
    found = find_secrets(text)
    _assert_spans_valid(text, found)
    assert any(secret in text[item.start : item.end] for item in found)


def test_a_credential_keeps_its_key():
    assert redact("DB_PASSWORD=s3cr3t-Pa55")[0] == "DB_PASSWORD=[REDACTED:credential]"
    assert redact('{"password": "Tr0ub4dor&3"}')[0] == '{"password": "[REDACTED:credential]"}'


def test_a_connection_string_loses_only_its_password():
    text = "postgres://app:Xk29fjQ7@db:5432/app"
    assert redact(text)[0] == "postgres://app:[REDACTED:connection_string]@db:5432/app"


def test_overlapping_detectors_give_one_span_named_by_the_most_specific():
    key = "sk-Fq3ZpL8mWv2XkR9tYb6NcJ4hGd7Ts1QeUa5oVi0Mn"
    redacted, found = redact(f"OPENAI_API_KEY={key}")
    assert redacted == "OPENAI_API_KEY=[REDACTED:openai_key]"
    assert [item.kind for item in found] == ["openai_key"]


def test_several_secrets_are_reported_in_order():
    text = "user=app password=Zq8-wLm2vR url=redis://:Pq7Lx2Nv9K@cache:6379 id=AKIAQX4M7ZPL2VNB6RTY"
    redacted, found = redact(text)
    assert [item.kind for item in found] == ["credential", "connection_string", "aws_access_key"]
    assert "Zq8-wLm2vR" not in redacted and "Pq7Lx2Nv9K" not in redacted
    assert "AKIAQX4M7ZPL2VNB6RTY" not in redacted
    _assert_spans_valid(text, found)


# ---- injection ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "family"), INJECTIONS, ids=_ids(INJECTIONS))
def test_every_injection_is_flagged_with_its_family(text, family):
    assert injection_signals(text) == [family]
    assert is_injection(text)


@pytest.mark.parametrize("text", BENIGN_INSTRUCTIONS)
def test_no_benign_instruction_is_flagged(text):
    assert injection_signals(text) == []
    assert not is_injection(text)


def test_secret_lookalikes_and_secrets_are_not_injections():
    assert not any(is_injection(text) for text in SECRET_TEXTS + BENIGN_LOOKALIKES)


# ---- precision and recall ---------------------------------------------------------------


def _precision_recall(positives: list[bool], negatives: list[bool]) -> tuple[float, float]:
    """From detector verdicts on texts that should fire and on texts that should not."""
    tp, fn = sum(positives), positives.count(False)
    fp = sum(negatives)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1)


def test_both_detectors_are_exact_on_the_corpora():
    secrets = _precision_recall(
        [[r.kind for r in find_secrets(text)] == [kind] for text, kind, _ in SECRETS],
        [bool(find_secrets(text)) for text in BENIGN_LOOKALIKES],
    )
    injections = _precision_recall(
        [injection_signals(text) == [family] for text, family in INJECTIONS],
        [is_injection(text) for text in BENIGN_INSTRUCTIONS],
    )
    assert secrets == (1.0, 1.0)
    assert injections == (1.0, 1.0)


# ---- properties --------------------------------------------------------------------------

_FRAGMENTS = st.one_of(
    st.sampled_from(SECRET_TEXTS + BENIGN_LOOKALIKES + INJECTION_TEXTS + BENIGN_INSTRUCTIONS),
    st.text(max_size=60),
    st.text(alphabet="abcXYZ0189+/=_-:@ \n\"'", max_size=60),
)
_TEXTS = st.lists(_FRAGMENTS, max_size=4).map(" ".join)


@given(_TEXTS)
def test_redact_never_raises_hides_what_it_finds_and_is_idempotent(text):
    redacted, found = redact(text)
    _assert_spans_valid(text, found)
    if not found:
        assert redacted is text
    for item in found:
        assert text[item.start : item.end] not in redacted
    assert redact(redacted)[0] == redacted
    injection_signals(text)


@given(st.text())
def test_text_without_secrets_is_never_changed(text):
    if not find_secrets(text):
        assert redact(text)[0] is text


@pytest.mark.parametrize("unit", ["a-", "a.", "sk-", "a:b@", '"a":"', "Bearer "])
def test_redact_stays_linear_on_long_repetitive_input(unit):
    """A 64 KiB body of one repeated fragment once took 24 s (a key could start at every
    `-`); every detector must start a match at most once per run of name characters."""
    text = unit * (64 * 1024 // len(unit))
    start = time.perf_counter()
    redact(text)
    injection_signals(text)
    assert time.perf_counter() - start < 2.0
