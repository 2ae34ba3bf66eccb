"""Lifecycle: explicit reinforcement and usage feedback."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memlane import Invalid, NotFound
from memlane.model import effective_resonance


def test_reinforce_raises_importance_resets_the_clock_and_counts(mem):
    memory_id = mem.add("Pin TZ=UTC in conftest.", importance=5).id
    before = mem.get(memory_id)
    assert (before.last_activated, before.activation_count) == (None, 0)
    once = mem.reinforce(memory_id)
    assert (once.importance, once.activation_count) == (6, 1) and once.last_activated
    capped = mem.reinforce(memory_id, amount=3, cap=8)
    assert (capped.importance, capped.activation_count) == (8, 2)
    assert mem.reinforce(memory_id, cap=7).importance == 8  # a cap never lowers it
    stored = mem.get(memory_id)
    assert stored.importance == 8 and stored.version == before.version  # no new version
    # the decay clock restarts from the reinforcement
    later = stored.last_activated + timedelta(weeks=3)
    assert effective_resonance(8, None, stored.last_activated, later) < 8
    assert effective_resonance(8, None, stored.last_activated, stored.last_activated) == 8
    assert "reinforce" in [e.operation for e in mem.journal(memory_id)]


@pytest.mark.parametrize(("amount", "cap"), [(0, 10), (-1, 10), (1, 0), (1, 11)])
def test_reinforce_refuses_bad_amounts_and_caps(mem, amount, cap):
    memory_id = mem.add("Something worth keeping.").id
    with pytest.raises(Invalid):
        mem.reinforce(memory_id, amount=amount, cap=cap)
    assert mem.get(memory_id).importance == 5


def test_feedback_counts_and_the_second_violation_costs_trust_once(mem):
    memory_id = mem.add("Run make migrate before the integration tests.").id
    assert mem.feedback(memory_id, applied=True).applied_count == 1
    first = mem.feedback(memory_id, applied=False)
    assert (first.violated_count, first.trust_score) == (1, 1.0)
    second = mem.feedback(memory_id, applied=False)
    assert (second.violated_count, second.trust_score) == (2, pytest.approx(0.85))
    third = mem.feedback(memory_id, applied=False)
    assert (third.violated_count, third.trust_score) == (3, pytest.approx(0.85))
    with pytest.raises(NotFound):
        mem.feedback("m-zzzzzzzz", applied=True)


def test_cli_reinforce_and_feedback(run):
    memory_id = run("add", "--content", "Deploys freeze on Fridays.", "--json").json()["id"]
    text = run("reinforce", memory_id, "--amount", "2")
    assert text.exit_code == 0 and "importance 7" in text.stdout
    assert run("reinforce", memory_id, "--json").json()["activation_count"] == 2
    refused = run("reinforce", memory_id, "--amount", "0")
    assert refused.exit_code == 2 and "--amount" in refused.stderr
    run("feedback", memory_id, "--violated")
    done = run("feedback", memory_id, "--violated", "--json").json()
    assert (done["violated_count"], done["trust_score"]) == (2, pytest.approx(0.85))
    missing = run("feedback", memory_id)
    assert missing.exit_code == 2 and "--applied or --violated" in missing.stderr


def test_resonance_basis_chooses_decayed_or_raw(mem, run):
    old = mem.add("An old decision about the cache.", importance=8)
    with mem.store.write() as w:  # as if written and last used ten weeks ago
        record = mem.store.get(old.id)
        aged = record.created_at - timedelta(weeks=10)
        w.replace(record.__class__(**{**{f: getattr(record, f) for f in record.__slots__},
                                      "created_at": aged}), None)  # fmt: skip
    fresh = mem.add("A new decision about the queue.", importance=8)
    decayed = {r.id for r in mem.list(min_importance=7.5)}
    raw = {r.id for r in mem.list(min_importance=7.5, resonance_basis="raw")}
    assert decayed == {fresh.id}  # 8 x 0.975^10 = 6.2
    assert raw == {old.id, fresh.id}
    with pytest.raises(Invalid, match="resonance basis"):
        mem.list(resonance_basis="weekly")
    args = ("list", "--scope", "all", "--min-resonance", "7.5", "--json")
    assert {r["id"] for r in run(*args).json()["results"]} == {fresh.id}
    raw_cli = run(*args, "--resonance-basis", "raw").json()["results"]
    assert {r["id"] for r in raw_cli} == {old.id, fresh.id}


def aged(mem, memory_id, days):
    """Move a memory's creation `days` into the past (as if written then)."""
    from memlane.model import replace

    record = mem.store.get(memory_id)
    with mem.store.write() as w:
        w.replace(replace(record, created_at=record.created_at - timedelta(days=days)), None)


def test_review_due_ness_with_a_pinned_clock():
    from memlane.lifecycle.review import due_for_review, recall_probability
    from memlane.model import Kind, Record, replace
    from memlane.timeutil import utcnow

    now = utcnow()

    def record(kind: Kind, importance: int, days: float, reviewed: float | None = None):
        base = Record(id=f"m-{kind.value[:4]}{importance}{int(days)}", scope="global",
                      title="t", body="b", kind=kind, category=kind.value,
                      created_at=now - timedelta(days=days), updated_at=now, valid_from=now,
                      version_from=now, dedup_hash="dh1:x", importance=importance)  # fmt: skip
        if reviewed is not None:
            base = replace(base, reviewed_at=now - timedelta(days=reviewed))
        return base

    fact_old = record(Kind.FACT, 7, 100)  # semantic: 90-day half-life -> 0.46
    fact_new = record(Kind.FACT, 7, 80)  # 0.54: not yet
    event = record(Kind.EVENT, 6, 4)  # episodic: 3 days -> 0.40
    trivia = record(Kind.FACT, 4, 400)  # below the importance floor
    reviewed = record(Kind.FACT, 9, 400, reviewed=10)  # reviewed ten days ago
    assert recall_probability(fact_old, now) == pytest.approx(0.5 ** (100 / 90))
    due = due_for_review([fact_old, fact_new, event, trivia, reviewed], now)
    assert [r.id for r, _ in due] == [event.id, fact_old.id]  # most decayed first
    assert [r.id for r, _ in due_for_review([fact_new], now, threshold=0.6)] == [fact_new.id]
    assert due_for_review([trivia], now, min_importance=4)


def test_review_lists_what_decayed_and_reviewed_resets_it(mem, run):
    old = mem.add("The billing API uses idempotency keys.", importance=7).id
    mem.add("Fresh fact about the queue.", importance=7)
    aged(mem, old, 120)
    assert [r.id for r, _ in mem.lifecycle.review()] == [old]
    assert mem.lifecycle.reviewed(old).reviewed_at is not None
    assert mem.lifecycle.review() == []
    aged(mem, old, 0)  # no effect on the review anchor now
    listed = run("review", "--scope", "all", "--json").json()
    assert listed["count"] == 0
    other = mem.add("A procedure: rotate keys yearly.", kind="procedure", importance=8).id
    aged(mem, other, 200)  # procedural half-life 180 days
    text = run("review", "--scope", "all")
    assert text.exit_code == 0 and other in text.stdout and text.stdout.startswith(" 0.46")
    assert run("reviewed", other).stdout.strip() == f"Reviewed {other}"
    assert "nothing is due" in run("review", "--scope", "all").stderr


def test_the_due_count_is_what_review_lists_under_the_same_policy(mem):
    from memlane.lifecycle.review import ReviewPolicy

    old = mem.add("The billing API uses idempotency keys.", importance=7).id
    procedure = mem.add("A procedure: rotate keys yearly.", kind="procedure", importance=8).id
    mem.add("Fresh fact about the queue.", importance=7)
    aged(mem, old, 120)  # semantic, 90-day half-life: 0.40
    aged(mem, procedure, 120)  # procedural, 180 days: 0.63
    assert mem.review_due_count() == len(mem.lifecycle.review()) == 1
    mem.review_policy = ReviewPolicy(threshold=0.7)
    assert mem.review_due_count() == len(mem.lifecycle.review()) == 2
    mem.review_policy = ReviewPolicy(threshold=0.7, min_importance=8)
    assert [r.id for r, _ in mem.lifecycle.review()] == [procedure] and mem.review_due_count() == 1
    assert mem.review_due_count(kind="fact") == len(mem.lifecycle.review(kind="fact")) == 0
    with pytest.raises(Invalid, match="review threshold"):
        ReviewPolicy(threshold=0)


def test_stats_health_doctor_and_home_count_what_review_lists(mem, run, cli_env):
    ids = {
        name: run("add", text, "--importance", importance, *extra, "--json").json()["id"]
        for name, text, importance, extra in (
            ("fact", "The billing API uses idempotency keys.", "7", ()),
            ("procedure", "Rotate the signing keys yearly.", "8", ("--kind", "procedure")),
            ("fresh", "The queue drains every night.", "7", ()),
            ("trivia", "The office plant is a fern.", "2", ()),
        )
    }
    for name in ("fact", "procedure", "trivia"):
        aged(mem, ids[name], 120)  # fact 0.40 (due), procedure 0.63, trivia unimportant

    def counts() -> dict[str, object]:
        checks = {c["name"]: c for c in run("doctor", "--json").json()}
        return {
            "review": run("review", "--json").json()["count"],
            "stats": run("stats", "--json").json()["due_for_review"],
            "health": run("health", "--json").json()["due_for_review"],
            "doctor": (checks["review"]["status"], checks["review"]["fix"]),
            "home": run().stdout.splitlines()[1],
        }

    found = counts()
    assert found["review"] == found["stats"] == found["health"] == 1
    assert found["doctor"] == ("warn", "memlane review")
    assert found["home"].endswith("4 live of 4 memories, 1 due for review (memlane review)")
    assert "due_for_review: 1" in run("stats").stdout
    assert "due for review         1 (memlane review)" in run("health").stdout
    doctor = run("doctor")
    assert "warn  review           1 due for review" in doctor.stdout
    assert doctor.exit_code == 0
    # The recall half-lives are the clock of review and of every count alike.
    cli_env["MEMLANE_RECALL_HALF_LIVES"] = "3,90,30,7"  # the procedure falls to 0.06
    found = counts()
    assert found["review"] == found["stats"] == found["health"] == 2
    assert found["home"].endswith(", 2 due for review (memlane review)")
    cli_env["MEMLANE_RECALL_HALF_LIVES"] = "3,1000,1000,7"  # nothing has faded enough
    found = counts()
    assert found["review"] == found["stats"] == found["health"] == 0
    assert found["doctor"] == ("ok", None)
    assert found["home"].endswith("4 live of 4 memories")
    cli_env["MEMLANE_REVIEW_MIN_IMPORTANCE"] = "1"
    cli_env["MEMLANE_RECALL_HALF_LIVES"] = "3,30,1000,7"  # now the trivia counts too
    found = counts()
    assert found["review"] == found["stats"] == found["health"] == 2


def test_search_and_recall_activate_reset_the_decay_clock(mem, run):
    memory_id = mem.add("The staging cluster runs in eu-west-1.").id
    assert mem.get(memory_id).last_activated is None
    mem.search("staging cluster")
    assert mem.get(memory_id).activation_count == 0  # a plain search activates nothing
    mem.search("staging cluster", activate=True)
    first = mem.get(memory_id)
    assert first.activation_count == 1 and first.last_activated is not None
    run("search", "staging cluster", "--scope", "all", "--activate")
    mem.recall("staging cluster", activate=True, scope="all")
    assert mem.get(memory_id).activation_count == 3


NOW = "2026-11-30T10:00:00+00:00"  # a Monday


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("in 2 hours", "2026-11-30T12:00:00+00:00"),
        ("in 30 minutes", "2026-11-30T10:30:00+00:00"),
        ("in 3 days", "2026-12-03T10:00:00+00:00"),
        ("in a week", "2026-12-07T10:00:00+00:00"),
        ("tomorrow at 9am", "2026-12-01T09:00:00+00:00"),
        ("tomorrow 17:00", "2026-12-01T17:00:00+00:00"),
        ("friday 5pm", "2026-12-04T17:00:00+00:00"),
        ("next monday", "2026-12-07T00:00:00+00:00"),
        ("at 17:30", "2026-11-30T17:30:00+00:00"),
        ("tonight", "2026-11-30T20:00:00+00:00"),
        ("Dec 1st 8am", "2026-12-01T08:00:00+00:00"),
        ("2026-12-24 18:00", "2026-12-24T18:00:00+00:00"),
    ],
)
def test_reminder_times_parse_from_a_dozen_phrasings(phrase, expected):
    from datetime import datetime

    from memlane.write.reminders import parse_due

    assert parse_due(phrase, datetime.fromisoformat(NOW)).isoformat() == expected


def test_a_reminder_time_is_read_in_a_time_zone_and_stored_in_utc():
    from datetime import datetime

    from memlane.write.reminders import parse_due

    due = parse_due("tomorrow at 9am", datetime.fromisoformat(NOW), "Europe/Berlin")
    assert due.isoformat() == "2026-12-01T08:00:00+00:00"  # 09:00 CET
    for bad, zone in (("whenever it suits", None), ("", None), ("in 2 hours", "Mars/Olympus")):
        with pytest.raises(Invalid):
            parse_due(bad, datetime.fromisoformat(NOW), zone)


def test_reminders_list_check_and_dismiss(mem, run):
    later = mem.lifecycle.remind("in 2 hours", "check the deploy")
    past = mem.lifecycle.remind("2020-01-01 09:00", "an old one")
    assert [r.id for r in mem.lifecycle.reminders()] == [past.id, later.id]  # soonest first
    assert [r.id for r in mem.lifecycle.due_reminders()] == [past.id]
    mem.lifecycle.dismiss(past.id)
    assert mem.lifecycle.due_reminders() == []
    assert [r.id for r in mem.lifecycle.reminders()] == [later.id]
    assert len(mem.lifecycle.reminders(include_dismissed=True)) == 2
    with pytest.raises(NotFound):
        mem.lifecycle.dismiss(past.id)
    with pytest.raises(Invalid):
        mem.lifecycle.remind("in 2 hours", "   ")
    # the CLI acts as the same agent on the same store
    made = run("remind", "2020-06-01 12:00", "rotate", "the", "keys", "--json").json()
    assert made["text"] == "rotate the keys" and made["due_at"].startswith("2020-06-01T12:00")
    check = run("reminders", "check")
    assert check.exit_code == 0 and "rotate the keys" in check.stdout
    assert "check the deploy" not in check.stdout  # not due for two hours
    assert "an old one" in run("reminders", "list", "--all").stdout
    assert "an old one" not in run("reminders", "list").stdout
    assert run("reminders", "dismiss", made["id"]).exit_code == 0
    assert run("reminders", "check", "--json").json()["count"] == 0
    refused = run("remind", "whenever", "x")
    assert refused.exit_code == 2 and "cannot read" in refused.stderr


def test_reminders_belong_to_their_agent(mem, db_path):
    from memlane import Context, Memory

    mine = mem.lifecycle.remind("2020-01-01 09:00", "my own reminder")
    with Memory.open(db_path, agent="someone-else", context=Context("proj", "main")) as other:
        assert (
            other.lifecycle.reminders(include_dismissed=True) == []
            and other.lifecycle.due_reminders() == []
        )
        with pytest.raises(NotFound):
            other.lifecycle.dismiss(mine.id)
    assert [r.id for r in mem.lifecycle.due_reminders()] == [mine.id]


def test_open_threads_growth_and_health(vmem, run):
    from memlane.model import replace

    opened = vmem.add("Open question: idempotency by request or invoice id?", kind="thread").id
    closing = vmem.add("Open question: who owns the scheduler?", kind="thread").id
    vmem.add("Alice owns the scheduler.", type="thread_closed", thread_id=closing)
    assert [r.id for r in vmem.lifecycle.open_threads()] == [opened]
    listed = run("open-threads", "--json").json()
    assert [r["id"] for r in listed] == [opened]

    old = vmem.add("An important decision from long ago.", importance=9).id
    record = vmem.store.get(old)
    with vmem.store.write() as w:  # written 30 weeks ago, never used since
        w.replace(replace(record, created_at=record.created_at - timedelta(weeks=30)), None)
    counts = vmem.lifecycle.growth()
    assert len(counts) == 8 and counts[-1] == 3 and sum(counts) == 3  # the old one is out
    assert run("growth", "--json").json() == counts

    vitals = vmem.lifecycle.health()
    assert vitals.live == 4 and vitals.embedded == 4 and vitals.stale_high == 1
    no_vectors = vmem.add("Written without vectors.", no_embed=True)
    assert no_vectors.status.value == "added"
    health = run("health", "--json").json()
    assert health["live"] == 5 and health["embedding_coverage"] == pytest.approx(0.8)
    assert health["stale_high_resonance"] == 1
    assert "embedding coverage     80%" in run("health").stdout


def test_sessions_create_list_close_and_their_memories(mem, run):
    session = mem.lifecycle.create_session("development")
    assert (session.type, session.project, session.ended_at) == ("development", "proj", None)
    first = mem.add("Started the billing refactor.", session_id=session.id).id
    second = mem.add("Moved the retry code into the gateway.", session_id=session.id).id
    mem.add("Unrelated note.")
    assert {r.id for r in mem.lifecycle.for_session(session.id)} == {first, second}
    assert mem.lifecycle.fact_session(first).id == session.id
    closed = mem.packs.close_session(session.id)
    assert closed.ended_at is not None
    with pytest.raises(NotFound):
        mem.packs.close_session(session.id)  # already closed
    with pytest.raises(NotFound):
        mem.lifecycle.for_session("s-nothing")
    orphan = mem.add("No session here.").id
    with pytest.raises(NotFound, match="no session"):
        mem.lifecycle.fact_session(orphan)
    implicit = mem.add("Written in a session nobody created.", session_id="chat-42").id
    assert mem.lifecycle.fact_session(implicit).id == "chat-42"  # a write records its session
    listed = run("sessions", "list", "--json").json()
    assert {s["id"] for s in listed["sessions"]} == {session.id, "chat-42"}
    made = run("sessions", "create", "--session-type", "review", "--json").json()
    assert made["type"] == "review" and made["ended_at"] is None
    assert "closed" in run("sessions", "close", made["id"]).stdout
    assert run("sessions", "close", made["id"]).exit_code == 1
    assert {r["id"] for r in run("for-session", session.id, "--json").json()["results"]} == {
        first, second,
    }  # fmt: skip
    assert run("fact-session", second, "--json").json()["id"] == session.id


def test_the_lifecycle_methods_old_names_still_work_with_a_warning(mem):
    memory_id = mem.add("Pin TZ=UTC in conftest.", importance=5).id
    with pytest.warns(
        DeprecationWarning, match=r"Memory\.reviewed is now Memory\.lifecycle\.reviewed"
    ):
        record = mem.reviewed(memory_id)
    assert record.reviewed_at is not None
    with pytest.warns(
        DeprecationWarning, match=r"Memory\.sessions is now Memory\.lifecycle\.sessions"
    ):
        assert mem.sessions() == mem.lifecycle.sessions()
