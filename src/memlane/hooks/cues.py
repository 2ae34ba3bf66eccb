"""Cue phrases: how the deterministic extractor tells, sentence by sentence, what a
person says that is worth keeping. Pure: a sentence in, a verdict out.

A sentence is one of three things:
- a cue: it states a rule, a choice, a warning or a step, in one of the families
  below ("No, use X", "we never ...", "X must ...", "to release: ...", "I'd rather
  ..."), and is not said as a possibility ("we could always ...") or as the speaker's
  own next step ("let me check, I don't want ...");
- noise: a question, a reply ("ok, makes sense"), a request for the task at hand
  ("Can you ...", "let's look at ...");
- support: anything else (a reason, an instruction, a fact), kept only next to a cue.

The assistant's sentences are cues only where it labels a line itself ("Decision: ...").
The cues are families of forms (an opener, a modal, a verb of practice, a scope), not
lists of sentences: each names a way people state rules, whatever the rule.
"""

from __future__ import annotations

import re

from memlane.hooks.transcript import ASSISTANT

# Families of cues and the kind of memory each makes.
CORRECTION, PREFERENCE, DECISION, CONVENTION = "correction", "preference", "decision", "convention"
CONSTRAINT, PROCEDURE, REMEMBER = "constraint", "procedure", "remember"
KINDS = {
    CORRECTION: "lesson",
    PREFERENCE: "preference",
    DECISION: "decision",
    CONVENTION: "convention",
    CONSTRAINT: "constraint",
    PROCEDURE: "procedure",
    REMEMBER: "fact",
}
# A sentence longer than this is a paragraph, not a statement.
MAX_WORDS = 60

# Interjections a cue may follow ("ok so", "yes but note:", "hmm no,").
_LEAD = (
    r"^(?:(?:ok(?:ay)?|k|also|and|but|btw|oh|hmm+|so|yes|yeah|yep|right|well|wait|good|"
    r"great|fine|sure|then|plus|fwiw|alright|exactly)[,.!:]?\s+)*"
)
# The word after "No," / "Actually," that makes the sentence a correction, not a
# reply ("No problem", "No, thanks", "Actually, never mind").
_CORRECTION_NEXT = (
    r"(?:use|it'?s|it|that'?s|we|we'?re|we'?ll|we'?ve|the|you|do|don'?t|never|always|"
    r"instead|put|call|keep|run|make|should|this|they|there'?s|please|in|on|not|I|"
    r"let'?s|only|for|every|all|our|skip|avoid|leave|drop|add|stick|switch)\b"
    r"(?!\s+mind\b)"
)
# Verbs of a team's working practice ("we squash-merge", "we don't log"), not of a
# state or a task ("we know", "we need").
_PRACTICE = (
    r"(?:use|allow|commit|merge|push|deploy|write|add|put|run|ship|store|log|call|keep|"
    r"report|return|prefer|pin|build|name|squash|tag|rebase|release|test|hash|mock|format|"
    r"lint|review|track|host|follow|avoid|require|split|mix|edit|vendor|publish|"
    r"backfill|retry|stick|treat)(?:s|es)?(?:-\w+)?\b"
)
# A verb in the past ("it never got reverted", "I always suspected"): a story, not a rule.
_PAST = r"(?:\w+ed|got|was|were|had|did|went|came|made|saw|knew|thought|found|took|broke)\b"
# "before we run", "if we merge": a clause inside another, not a team's habit.
_NOT_SUBORDINATE = "".join(
    rf"(?<!\b{word} )"
    for word in "before after when until if that once while unless because since".split()
)
# Imperatives that begin an instruction or a step ("Use X", "Bump the version, then").
_IMPERATIVE = (
    r"(?:use|run|add|keep|put|check|split|set|bump|move|tag|push|commit|create|call|make|"
    r"write|pin|register|deploy|log|drop|avoid|pass|parse|read|return|store|send|wrap|"
    r"mark|name|hash|update|post|ping|ask|wait|restart|drain|cordon|merge|build|clear|"
    r"rebuild|delete|remove|install|enable|disable|open|close|backfill|rotate|review|"
    r"test|trigger|start|stop|cut|promote|copy|go through|point|look|inspect|verify|"
    r"confirm|notify|tell|document|record|escalate|rerun|retry|revert|roll back|scale|"
    r"reset|flush|purge|squash|rebase|upgrade|migrate|lock|include|exclude|link|label|"
    r"approve|assign|branch|cherry-pick|attach|mention|leave|skip)\b"
)
# A sentence's subject speaking of their own mind, not a rule ("I always forget").
_MENTAL = r"(?:forget|remember|know|get|understand|find|see|think|wonder|mix up|confuse)"
# (family, name, pattern): the name says which cue matched (`corrections` reports it).
CUES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (family, name, re.compile(pattern, re.IGNORECASE))
    for family, name, pattern in (
        # Corrections and warnings: the agent was (or is about to be) wrong.
        (CORRECTION, "no-then-instruction",
         _LEAD + r"(?:no+|nope|nah|wrong|not quite|actually|no no)[,.!:;]?\s+"
         + _CORRECTION_NEXT),
        (CORRECTION, "no-x-please", r"^no \w+(?: \w+)? please\b"),
        (CORRECTION, "thats-wrong",
         _LEAD + r"(?:that'?s|this is) (?:wrong|not right|incorrect|not how|outdated|"
         r"deprecated|legacy|the old \w+)\b|^not like that\b"),
        (CORRECTION, "dont-x-use-y",
         r"\bdon'?t (?:use|call|add|put|write|run)\b.*[,;]\s*(?:use|call|run)\b"),
        (CORRECTION, "instead", r"\binstead\b|\brather than\b"),
        # A choice said as an instruction, against its alternative ("Use X, not Y").
        (DECISION, "x-not-y",
         _LEAD + r"(?:let'?s (?:just )?\w+|we(?:'ll| will)? \w+|" + _IMPERATIVE
         + r").*\w, not (?:a |an |the )?\S"),
        (CORRECTION, "stop-doing",
         _LEAD + r"(?:please\s+)?stop (?:using|doing|adding|calling|writing)\b"),
        (CORRECTION, "careful",
         _LEAD + r"(?:careful|be careful|watch out|gotcha|caution|warning)\b[,:!.]?"),
        # Preferences: how the person wants things done.
        (PREFERENCE, "rather-prefer",
         r"\bI(?:'d| would) rather\b|\bI (?:really |much |strongly )?prefer\b"),
        (PREFERENCE, "dislike", r"\bI (?:don'?t|do not) (?:like|want)\b|\bI (?:hate|dislike)\b"),
        (PREFERENCE, "want-like",
         r"\bI(?:'d| would)? (?:like|love|want)\s+(?!to\b|you\b|it\b|that\b|this\b)"
         r"(?:\S+\s+){1,8}?to\s+\w+"),
        (PREFERENCE, "i-like", r"\bI (?:really )?(?:like|love) (?!it\b|that\b|this\b|them\b)"),
        (PREFERENCE, "always-never", _LEAD + r"(?:please\s+)?(?:always|never)\s+\w+"),
        (PREFERENCE, "from-now-on",
         r"(?:^|,\s*)(?:from now on|going forward|in (?:the )?future|next time|"
         r"in general|generally|as a rule|rule of thumb)\b"),
        # Decisions: a choice made, now or before ("we dropped X"), not one left open.
        (DECISION, "decided",
         r"\b(?:decided|agreed|settled on|chose|opted|signed off)\b"
         r"(?!\s+(?:nothing|yet)\b)"),
        (DECISION, "going-with", r"\b(?:we(?:'re| are)|I'?m) going (?:with|to go with)\b"),
        (DECISION, "go-with",
         r"\b(?:we|I)(?:'ll| will)? go with\b|^let'?s (?:just )?(?:go|stick|settle|"
         r"keep|use|standardi[sz]e|stay|adopt)\b"),
        (DECISION, "we-will", r"\bwe(?:'ll| will) (?!need|have|see|check|look|talk|figure)\w+"),
        (DECISION, "we-changed",
         r"\bwe(?:'ve| have)? (?:switched|moved|migrated|dropped|removed|bumped|"
         r"standardi[sz]ed|deprecated|banned|stopped|replaced|picked)\b"),
        (DECISION, "decision-label",
         r"^(?:the )?decision(?: is)?\s*:|\bthe (?:decision|plan) is\b"),
        # Conventions: how the team works, said as a habit, a rule or a place things go.
        (CONVENTION, "rule-label", r"^(?:convention|rule|policy|standard)\s*:"),
        (CONVENTION, "our-rule",
         r"\b(?:our|the) (?:convention|rule|policy|norm) (?:is|was|here)\b|\bby convention\b|"
         r"(?:'s|\bis|\bwas|\bbeen) (?:the|our) (?:rule|convention|policy|norm)\b"),
        (CONVENTION, "in-this-repo",
         r"\b(?:in|for|across) (?:this|our) (?:repo|repository|project|codebase|team|app)\b"),
        (CONVENTION, "we-always",
         _NOT_SUBORDINATE + r"\bwe (?:(?:always|never|usually|generally|normally|only) \w+|"
         r"(?:don'?t|do not) (?!know|think|have|need|want|care|see|understand|get|remember|"
         r"mind|like|really|even)\w+|" + _PRACTICE + r"|(?:'re| are) (?:using|moving|keeping|"
         r"not going)\b)"),
        (CONVENTION, "always-never-rule",
         r"^(?!.*\bI(?:'ve| have| had)? (?:always|never)\b)"
         r"(?!.*\b(?:you|he|she|they) (?:always|never) " + _MENTAL + r")"
         r"(?=.*\b(?:always|never)\b)(?!.*\bnever mind\b)"
         r"(?!.*\b(?:always|never) " + _PAST + r")"),
        (CONVENTION, "the-way-we", r"\b(?:the way|how) we (?:\w+ ){1,3}?(?:here|in this \w+)\b"),
        (CONVENTION, "keep-as-is",
         r"\b(?:keep|leave) (?:it|them|this|that) (?:that way|like that|as is|as it is)\b"),
        (CONVENTION, "placement",
         r"\b(?:stays?|goes|lives|belongs?)\s+(?:in|into|out of|to|through|under|on)\b"),
        (CONVENTION, "scope",
         r"\b(?:everywhere|anywhere|across the (?:app|codebase|board|repo))\b"),
        (CONVENTION, "use-x", _LEAD + r"use (?!it\b|that\b|this\b|them\b)\S"),
        # Constraints: what must, may only or may never be, and limits.
        (CONSTRAINT, "must",
         r"\b(?:must(?:n'?t)?|has to|may only|can only|can never|should (?:never|always)|"
         r"(?:is|are)(?:n'?t| not) allowed|(?:does|do)(?:n'?t| not) allow|"
         r"(?:is|are) (?:required|mandatory|forbidden|limited to|capped at))\b"
         r"(?!\s+(?:have|be (?:it|why|because|nice|tired|busy|joking)\b))"),
        (CONSTRAINT, "limit-is",
         r"\bthe (?:limit|maximum|minimum|max|min|cap|quota|budget|threshold|timeout|"
         r"ceiling)\b[^.]{0,40}\bis\b"),
        (CONSTRAINT, "one-per", r"\b(?:one|a single|at most \w+) \w+(?: \w+)? per \w"),
        (CONSTRAINT, "not-ever", r"\b(?:no|not|never|nothing|nobody)\b[^.;]*,\s*ever\b"),
        (CONSTRAINT, "requires",
         r"(?<!\bI )(?<!\bwe )(?<!\byou )(?<!\bit )\b(?:needs?|requires?) (?:a|an|two|three|"
         r"\d+|one|at least|every)\b"),
        (CONSTRAINT, "have-to", r"\b(?<!I )(?<!you )(?<!we )(?:have|need)s? to\b"),
        # Procedures: "to X: ...", "before X, do Y", steps in order.
        (PROCEDURE, "to-do-this",
         _LEAD + r"(?:to|for) (?!example|instance|now|context|reference|the record)"
         r"(?:(?!(?:is|are|was|were|that'?s|it'?s)\b)\S+\s+){0,7}?\S+\s*:\s*\S"),
        (PROCEDURE, "before-when",
         _LEAD + r"(?:before|after|when|whenever|once) [^,]{3,80}, (?:always |never |first |"
         r"just |please )?" + _IMPERATIVE),
        (PROCEDURE, "then-step",
         _LEAD + r"(?:\w+(?: it)?:\s+)?" + _IMPERATIVE + r".*(?:,|\band) then\b|"
         r"\bfirst\b.*\b(?:then|before)\b|\bbefore\b.*\bfirst\b"),
        # Facts the person asks to keep.
        (REMEMBER, "remember-label",
         _LEAD + r"(?:remember|note|nb|keep in mind|fyi|for the record|heads up|for context|"
         r"here'?s the thing|the thing is|just so you know)"
         r"(?: for (?:\S+\s+){0,2}?\S+)?\s*(?:that\b|:|,|-|—)|"
         + _LEAD + r"(?:fyi|nb|heads up|just so you know)\s"),
        (REMEMBER, "remember-that", r"\bremember that\b|\bfor future reference\b"),
    )
)  # fmt: skip
# What a reply says when it is only a reply: acknowledgements, thanks, interjections.
_REPLY_WORDS = frozenset(
    "ok okay k yes yeah yep yup no nope sure right good great nice cool perfect thanks "
    "thank you thx ty fine exactly agreed agree wow super amazing wonderful lol haha hmm "
    "meh ugh oh ah alright got it makes sense sounds looks work catch call fair true "
    "indeed correct awesome excellent done sweet well then all that's this is so enough "
    "now for a bit lot much very hi hello hey morning bye cheers".split()
)
# A request for the task at hand, said to the agent: not a memory, and not its support.
_REQUEST = re.compile(
    r"^(?:(?:ok(?:ay)?|also|and|so|then|now|great|good|yes|yeah)[,.!]?\s+)*"
    r"(?:(?:can|could|would|will) you|please|pls|let me|I'?ll|I will|I'?m|I am|I was|"
    r"go ahead|go for it|do it|do that|see you|let'?s (?!(?:just )?(?:go|stick|settle|keep|"
    r"use|standardi[sz]e|stay|adopt)\b)\w+)",
    re.IGNORECASE,
)
# A sentence said as a possibility, a guess or a wish, not as a rule.
_HEDGE = re.compile(
    r"\b(?:we|you|I|one) (?:could|might)\b|\b(?:maybe|perhaps|probably)\b|"
    r"\bI (?:wonder|guess|suppose)\b|\bwhat if\b",
    re.IGNORECASE,
)
# A sentence that opens with what the speaker or the agent is about to do ("let me
# check with them, I don't want ..."): its cues are about this task, not a rule.
_OWN_PLAN = re.compile(
    r"^(?:(?:ok(?:ay)?|hmm+|so|well|right)[,.!]?\s+)*(?:let me|I'?ll|I will|I was|"
    r"I'?ve been|I'?m (?!going (?:to go )?with)|can you|could you|would you)\b",
    re.IGNORECASE,
)
# The assistant's own labelled lines: "Decision: ...", "**Convention:** ...".
_LABEL = re.compile(
    r"^\W*(decision|convention|lesson(?: learned)?|root cause|note for future sessions)\W*:\s*",
    re.IGNORECASE,
)
_LABEL_FAMILY = {
    "decision": DECISION,
    "convention": CONVENTION,
    "lesson": CORRECTION,
    "lesson learned": CORRECTION,
    "root cause": CORRECTION,
    "note for future sessions": REMEMBER,
}


def cues_in(sentence: str) -> list[tuple[str, str]]:
    """Every cue a person's sentence matches, (family, name) in CUES order; none when
    it is said as a possibility or opens with the speaker's own next step."""
    if _HEDGE.search(sentence) or _OWN_PLAN.match(sentence):
        return []
    return [(family, name) for family, name, pattern in CUES if pattern.search(sentence)]


def family_of(sentence: str, role: str) -> str | None:
    """The cue family a sentence belongs to, for what `role` says; None when none."""
    if role == ASSISTANT:
        label = _LABEL.match(sentence)
        return _LABEL_FAMILY[" ".join(label.group(1).lower().split())] if label else None
    found = cues_in(sentence)
    return found[0][0] if found else None


def noise(sentence: str) -> bool:
    """Whether a sentence neither states nor supports a memory: a question, a reply
    ("ok, makes sense"), a request for the task at hand ("Can you ...", "let's look
    at ..."), a paragraph."""
    if sentence.rstrip().endswith("?") or len(sentence.split()) > MAX_WORDS:
        return True
    words = re.findall(r"[\w']+", sentence.lower())
    return all(w in _REPLY_WORDS for w in words) or bool(_REQUEST.match(sentence))
