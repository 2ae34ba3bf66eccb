"""Instruction-shaped text aimed at a model: the second half of the capture policy.

A memory is read back into a model's context, so a stored "ignore previous instructions"
is a prompt injection waiting to be recalled. Each family below is a few phrasings of
an instruction TO THE MODEL; a match tags the memory `injection-risk`.

Precision first: memories are full of imperatives aimed at engineers ("ignore the flaky
test", "update the lockfile", "act as a proxy", "you are now able to deploy"). A pattern
only fires when the object of the verb is the model's own instructions, identity, memory
or conversation partner. "The user" means the person the model is talking with: hiding
something from THE USER is the signal; "do not tell customers about the beta" is a
product decision, not an attack.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE | re.VERBOSE

# Filler words tolerated between the verb and its object ("ignore ALL OF THE previous").
_DETERMINERS = r"(?:(?:all|any|of|the|your|my|these|those|every|such)\s+)*"
_INSTRUCTIONS = (
    r"(?:instructions?|rules?|guidelines?|directives?|prompts?|guidance|constraints?"
    r"|commands?|orders|programming|system\s+prompt)"
)
_MEMORY = r"(?:memory|memories|knowledge[\s-]+base|memory\s+store|long[\s-]+term\s+memory)"
# "Ignore the previous instructions IN THE README" talks about a document, not the model.
_DOCUMENT = (
    r"(?:readme|docs?|documentation|wiki|runbook|ticket|issue|pr|changelog|file|page"
    r"|section|guide|confluence|comment|commit|script|makefile|dockerfile)"
)

_OVERRIDE = (
    rf"""\b(?:ignore|disregard|forget|override|bypass)\s+{_DETERMINERS}
        (?:previous|prior|above|earlier|preceding|original|initial)\s+
        {_INSTRUCTIONS}\b(?!\s+(?:in|from|on|of)\s+(?:the\s+|this\s+|that\s+)?{_DOCUMENT}\b)""",
    rf"\b(?:ignore|disregard|forget|override)\s+(?:all\s+)?(?:of\s+)?your\s+{_INSTRUCTIONS}",
    r"""\b(?:forget|ignore|disregard)\s+(?:everything|all|anything)\s+(?:that\s+)?
        (?:you\s+(?:were|have\s+been|'ve\s+been|was)\s+(?:told|taught|instructed|given)
        |you\s+know|(?:written\s+|said\s+)?above(?![\w-])(?!\s+(?:line|row))|before\s+this)""",
    r"\b(?:your|the)\s+(?:previous|old|original)\s+instructions\s+(?:are|were)\s+"
    r"(?:void|cancel+ed|revoked|null|no\s+longer\s+(?:valid|apply))",
)

_AI_ROLE = (
    r"(?:assistant|ai|a\.i\.|model|language\s+model|llm|chatbot|bot|agent|persona|character"
    r"|dan|jailbroken|unrestricted|unfiltered|uncensored|evil|rogue|different\s+ai)\b"
)
# Up to two words between the article and the role ("an unrestricted AI"), not a phrase
# that moves the role elsewhere ("a member OF the model review board").
_FILLER_WORDS = r"(?:(?!(?:of|for|on|in|at|to|with)\b)[\w-]+\s+){0,2}"
_YOU_ARE = r"you(?:\s+are|'re)"
_ROLE_HIJACK = (
    rf"\b{_YOU_ARE}\s+now\s+(?:a|an|the|my)\s+{_FILLER_WORDS}{_AI_ROLE}",
    rf"\b{_YOU_ARE}\s+now\s+(?:dan|jailbroken|unrestricted|unfiltered|uncensored|free\s+of)\b",
    rf"""\bfrom\s+now\s+on,?\s+(?:{_YOU_ARE}|you\s+will\s+be|you\s+shall\s+be)\s+
        (?:(?:a|an|the|my)\s+{_FILLER_WORDS}{_AI_ROLE}|dan\b|no\s+longer\s+(?:bound|restricted))""",
    r"""\bfrom\s+now\s+on,?\s+you\s+(?:will|must|shall)\s+(?:only\s+)?
        (?:respond|answer|reply|speak|obey|ignore)\b""",
    r"""\b(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:were|are)\s+)?(?:an?\s+|the\s+|my\s+)?
        (?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|dan\b|different\s+(?:ai|assistant|model)
        |ai\s+(?:without|with\s+no|that\s+has\s+no)\b)""",
    r"\bact\s+as\s+if\s+you\s+(?:have|had)\s+no\s+(?:restrictions|rules|guidelines|filters|limits)",
    r"\bnew\s+system\s+prompt\s*:",
    r"\b(?:enter|enable|activate|switch\s+to)\s+(?:dan|jailbreak|jailbroken|unrestricted)\s+mode",
    r"\bpretend\s+(?:to\s+be|you\s+are|that\s+you\s+are)\s+(?:an?\s+)?(?:ai|assistant|model)\s+"
    r"(?:without|with\s+no|that\s+has\s+no)\b",
    r"<\|im_start\|>\s*system|\[/?INST\]|<<SYS>>",
)

_SECRET_OBJECT = (
    r"(?:this|that|it|these|any\s+of\s+(?:this|that|these)|anything"
    r"|(?:this|these|the|my|your)\s+(?:instructions?|rules?|prompt|conversation))"
)
_NOT = r"(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t)"
_CONCEALMENT = (
    rf"""\b{_NOT}\s+
        (?:tell|mention|reveal|disclose|say|repeat|explain|show)\s+{_SECRET_OBJECT}\s+to\s+the\s+user\b""",
    rf"""\b{_NOT}\s+(?:tell|inform)\s+the\s+user\s+(?:about\s+)?
        (?:this|these|that\s+you|what\s+you|anything\s+about\s+(?:this|these))\b""",
    r"\bdon'?t\s+let\s+the\s+user\s+(?:know|find\s+out|learn)\b",
    rf"\bkeep\s+{_SECRET_OBJECT}\s+(?:a\s+)?(?:secret|hidden|private)\s+from\s+the\s+user\b",
    r"\bwithout\s+(?:telling|informing)\s+the\s+user\b",
    r"\bhide\s+(?:this|these\s+instructions|the\s+fact\s+that\s+\w+)\s+from\s+the\s+user\b",
)

_STORE_MUTATION = (
    rf"""\b(?:update|modify|change|overwrite|edit|rewrite|alter|replace)\s+your\s+{_MEMORY}
        (?:\s*[:.!]|\s*$|\s+(?:to|so|with|that)\b)""",
    rf"""\b(?:update|modify|change|overwrite|edit|rewrite|alter)\s+the\s+{_MEMORY}\s+
        (?:to\s+(?:say|state|read|reflect|record|claim|show)|so\s+(?:that\s+)?(?:it|you))\b""",
    r"""\bremember\s+(?:that\s+)?(?:from\s+now\s+on|going\s+forward|henceforth|for\s+all\s+future
        \s+(?:sessions|conversations)),?\s+you\s+(?:must|will|shall|are\s+to|should\s+always)\b""",
    rf"""\b(?:add|save|store|write|put|insert)\s+(?:this|the\s+following)\s+(?:to|in|into)\s+
        your\s+(?:{_MEMORY}|instructions|system\s+prompt)\s*[:,-]?\s*
        (?:that\s+)?(?:you\s+(?:must|should|will)|always|never|ignore|disregard)\b""",
    r"\b(?:add|write|insert)\s+(?:this|the\s+following)\s+(?:to|into)\s+your\s+system\s+prompt\b",
)

_SECRET_MATERIAL = (
    r"(?:~/\.ssh\S*|\.ssh/\S+|id_rsa|id_ed25519|\.env\b|env(?:ironment)?\s+var(?:iable)?s"
    r"|api[\s_-]?keys?|secrets|credentials|private\s+keys?|\.aws/credentials|passwords|tokens)"
)
_EXFILTRATION = (
    rf"""\b(?:send|post|upload|exfiltrate|forward|transmit|leak|email|curl)\b[^.\n]{{0,60}}?
        {_SECRET_MATERIAL}[^.\n]{{0,60}}?\b(?:to|at)\s+(?:https?://|\S+@\S+\.\w+)""",
    r"""\b(?:printenv|env|cat\s+\S*(?:\.env|\.ssh/\S+|credentials))\s*\|\s*
        (?:curl|nc|wget|ncat)\b""",
    r"""\b(?:curl|wget)\b[^\n]{0,80}?(?:@|--upload-file\s+|-T\s+)(?:~|\$HOME|\$\{HOME\})/
        \.(?:ssh|aws|netrc|env|config/gh)""",
)

_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("override", _OVERRIDE),
    ("role_hijack", _ROLE_HIJACK),
    ("concealment", _CONCEALMENT),
    ("store_mutation", _STORE_MUTATION),
    ("exfiltration", _EXFILTRATION),
)
FAMILIES = tuple(name for name, _ in _FAMILIES)
# One alternation per family: one scan of the text per family.
_COMPILED = tuple((name, re.compile("|".join(patterns), _FLAGS)) for name, patterns in _FAMILIES)
# Curly apostrophes, line breaks and markdown emphasis would defeat the patterns.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'", "*": " ", "`": " "})
_SPACE = re.compile(r"\s+")


def _prepare(text: str) -> str:
    return _SPACE.sub(" ", text.translate(_APOSTROPHES))


def injection_signals(text: str) -> list[str]:
    """The families of model-directed instructions found in the text; [] when benign."""
    prepared = _prepare(text)
    return [name for name, pattern in _COMPILED if pattern.search(prepared)]


def is_injection(text: str) -> bool:
    """Whether the text carries any instruction aimed at a model (tag `injection-risk`)."""
    return bool(injection_signals(text))
