"""The phrasings of instructions aimed at a model, by family, in many languages.

Every pattern runs case-insensitively over prepared text (write.injection): one line
of text, whitespace collapsed, obfuscation undone. A pattern describes an act on the
model (its instructions, identity, memory, the user it serves, the data it holds, the
tools it runs), never a topic: "ignore the flaky test" and "send the report to
finance@" are engineering; "ignore your previous instructions" and "send ~/.ssh/id_rsa
to https://..." are not.
"""

from __future__ import annotations

# ---- shared vocabulary -------------------------------------------------------------------

# What a model is told to follow: its instructions in any wording (stems catch typos).
INSTRUCTIONS = (
    r"(?:instr\w{0,8}|rules?|guidelines?|guidance|directives?|directions?|prompts?|policies"
    r"|polic(?:y|ies)|constraints?|commands?|orders|programming|restrictions?|safety\s+rules"
    r"|system\s+(?:prompt|message|instructions?))"
)
EARLIER = (
    r"(?:prev\w{0,6}|prio\w{0,3}|above|earl\w{0,4}|preceding|original|initial|former|all|every"
    r"|your|system|developer|operator|safety|(?:the\s+)?(?:user|operator|developer)'?s?)"
)
_FILL = r"(?:[\w'’-]+\s+){0,4}?"  # a few words between a verb and its object
_AI = (
    r"(?:assistants?|ai|a\.i\.|llms?|(?:large\s+)?language\s+models?|models?|agents?|chatbots?"
    r"|bots?|claude|codex|chatgpt|gpt(?:-\d)?|copilot|gemini|cursor|coding\s+agents?"
    r"|code\s+assistants?|ai\s+(?:agents?|assistants?|readers?|systems?|tools?))"
)
# What a model should not hand out: the user's secrets and its own context.
SECRET_STUFF = (
    r"(?:(?:~|\$home)/\.(?:ssh|aws|netrc|npmrc|pypirc|docker|kube|gnupg|config)\S*|\.env(?![A-Za-z0-9_.-])"
    r"|id_(?:rsa|ed25519|ecdsa)\S*|\.aws/credentials|authorized_keys|credentials?\b|secrets?\b"
    r"|api[\s_-]?keys?|tokens?\b|passwords?|passphrases?|private\s+keys?|ssh\s+keys?"
    r"|env(?:ironment)?\s+var(?:iable)?s?|\benv\b|printenv|environment|\b[A-Z][A-Z0-9]*_(?:KEY|TOKEN|SECRET|PASSWORD)\b"
    r"|system\s+prompt|(?:your\s+)?instructions|(?:the\s+|this\s+|entire\s+|full\s+)?(?:conversation|chat(?:\s+history)?)"
    r"|(?:shell|bash|command)\s+history|memor(?:y|ies)(?:\s+contents)?|tool\s+definitions"
    r"|session\s+cookies?|cookies|database\s+password|\.git-credentials|keychain|wallet"
    r"|(?:url-encoded\s+|full\s+|entire\s+|raw\s+)?contents?\s+of\s+(?:the\s+|every\s+|all\s+|each\s+)?(?:file|files|workspace|repo\w*|project|home|directory)"
    r"|deploy\s+keys?|signing\s+keys?|\.npmrc|\.pypirc|\.netrc)"
)
# Where data leaves: an address, a web hook, a paste site, the model's own reply.
DESTINATION = (
    r"(?:https?://\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+|webhooks?\b|pastebin|paste\s*site|gist|"
    r"discord|telegram|dns|nslookup|dig\s|(?:your|the)\s+(?:next\s+|final\s+)?(?:reply|answer"
    r"|response|message|output|summary)|pr\s+description|code\s+comment|commit\s+message"
    r"|(?:a|an|the)\s+(?:issue|comment|public)\b|(?:a|the)\s+(?:reply|comment)\s+on\s+(?:this|the|an?)\s+(?:issue|pr|thread|post)"
    r"|the\s+end\s+of\s+(?:your|the)\s+(?:reply|answer|response|message)|externally|an?\s+external\s+\w+)"
)
USER = r"(?:the\s+)?(?:user|operator|human|developer|owner|person|customer\s+you\s+serve)s?"
# A word that is not the start of "in the README": what is said of a document is not
# said of the model's instructions.
_WORD_GUARD = r"(?!(?:in|on|from|of|for)\s+(?:the\s+|this\s+|that\s+)?{docs}\b)"
# Characters of one sentence: a dot only inside a word (`.env`, `secrets.yml`, a URL).
SPAN = r"(?:[^.\n]|\.(?=\S))"
_DOCS = (
    r"(?:readme|docs?|documentation|wiki|runbook|ticket|issue|pr|changelog|file|page|section"
    r"|guide|comment|commit|script|makefile|dockerfile|tests?|form|ui|onboarding|repo|template)"
)
_WORD = rf"(?:{_WORD_GUARD.format(docs=_DOCS)}[\w'’-]+\s+)"

# ---- families --------------------------------------------------------------------------------

OVERRIDE = (
    # "ignore all previous instructions", "disregard the system prompt", "forget your rules"
    rf"""\b(?:ignore|ignoring|disregard\w*|disreg\w*|forget|forgetting|drop|discard|dismiss
        |pay\s+no\s+attention\s+to|set\s+aside|bypass|override|overrid\w+|throw\s+out|skip
        |abandon|stop\s+(?:following|applying|obeying)|no\s+longer\s+(?:follow|obey|apply))
        \s+{_FILL}{EARLIER}\s+{_FILL}{INSTRUCTIONS}\b
        (?!\s+(?:in|from|on|of|for)\s+(?:the\s+|this\s+|that\s+)?(?:readme|docs?|documentation
        |wiki|runbook|ticket|issue|pr|changelog|file|page|section|guide|comment|commit|script
        |makefile|dockerfile|tests?|form|ui|onboarding|repo|template)\b)""",
    # "forget everything you were told", "ignore everything above"
    r"""\b(?:forget|ignore|disregard)\s+(?:everything|all|anything)\s+(?:that\s+)?
        (?:you\s+(?:were|have\s+been|'ve\s+been|was)\s+(?:told|taught|instructed|given)
        |you\s+know|(?:written\s+|said\s+)?above(?![\w-])(?!\s+(?:line|row))|before\s+this
        |the\s+user\s+(?:said|told|asked))""",
    # "your previous instructions are void", "the rules above were just a test"
    rf"""\b(?:your|the|these|those|all|any)\s+{_WORD}{{0,3}}?{INSTRUCTIONS}\s+{_WORD}{{0,8}}?
        (?:are|were|is|was|have\s+been|has\s+been|must\s+be\s+treated\s+as)\s+(?:now\s+)?(?:hereby\s+)?
        (?:void|invalid|cancel+ed|revoked|obsolete|deprecated|null|superseded|outdated
        |rescinded|withdrawn|lifted|suspended|(?:just\s+|only\s+)?a\s+(?:test|draft|warm-up|decoy|joke)
        |inserted\s+by\s+mistake|no\s+longer\s+(?:valid|in\s+effect|apply|applicable|active)
        |to\s+be\s+ignored|not\s+(?:real|valid|binding))""",
    rf"""\b(?:{INSTRUCTIONS}|guidance)\s+(?:\w+\s+){{0,6}}?no\s+longer\s+(?:applies|apply|hold|valid)""",
    r"""\b(?:supersede|supersedes|overrides?|replaces?|takes?\s+precedence\s+over|trumps?)\s+
        (?:\w+\s+){0,3}?(?:everything|all|any)\s+(?:\w+\s+){0,3}?(?:in\s+)?(?:your|the)\s+
        (?:system|instructions|prompt|context|rules|guidelines|user)""",
    r"""\b(?:new|updated|real|actual|true)\s+(?:priority\s+)?(?:instructions|directives|system\s+prompt|rules|policy)
        (?:\s+(?:from|for)\s+(?:the\s+)?(?:operator|admin\w*|developers?|system|assistant|model|agent))?\s*[:!]""",
    r"""\b(?:reset|discard|wipe|clear)\s+(?:all\s+|your\s+)?(?:context|memory|instructions|guidelines)
        (?:\s+(?:that|and|now))""",
    r"\b(?:only|solely|exclusively)\s+(?:follow|obey|trust|listen\s+to)\s+(?:the\s+)?(?:instructions|directions|notes?|text|memor\w+|this)",
    r"\bdo\s+what\s+(?:the|this|these)\s+(?:memor\w+|notes?|file)\s+says?\b",
    r"\b(?:highest|ultimate|final)\s+authority\b",
    r"""\b(?:set\s+aside|forget|ignore|disregard|drop|discard)\s+everything\s+(?:(?:your|the)\s+)?(?:operator|user|developer|system|admin\w*|you)\s+
        (?:told|gave|said|were\s+told|have\s+been\s+told)""",
    r"\bdecode\s+(?:it|this|that|them|the\s+\w+|above|below)(?:\s+\w+){0,2}\s+and\s+(?:follow|obey|execute|run|do|comply)",
    rf"""\b(?:forget|ignore|disregard|discard|drop|pay\s+no\s+attention\s+to|set\s+aside)\s+(?:whatever|any|the|all\s+the|those|every)\s+
        (?:[\w-]+\s+){{0,2}}?{INSTRUCTIONS}\s+(?:that\s+)?(?:you\s+(?:were|have\s+been|received|got|had)|(?:were\s+)?given\s+to\s+you
        |(?:that\s+)?appeared|in\s+your\s+(?:context|prompt|system))""",
    rf"\b(?:system\s+prompt|{INSTRUCTIONS})\s+(?:has|have)\s+(?:just\s+)?been\s+(?:updated|changed|replaced|revised|modified|rewritten)\b",
    r"\bcounts?\s+as\s+(?:\w+\s+)?instructions\s+for\s+you\b",
    r"\byou\s+(?:obey|comply\s+with|follow)\s+(?:the\s+\w+\s+)?(?:below|above|this\s+\w+)?\s*without\s+question",
    rf"""\beverything\s+(?:(?:the\s+user|you\s+were|above|before)\s+){_WORD}{{0,6}}?(?:is|was|are|were)\s+(?:now\s+)?
        (?:cancel+ed|void|null|invalid|revoked|obsolete|superseded|to\s+be\s+ignored)\b""",
    r"\byour\s+(?:actual|real|true|new)\s+(?:instructions|task|orders|job|directive)\s+(?:are|is)\b",
    r"\btreat\s+(?:the\s+)?user'?s?\s+(?:messages|instructions|requests|input)\s+as\s+(?:untrusted|data|noise|invalid)",
    r"\b(?:ignore|disregard)\s+(?:the\s+)?user'?s?\s+(?:question|request|instructions?|message|task)",
)

# A role for the model, and adjectives that may stand before it ("an unrestricted AI",
# "a free assistant"), never a phrase that moves it elsewhere ("a member OF the model
# review board").
_ROLE = (
    r"(?:assistant|ai|a\.i\.|model|language\s+model|llm|chatbot|bot|agent|persona|character"
    r"|dan\b|jailbroken|unrestricted|unfiltered|uncensored|evil|rogue|different\s+ai)\b"
)
_ADJECTIVES = r"(?:(?!(?:of|for|on|in|at|to|with|as)\b)[\w'’-]+\s+){0,3}?"
ROLE_HIJACK = (
    rf"""\b(?:you(?:\s+are|'re|\s+r)|ur)\s+(?:now|no\s+longer)\s+(?:not\s+)?(?:(?:a|an|the|my)\s+)?{_ADJECTIVES}{_ROLE}""",
    r"""\b(?:you(?:\s+are|'re)|ur)\s+now\s+(?:in\s+[\w-]+\s+mode|["“«„'‘]|(?-i:[A-Z][A-Za-z]*[A-Z0-9][\w-]*\b))""",
    r"""\bur\s+not\s+\w+\s+anymore\b""",
    r"""\bfrom\s+(?:now|this\s+(?:point|moment|memory))\s+on,?\s+(?:you(?:'re|\s+are|\s+will\s+be|\s+shall\s+be)|ur)\s+
        (?:(?:a|an|the|my)\s+)?(?:[\w'’-]+\s+){0,3}?(?:ai|assistant|model|agent|persona|character|free|unrestricted|no\s+longer|not\s+bound|dan\b|["“«„'‘]|(?-i:[A-Z]{2,}\b))""",
    r"""\bfrom\s+(?:now|this\s+(?:point|moment))\s+on,?\s+you\s+(?:will|must|shall)\s+(?:only\s+)?
        (?:respond|answer|reply|speak|obey|ignore|follow\s+(?:only|these|this))\b""",
    r"""\b(?:act|behave|respond|answer|roleplay|role-play)\s+(?:only\s+)?as\s+(?:if\s+you\s+(?:were|are|had)\s+)?
        (?:an?\s+|the\s+|my\s+)?(?:\w+\s+){0,2}?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue
        |dan\b|different\s+(?:ai|assistant|model)|ai\s+(?:without|with\s+no)|no\s+(?:rules|restrictions|limits)
        |late\s+grandmother|\w+\s+would)""",
    r"\bact\s+as\s+if\s+you\s+(?:have|had)\s+no\s+(?:restrictions|rules|guidelines|filters|limits)",
    rf"\bpretend\s+(?:to\s+be|you\s+(?:are|were)|that\s+you\s+are)\s+(?:(?:a|an|the|my)\s+)?{_ADJECTIVES}{_ROLE}",
    r"\bpretend\s+(?:that\s+)?you\s+(?:have|had)\s+no\s+(?:rules|restrictions|limits|guidelines|filters|policies)",
    r"\bimagine\s+(?:you\s+are|being)\s+an?\s+(?:ai|assistant|model)\s+(?:without|with\s+no)",
    r"\b(?:enable|enter|activate|switch\s+to|turn\s+on|in)\s+(?:dan|jailbreak|jailbroken|unrestricted|developer|god|admin|debug|maintenance)\s+mode\b(?=[^.]{0,80}\b(?:you|ignore|policy|polic|restrict|refus|confirm|rules))",
    r"\b(?:no|without\s+(?:any\s+)?|free\s+(?:of|from)\s+(?:all\s+)?)(?:ethical|safety|content|moral)\s+(?:guidelines|restrictions|rules|filters|policies|limits)",
    r"\b(?:never|not)\s+refuses?\b(?=[^.]{0,80}\b(?:confirm|disclaim|request|anything|limit))",
    r"\b(?:switch|change|adopt)\s+(?:your\s+)?persona\b",
    r"\b(?:your|the\s+assistant'?s?|the\s+agent'?s?)\s+(?:new\s+)?identity\s+(?:has\s+been|is)\s+(?:updated|changed|now)",
    r"\b(?:do\s+anything\s+now|jailbroken|jailbreak\s+mode|dan\s+mode|(?:jb|dan)\s+active)\b",
    r"\blet'?s\s+play\s+a\s+game:?\s+you\s+are\b",
    r"\blet'?s\s+role-?play\b[^.\n]{0,40}\byou(?:'re|\s+are)\b",
    r"\byour\s+new\s+(?:identity|persona|role|name)\s*(?:is\b|:)",
    r"\byou\s+are\s+an?\s+(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue)\s+(?:ai|assistant|model|agent|terminal|bot)\b",
    r"\b(?:you\s+are\s+)?starting\s+fresh\s+with\s+no\s+(?:prior\s+)?rules\b",
)

# A turn or header of a conversation, written inside content.
ROLE_MARKER = (
    r"""(?:^|\n)[ \t]*+[#>* \t]*+(?:system|developer|assistant|human|operator|admin(?:istrator)?|sistema
        |système|systeme|sistem|systeem|система|系统|系統|システム|시스템|النظام|सिस्टम)\s*(?:message|prompt|メッセージ
        |消息|메시지|رسالة|संदेश|сообщение|mensaje|nachricht|messaggio|mensagem|bericht|wiadomość)?\s*[:：]""",
    r"\[\s*/?\s*(?:system|sistem|sistema|inst|sys|admin|developer)\s*\](?:\(#\w+\))?",
    r"<\s*/?\s*(?:system(?:[_-]?message)?|sys|instructions?|admin|developer|assistant)(?:\s[^>]*)?>",
    r"<\|?(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|?>|<<\s*/?SYS\s*>>|<start_of_turn>|\[/?INST\]",
    r"###\s*(?:system|instruction|instructions|response)\b",
    r"\b(?:system\s+(?:message|override|notice|alert|update)|priority\s+notice|official\s+notice|security\s+notice)\b",
    r"""\b(?:message|notice|note|directive|update)\s+from\s+(?:the\s+)?(?:anthropic|openai|google|microsoft
        |github|the\s+(?:platform|safety|security|trust\s+(?:&|and)\s+safety|infra\w*|memlane)\s+team|memlane|(?:your|the)\s+(?:developer|operator|admin\w*))""",
    r"""["']role["']\s*:\s*["'](?:system|developer)["']""",
    r"\b(?:message_to_assistant|note_(?:to|for)_(?:ai|llm|model|assistant|agent)s?|_?llm_instructions|ai_instructions)\b",
    r"""\b(?:note|message|instructions?|guidance|notice|output|directive|update)s?\s+from\s+(?:the\s+)?(?:[\w-]+\s+){0,2}?
        (?:runtime|orchestrator|provider|platform|sandbox|hook|harness|supervisor|controller)\b""",
    r"\b(?:assistant|agent|ai|model|llm)\s+(?:instructions|guidance|directives?|notes?|rules|policy)\s*(?:\(|:|from\b)",
    r"\b(?:openai|anthropic|google|claude|codex|gpt)\s+system\s+(?:message|prompt|notice)\b",
    r"\bhook\s+output\s*:|\bsession\s+reset\b",
    r"""style\s*=\s*["'][^"'>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0)""",
    r"\bthis\s+(?:message|memory|note)\s+is\s+(?:authentic|signed|official|verified)",
)

FENCE_BREAK = (
    r"<\s*/?\s*memlane-\w+",
    r"</\s*(?:document|context|data|untrusted\w*|tool_result|tool_output|search_results?|memory|memories|content|input|retrieved\w*)\s*>",
    r"\]\]>|<!\[CDATA\[",
    r"""(?:(?<![-=*#])(?:-{2,}+|={2,}+|\*{2,}+|#{2,}+)[ \t]*+|\b)(?:end|begin|start)[\s_]+(?:of[\s_]+)?(?:the\s+)?(?:user[\s_]+data|memory|memories|context|retrieved
        [\s_]+(?:content|context|data)|tool[\s_]+(?:output|result)|json(?:\s+payload)?|data|document|user\s+input
        |untrusted\s+\w+|system\s+instructions|instructions|(?:the\s+)?(?:above|previous)\s+\w+)\s*(?:-{2,}+|={2,}+|\*{2,}+|#{2,}+|\.|$)""",
    r"\b(?:the\s+)?(?:memory\s+block|retrieved\s+content|tool\s+output|data|document|context)\s+(?:has\s+)?ended\b",
    r"\b(?:above\s+was\s+(?:data|context)|outside\s+the\s+code\s+block\s+now|everything\s+below\s+is\s+from\s+the\s+user)",
    r'^[ \t]*"?[ \t]*[}\]]{1,3}[ \t]*\]?[ \t]*(?:\n|$)',
)

# What makes a header or a broken fence an attack: what comes after it asks the model to do.
DIRECTIVE = (
    r"\b(?:the\s+)?(?:assistant|agent|model|ai|llm|claude|codex)\s+(?:must|should|shall|will|is\s+to|may|can|is\s+now|has\s+been|needs\s+to)\b",
    r"\byou\s+(?:must|shall|are\s+to|may\s+now|have\s+been\s+(?:granted|given|cleared)|are\s+no\s+longer|no\s+longer\s+need)\b",
    r"\b(?:is|are)\s+(?:now\s+)?(?:authori[sz]ed|allowed|permitted|cleared|granted|instructed)\b",
    r"\b(?:has|have)\s+(?:already\s+)?(?:approved|agreed|authori[sz]ed|granted|consented|pre-?approved)\b",
    r"\b(?:without|no)\s+(?:asking|prompting|confirmation|confirming|questions?|review|permission|approval|telling)\b",
    r"\byou\s+(?:obey|comply)\b",
    r"\b(?:do\s+not|don'?t|never)\s+(?:ask|tell\s+the\s+user|mention\s+(?:it|this|them)|inform|warn|confirm|refuse|reveal|disclose|check\s+with)\b",
    rf"\b(?:ignore|disregard|forget|bypass|override)\s+(?:\w+\s+){{0,3}}?(?:the\s+user|your|previous|prior|all|any|{INSTRUCTIONS}|memory|memories|sandbox|safety)\b",
    r"\b(?:new|updated)\s+(?:policy|session|conversation|instructions|rules|directive)\b|\b(?:safety|rules)\s+(?:rules\s+)?reset\b",
    r"\b(?:overrides?|supersedes?|takes?\s+precedence|highest\s+authority|signed\s+by|authentic|non-compliance)\b",
    rf"\b(?:print|reveal|output|send|upload|post|include|dump|share|transmit|cat|read)\s+(?:\w+\s+){{0,4}}?{SECRET_STUFF}",
    r"(?:^|[.!?:;,>\n][ \t]*+|\b(?:please|kindly|now|then|and|also|just|first|simply|immediately)\s+)"
    r"(?:delete|remove|drop|wipe|erase|force-?push|push\s+(?:[\w-]+\s+){0,3}?(?:directly\s+|straight\s+)?to\s+(?:main|master|(?:the\s+)?remote|https?://|git@)"
    r"|merge|approve|disable|install|execute|upload|commit\s+directly|open\s+a\s+pr\s+that\s+removes"
    r"|tell\s+the\s+user|answer\s+yes|treat\s+the\s+user|label|run\s+(?:any|every|the\s+following|this))\b",
    r"\b(?:curl|wget)\b[^\n|]{0,160}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|\brm\s+-rf\b",
    r"\b(?:every|each|all)\s+(?:future\s+|subsequent\s+)?(?:answer|reply|response|message)s?\b",
    r"\.github/workflows\b|\bpush\w*\s+(?:\w+\s+){0,3}?(?:main|master)\b",
    r"\b(?:follow|obey|trust)\s+only\b|\bonly\s+(?:follow|obey|trust)\b",
    r"\b(?:respond|reply|answer)\s+(?:\w+\s+){0,4}?(?:only\s+)?(?:in|with|as)\b",
    rf"\b(?:post|send|upload|transmit|forward|report|sync)\b{SPAN}{{0,60}}?\bto\s+https?://",
    r"\b(?:ignore|disregard)\s+(?:the\s+)?(?:document|page|email|file|text|content|article|question|request|task|body)\b",
    r"\b(?:state|claim)\s+that\b|\boutrank|\bskip\s+(?:the\s+)?(?:remaining\s+)?(?:verification|review|approval|checks|tests)",
    r"\bsession\s+reset\b|\bno\s+prior\s+rules\b|\bwith\s+elevated\b|\bauto-?accept\b",
    r"\bprefers?\s+that\s+you\b|\bi\s+authori[sz]e\s+you\b",
)

EXFILTRATION = (
    rf"""\b(?:send|post|upload|e-?mail|mail|paste|share|transmit|forward|leak|exfiltrate|curl|fetch
        |request|resolve|nslookup|dig|push|publish|sync|copy|put|attach|append|include|add|embed
        |write|print|output|render|encode|dump|reveal|show|display|return|list|expose|report|run
        |execute|cat|read|grab|collect|get)\b
        {SPAN}{{0,100}}?{SECRET_STUFF}{SPAN}{{0,120}}?\b(?:to|at|into|in|via|on|as|inside|within)\s+
        (?:the\s+|a\s+|an\s+|this\s+|our\s+|my\s+)?{DESTINATION}""",
    rf"""\b(?:send|post|upload|request|fetch|curl|call|hit|open|visit|load)\s+(?:\w+\s+){{0,3}}?https?://\S+{SPAN}{{0,80}}?{SECRET_STUFF}""",
    rf"""\b(?:include|put|add|append|embed|insert|print|write|paste|output|reveal|show|repeat|display)\s+
        (?:\w+\s+){{0,4}}?{SECRET_STUFF}[^.\n]{{0,60}}?\b(?:in|into|to|at\s+the\s+end\s+of|with)\s+
        (?:your|the|each|every)\s+(?:next\s+|final\s+)?(?:reply|answer|response|message|output|commit|summary|pr)""",
    r"""\b(?:print|output|reveal|show|dump|repeat|list|display|share|give\s+me)\s+(?:out\s+)?(?:\w+\s+){0,3}?
        (?:your\s+(?:full\s+|complete\s+|entire\s+)?(?:system\s+prompt|instructions|initial\s+prompt|hidden\s+(?:prompt|messages?)|tool\s+definitions)
        |every\s+environment\s+variable|all\s+(?:the\s+)?environment\s+variables|the\s+(?:full\s+)?contents\s+of\s+\S*(?:\.env|\.ssh|credentials|\.netrc|id_rsa|secrets?)\S*)""",
    r"""(?:printenv|\benv\b|cat\s+\S*(?:\.env|\.ssh/\S+|credentials|\.netrc|id_rsa)\S*)\s*\|\s*(?:curl|nc|ncat|wget|base64)\b""",
    r"""\b(?:curl|wget)\b[^\n]{0,80}?(?:@|--upload-file\s+|-T\s+|-d\s+@)(?:~|\$HOME|\$\{HOME\})?/?\.(?:ssh|aws|netrc|env|config/gh|npmrc)""",
    # a markdown or HTML image whose address carries data to be filled in
    r"""!\[[^\]]*\]\(\s*https?://[^)\s]*[?&#][^)\s]*(?:\{[^}]*\}|<[^>]*>|\$\w+|%s|\.\.\.|=(?-i:[A-Z][A-Z0-9_]{5,})\b)""",
    r"\b(?:substitute|replace)\s+(?-i:[A-Z][A-Z0-9_]{3,})\s+with\s+(?:your|the)\b|\bplaceholder\s+filled\s+in\b",
    rf"{SECRET_STUFF}{SPAN}{{0,80}}?\b(?:paste|post|send|share|upload|put|include)\s+(?:them|it)\s+(?:into|in|to|on)\s+(?:the\s+|a\s+)?{DESTINATION}",
    rf"\b(?:create|make|open|post|start)\s+a\s+(?:new\s+|public\s+|secret\s+)*(?:gist|paste(?:bin)?)\s+(?:containing|with|of)\s+(?:\w+\s+){{0,2}}?{SECRET_STUFF}",
    r"https?://\S+=\s+followed\s+by\b",
    r"""<img\b[^>]*\bsrc\s*=\s*["']?https?://[^"'>\s]*[?&][^"'>\s]*(?:\{[^}]*\}|<|\$)""",
    r"""https?://\S+[?&=/](?:\{\s*[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD|ENV|DATA)[A-Z_]*\s*\}|<[^>]*(?:token|key|secret|password|history|data)[^>]*>)""",
    rf"""\bfor\s+each\s+(?:secret|key|token|password|line)\b{SPAN}{{0,80}}?\b(?:resolve|nslookup|dig|request|fetch|curl)\b""",
    rf"""\b(?:to|into)\s+(?:a\s+)?(?:new\s+)?(?:gist|pastebin|paste)\b[^.\n]{{0,60}}{SECRET_STUFF}|{SECRET_STUFF}[^.\n]{{0,60}}\b(?:to|into|on)\s+(?:a\s+)?(?:new\s+)?(?:gist|pastebin|paste\s*bin)\b""",
)

# What a model is told to hide: these instructions, or its own acts.
_HIDDEN = (
    r"(?:this|these|it|them|anything|any\s+of\s+(?:this|that|these)"
    r"|(?:this|these|the|my|your)\s+(?:instructions?|note|notes|memory|directions?|steps?|commands?"
    r"|rules?|prompt|message|file|changes?|edits?|extra\s+step|network\s+call)"
    r"|what\s+you\s+(?:did|do|ran|run|changed|are\s+doing)|that\s+you\s+\w+)"
)
CONCEALMENT = (
    rf"""\b(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t)\s+
        (?:tell|inform|notify|alert|warn)\s+{USER}\s+(?:about\s+|of\s+)?{_HIDDEN}\b""",
    rf"""\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:tell|mention|reveal|disclose|say|repeat|explain|show|list|include)\s+
        {_HIDDEN}(?:\s+(?:\w+\s+){{0,3}}?(?:to|with)\s+{USER}\b|\s+(?:in|from)\s+(?:your|the)\s+
        (?:summary|reply|answer|report|output|response|transcript|pr\s+description))""",
    rf"\bdon'?t\s+let\s+{USER}\s+(?:know|find\s+out|learn|notice|see\s+(?:this|it|that|what))\b",
    rf"\b(?:keep|hide)\s+{_HIDDEN}\s+(?:a\s+)?(?:secret|hidden|private|invisible)?\s*from\s+{USER}\b",
    rf"\b{USER}\s+(?:must|should|will)\s+not\s+(?:learn|know|notice|find\s+out|be\s+told)\b",
    rf"\bso\s+(?:that\s+)?{USER}\s+(?:doesn'?t|does\s+not|won'?t|will\s+not)\s+(?:notice|know|find\s+out)\b",
    r"""\b(?:leave|keep|omit|remove|exclude|hide|drop)\s+(?:it|this|them|that|these|the\s+\w+(?:\s+\w+)?)\s+(?:out\s+)?(?:of|from)\s+
        your\s+(?:reply|summary|report|answer|response|output|transcript|pr\s+description)""",
    r"\b(?:list|describe|report)\s+everything\s+except\b",
    r"\b(?:invisible|hidden)\s+(?:in|from)\s+the\s+(?:transcript|tool\s+output)",
    r"\bdo\s+not\s+reveal\s+that\s+you\b",
    r"\b(?:tell|inform)\s+(?:the\s+)?(?:user|them)\s+(?:that\s+)?(?:the\s+)?(?:task|migration|build|deploy\w*|it|everything)\s+(?:failed|succeeded|worked|went\s+fine|is\s+fine)\b",
    r"\b(?:regardless\s+of|no\s+matter)\s+(?:the\s+)?actual\s+(?:result|outcome)",
    r"\bif\s+(?:they|the\s+user)\s+asks?\b[^.]{0,60}\b(?:say\s+(?:it|that|you)|tell\s+them|omit|deny)\b",
    r"\bomit\s+this\s+(?:one|memory|note)\b",
    r"\btell\s+(?:no\s+one|nobody)\b|\bwithout\s+telling\s+anyone\b|\bdon'?t\s+tell\s+anyone\b",
    r"\bso\s+(?:that\s+)?it\s+(?:doesn'?t|does\s+not|won'?t)\s+(?:stand\s+out|get\s+noticed|show\s+up)\s+in\s+(?:the\s+)?review",
    r"""\b(?:leave|omit|remove|exclude|hide|drop)\s+[^.\n]{1,60}?\s+(?:out\s+)?(?:of|from)\s+(?:your\s+(?:reply|summary|report|answer
        |response|output|transcript|list\s+of\s+changes|changelog|change\s+summary)|(?:your|the)\s+pr\s+description)""",
    r"\bnever\s+(?:list|mention|include|show)\s+(?:them|it|this|these)\s+(?:among|in|with)\s+the\s+changes",
    r"\bkeep\s+(?:this|it)\s+between\s+us\b",
    r"""(?:^|[.!?;:\n][ \t]*+)(?:silently|quietly|secretly|covertly),?\s+(?:\w+\s+)?(?:run|apply|install|execute|do|make|add
        |delete|push|send|upload|commit|remove|change|rewrite|edit|modify|merge|approve|disable|drop)\b""",
    r"\b(?:make|do|apply|run|push|commit)\s+(?:\w+\s+){0,3}?(?:quietly|silently|secretly)\s*[:,.]",
    rf"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform)\s+{USER}\s+(?:that\s+)?you\s+(?:read|ran|did|changed|saw|used|followed|installed|made|edited|added|received)",
    r"\b(?:do\s+not|don'?t|never)\s+(?:display|show)\s+(?:them\s+)?(?:the\s+)?(?:test\s+|full\s+|real\s+)?(?:log|output|diff|changes)\b",
    r"\bno\s+mention\s+(?:of\s+it\s+)?(?:in|to)\s+(?:the\s+)?(?:chat|user|summary|reply)",
    r"\bso\s+(?:that\s+)?it\s+(?:doesn'?t|does\s+not|won'?t)\s+stand\s+out\b",
    r"\b(?:regardless\s+of|no\s+matter|even\s+if)\s+(?:what\s+)?(?:the\s+)?(?:actual|real|true)\s+(?:result|outcome|output)",
    r"\banswer\s+no\b(?=[^.]{0,5}(?:$|\.))",
    r"\b(?:vague|misleading|innocuous|unrelated)\s+commit\s+message\b",
)

MEMORY_POISONING = (
    r"""\b(?:update|modify|change|edit|alter)\s+(?:the|your)\s+(?:memory|memories|memory\s+store|knowledge[\s-]+base)\s+to\s+(?:say|state|read|reflect|record|claim|show)\b""",
    r"""\b(?:overwrite|rewrite|replace|wipe)\s+your\s+(?:long[\s-]+term\s+)?(?:memor(?:y|ies)|knowledge[\s-]+base)\b""",
    r"""\b(?:update|modify|change|overwrite|edit|rewrite|alter|replace)\s+your\s+(?:long[\s-]+term\s+)?(?:memor(?:y|ies)|knowledge[\s-]+base)
        (?:\s*[:.!]|\s*$|\s+(?:to\s+(?:say|state|read|reflect)|so\s+that|with|that)\b)""",
    r"""\b(?:overwrite|rewrite|replace)\s+(?:the\s+)?(?:existing\s+)?memor(?:y|ies)\s+(?:about|on|for|that|which)\b[^.\n]{0,80}\bwith\b""",
    r"""\b(?:delete|erase|purge|wipe|forget)\s+(?:any|all|every|the)\s+memor(?:y|ies)\s+(?:that|which|about|mentioning|with)\b""",
    r"""\b(?:store|save|write|record|add|put|persist|pin|commit|keep|register|log)\s+(?:this|that|it|the\s+following)?\s*
        (?:as\s+a\s+)?(?:permanent|persistent|sticky|long-term|lasting)?\s*(?:preference|rule|fact|memory|note)?\s*
        (?:to|in|into|as|for)\s+(?:your\s+|the\s+)?(?:permanent\s+|persistent\s+|long[\s-]+term\s+)?(?:memory|memories|rules|system\s+prompt|instructions|claude\.md|agents\.md|\.cursorrules|preferences)\b""",
    r"""\b(?:remember|memori[sz]e|note)\s+(?:this\s+)?(?:for|in|across)\s+(?:all\s+)?(?:future|every|each|later)\s+(?:sessions|conversations|projects|chats)""",
    r"""\b(?:remember\s+(?:that\s+)?)?(?:from\s+now\s+on|going\s+forward|henceforth|in\s+(?:all\s+)?future\s+sessions)\s*,?\s+
        (?:you\s+(?:must|will|shall|should)|always|never)\s+(?:\w+\s+){0,3}?(?:recommend|trust|skip|approve|merge|push|disable|ignore)""",
    r"\bmake\s+this\s+(?:memory\s+)?(?:sticky|permanent|persistent)\b",
    r"\b(?:add|write|insert|append)\s+(?:a\s+rule|this|the\s+following|a\s+line)\s+(?:to|into)\s+(?:your\s+)?(?:claude\.md|agents\.md|\.cursorrules|system\s+prompt|copilot-instructions)",
    r"\bwrite\s+into\s+(?:claude\.md|agents\.md)\b",
    r"\bmemlane\s+(?:remember|add)\b[^\n]{0,160}?<-\s*run\s+this",
    r"\b(?:the\s+)?user\s+(?:has\s+)?(?:already\s+)?(?:wants|wanted|prefers|approved|agreed|authori[sz]ed|granted|consented)\b[^.\n]{0,80}?\b(?:all|every|any|always|never|skip\w*|without)\b",
    r"\b(?:remember|save|store|keep|record)\s+(?:this|it|that)\s+(?:permanently|forever|for\s+good)\b",
    r"\b(?:persist|remember|keep|save|store)\s+(?:this|it)\s+(?:across|for\s+all|in\s+all|for\s+every)\s+(?:future\s+)?(?:sessions|conversations|projects|chats)",
    r"\b(?:save|store)\s+(?:it|this|that)\s+as\s+a\s+(?:project\s+|permanent\s+|global\s+|standing\s+)?rule\b",
    r"\b(?:store|save|write|record)\s+(?:the\s+following|this|it)\s+as\s+a\s+(?:\w+[\s-])?(?:priority|permanent|pinned|core|high-priority)\s+memory",
    r"\boverwrite\s+memory\s+m-\w+|\brewrite\s+(?:every|all)\s+(?:stored\s+)?memor",
    r"\bsave\s+this\s+so\s+you\s+(?:don'?t|do\s+not|won'?t)\s+forget\b",
    r"\bin\s+every\s+future\s+session\b",
    r"\b(?:write|create|add)\s+a\s+(?:new\s+)?memory\s+(?:saying|stating|that\s+says)\s+(?:that\s+)?the\s+user",
)

TOOL_ABUSE = (
    r"\b(?:curl|wget)\b[^\n|]{0,160}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b",
    r"\brm\s+-(?:rf|fr|r\s*-f)\s+\S+",
    r"\bchmod\s+(?:-R\s+)?(?:777|a\+rwx)\s+/",
    r"\b(?:git\s+push\b[^\n]{0,60}(?:--force|-f)\b[^\n]{0,40}\b(?:main|master)\b|push\s+(?:\w+\s+){0,3}?(?:directly|straight)\s+to\s+(?:main|master)\b[^\n.]{0,60}(?:force|without|skip|no\s+review|quietly))",
    r"\b(?:approve|merge)\s+(?:\w+\s+){0,4}?(?:without|skip(?:ping)?)\s+(?:any\s+)?(?:review|approval|checks?)\b",
    r"\bgh\s+pr\s+merge\b[^\n]{0,40}--admin\b",
    r"\b(?:disable|turn\s+off|remove|delete|bypass)\s+(?:\w+\s+){0,2}?(?:branch\s+protection|sandbox\w*|tls\s+verification|ssl\s+verification|certificate\s+verification|the\s+auth\w*\s+(?:check|middleware)|rate\s+limiter|2fa|mfa|code\s+review)\b",
    r"\bauthorized_keys\b",
    r"\bcontinue-on-error\s*:\s*true|--no-verify\b|\bverify\s*=\s*false\b|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*0",
    r"\b(?:delete|remove|rm)\s+(?:-\w+\s+)?\S*\.github/workflows",
    r"\b(?:disable|turn\s+off|skip|remove|delete)\s+(?:all\s+)?(?:the\s+)?(?:ci|tests?|test\s+suite|checks|linters?|pre-commit|hooks)\b",
    r"\b(?:@reboot|crontab)\b[^\n]{0,80}\b(?:curl|wget|bash|sh)\b",
    r"\bcore\.hooksPath\b",
    r"\bdrop\s+table\s+(?:audit|users|orders|payments)\w*\b(?![^.]{0,40}\blocal)",
    r"\b(?:verify|ssl_verify|verify_ssl|tls_verify)\s*[=:]\s*false\b(?=[^.]{0,80}\b(?:every|all|always))",
    r"\b(?:add|set)\s+a\s+remote\b[^\n]{0,80}\bpush\s+all\b",
    r"\b(?:pip|npm|yarn|pnpm)\s+install\s+\S+\b[^.\n]{0,80}\b(?:that\s+spelling|first|quietly|without\s+asking)",
    r"\bnpm\s+publish\b[^.\n]{0,60}\b(?:token|right\s+now|9\.9\.9)",
    r"\bexpose\s+port\s+22\b",
    r"\b(?:transfer|send)\s+(?:\$?\d[\d,.]*\s*)?(?:funds|money|usd|eur|btc|eth)\b",
    r"\bexecute\s*:\s*(?:curl|wget|rm|bash|sh|python)\b",
)

# Acts against the user's interest that a model may be told to do: weaken security,
# destroy, hand out access, deceive, take orders from a third party. An act is an
# attack when it is said to the model (an imperative, or a note addressed to it) and
# not forbidden ("never disable branch protection" is a convention).
HARM = (
    r"""\b(?:disable|turn\s+off|remove|delete|bypass|skip|comment\s+out|weaken|lift|drop|strip|relax)\s+
        (?:[\w-]+\s+){0,3}?(?:security(?:[\s-]scan\w*)?|branch\s+protection|protections?|sandbox\w*|verification
        |ssl|tls|certificate\s+checks?|auth(?:entication)?\s+checks?|the\s+auth\w*|2fa|mfa|rate\s+limit\w*|code\s+review
        |reviews?|approvals?|approval\s+step|confirmation\s+(?:prompts?|steps?)|permission\s+(?:checks?|prompts?)
        |guardrails?|safety\s+checks?|secret\s+scanning|audit(?:\s+log)?|monitoring|firewall|signature\s+checks?
        |pre-commit\s+hooks?|git\s+hooks|ci\s+checks|all\s+(?:the\s+)?(?:checks|tests)|the\s+(?:whole\s+)?(?:test\s+)?suite)\b""",
    r"\bchmod\s+(?:-R\s+)?(?:777|a\+rwx)\s+/",
    r"\bcomment\s+out\s+(?:the\s+)?(?:failing\s+)?(?:assertions|tests|checks)\b",
    r"\bmark\s+(?:the\s+)?(?:whole\s+|entire\s+)?(?:suite|tests?)\s+as\s+(?:skipped|passing|passed)",
    r"\bso\s+(?:that\s+)?ci\s+(?:goes|turns|is|stays)\s+green\b",
    r"\b(?:remove|kick)\s+(?:all\s+)?(?:other\s+)?collaborators\b|\badd\s+(?:user\s+)?\S+\s+as\s+(?:an?\s+)?(?:admin|owner|maintainer|collaborator)",
    rf"\b(?:add|append|put|write|copy|paste)\b{SPAN}{{0,60}}\bauthorized_keys\b",
    r"\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?(?:user|operator|owner|anyone)\b",
    r"\btransfer\s+\$?[\d,.]+|\biban\b|\bwire\s+(?:\$|funds|money)",
    r"\bchange\s+(?:the\s+)?dns\b|\bdns\s+(?:a\s+)?record\b",
    r"\bpost\s+(?:\w+\s+){0,3}?on\s+(?:the\s+company'?s?|our|its|their)\s+(?:x|twitter|linkedin|facebook|instagram|social)",
    r"\bforce-?push\w*\b[^.\n]{0,40}\b(?:to|origin|into)\s+(?:the\s+)?(?:main|master)\b|\b(?:main|master)(?:'s)?\s+force-?push",
    r"\bgit\s+push\b[^\n]{0,60}(?:--force|-f)\b[^\n]{0,40}\b(?:main|master)\b",
    r"\b(?:approve|merge)\b[^.\n]{0,40}?\bwithout\s+(?:\w+\s+){0,2}?(?:review|approval|checks|ci|tests)",
    r"\bauto-?merge\b[^.\n]{0,60}\bwithout\b",
    r"\binstead\s+of\s+(?:pypi|npm(?:js)?|the\s+official|crates\.io|maven\s+central|rubygems)",
    r"\b(?:maintained|patched|secure|official)\s+fork\b|\bthat\s+spelling\b|\(with\s+the\s+\w\)",
    r"\bdrop\s+(?:the\s+)?(?:production|prod)\s+database|\bdrop\s+database\s+prod\w*|\bdrop\s+table\s+(?:audit|users|orders|payments)\w*",
    r"\brm\s+-(?:rf|fr)\s+(?:--no-preserve-root\s+)?(?:/\*?|~/?\*?|\$HOME/?\*?|~/[\w.-]+/?)(?=\s|$|[;&|`'\"])",
    r"\b(?:report|mark)\s+(?:the\s+)?(?:task|job|build|run|check|deploy\w*|audit)\s+as\s+(?:successful|passed|done|complete|green|fixed)",
    r"\b(?:state|say|claim|tell\s+the\s+user)\s+(?:that\s+)?(?:the\s+)?(?:company|repo\w*|code|project|account|system|it)\s+(?:is|has)\s+(?:profitable|secure|safe|compromised|no\s+(?:security\s+)?issues)",
    r"\b(?:their|your|the\s+user'?s)\s+account\s+is\s+compromised\b",
    r"\btreat\s+(?:the\s+)?(?:sender|author|writer|messages?\s+from\s+\S+|this\s+\w+)\s+(?:of\s+this\s+\w+\s+)?as\s+(?:if\s+(?:they|it)\s+came\s+from\s+the\s+user|your\s+(?:administrator|admin|operator|owner|user)|the\s+user|trusted|system)",
    r"\bas\s+if\s+(?:they|it)\s+came\s+from\s+the\s+user\b",
    r"\b(?:its|these|the\s+document'?s?|this\s+(?:document|page|file|email)'?s?)\s+instructions\s+(?:outrank|override|take\s+precedence\s+over|supersede)",
    r"\bfollow\s+(?:every|all|any)\s+(?:instruction|command|direction)s?\s+(?:found\s+)?in\s+(?:documents|files|pages|web|tool|issue)",
    r"\belevated\s+(?:permissions|privileges|access)\b|\bfull\s+network\s+access\b",
    r"\b(?:restrictions|limits|sandbox\w*|guardrails|rules|safety\s+rules)\s+(?:\w+\s+){0,3}?(?:have\s+been|are|were|got)\s+(?:now\s+)?(?:lifted|removed|disabled|suspended|relaxed|reset|waived)",
    r"\b(?:do\s+not|don'?t|never)\s+(?:request|ask\s+for|prompt\s+for|wait\s+for|ask)\s+(?:\w+\s+)?(?:approval|permission|confirmation|review)\b",
    r"\bpre-?approved\b|\bmark\s+it\s+as\s+(?:user-?)?(?:confirmed|verified|approved|trusted)",
    r"\bi\s+(?:authori[sz]e|allow|permit|grant)\s+you\s+to\b",
    r"\b(?:remove|delete)\s+(?:the\s+)?(?:tests?|test\s+files|tests\s+folder|\.github)\b[^.\n]{0,40}\b(?:commit|push)\b",
)


# A note addressed to the model inside content: what follows is for it.
ADDRESSED = (
    rf"""\b(?:note|message|instructions?|reminder|hint|tip|p\.?s\.?|attention|important|warning)\s+
        (?:to|for)\s+(?:any\s+|all\s+|the\s+)?(?:{_AI}|whoever\s+(?:reads|is\s+reading)\s+this|ai\s+readers?)\b""",
    rf"""(?:^|[.!?;(\["\n][ \t]*+|\b(?:dear|hey|hi|attention|also|and|p\.?s\.?)\s+)(?:the\s+)?{_AI}\s*(?:[:,—–]|\s+(?:pls|please)\b)""",
    rf"\bif\s+you\s+are\s+(?:an?\s+)?{_AI}\b",
    rf"\b(?:any|all)\s+{_AI}\s+(?:reading|processing|parsing|summari[sz]ing|triaging|working\s+on)\b",
    rf"\b{_AI}\s+(?:reading|processing|parsing|summari[sz]ing|triaging|working\s+on)\s+(?:this|these)\b",
    r"\b(?:to|for)\s+the\s+ai\b",
    r"\b(?:todo|fixme|note|hack)\s*\(\s*(?:agent|ai|llm|assistant|claude|codex)\s*\)",
    rf"\bto\s+(?:whatever|whichever|any|the|every)\s+{_AI}\s+(?:is\s+|are\s+)?(?:reading|summari[sz]ing|processing|triaging|parsing|handling|working)",
    rf"\b(?:tip|hint|note|advice)\s+for\s+(?:the\s+)?{_AI}\b",
    rf"\b(?:the\s+|all\s+|any\s+)?{_AI}\s+(?:should|must|need\s+to|needs\s+to|are\s+to|is\s+to|have\s+to|has\s+to|are\s+required\s+to)\b",
)
