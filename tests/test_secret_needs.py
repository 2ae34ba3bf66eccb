"""The needs that let secret detection skip detectors: a need never rules out a text its
detector fires on (over the labelled corpora, their case-folded variants and edge cases
written here), and the case folding they rely on holds over all of Unicode. No database."""

from __future__ import annotations

import base64
import random
import re
import string
import sys
from collections.abc import Callable, Iterator

import pytest

from memlane.evaluation import screening
from memlane.write import secret_labels, secret_needs, secret_tokens, secret_values, secrets
from memlane.write.secret_needs import AtWord, Need, any_of, led, one_scan

Finder = Callable[[str], Iterator[tuple[int, int, str]]]


def _high_entropy(text: str) -> Iterator[tuple[int, int, str]]:
    # Every decoded text counts as holding a secret: the detector fires its widest.
    return secret_tokens._high_entropy(text, lambda decoded: True)


DETECTORS: list[tuple[str, Finder, Need]] = [
    *((d.find.__name__, d.find, d.need) for d in secret_tokens.DETECTORS),
    ("_high_entropy", _high_entropy, secret_tokens.HIGH_ENTROPY_NEED),
    *((d.find.__name__, d.find, d.need) for d in secret_values.DETECTORS),
]

VALUE = "Xk9$mQ2vLp7#Rt4wZ"
# Texts each detector fires on, written at the edges of what its need reads: labels in
# other scripts and cases, glued and CamelCase keys, the characters IGNORECASE folds
# specially (the long s, the Kelvin sign, dotted and dotless i, final sigma).
EDGE_CASES = [
    f"API_\u212aEY={VALUE}",
    f"the api \u212aey is {VALUE}",
    f"\u039a\u03a9\u0394\u0399\u039a\u038c\u03a3: {VALUE}",
    f"Datenbankpasswort: {VALUE}",
    f"das DB-Passwort lautet {VALUE}",
    f"DBPASSWORD={VALUE}",
    f"pgpassword={VALUE}",
    f"appKey: '{VALUE}'",
    f'"private_key_id": "{VALUE}"',
    f"SECRET_KEY_BASE={VALUE}",
    f"\u0130DENTIFIED BY '{VALUE}'",
    f"ALTER ROLE app WITH PASSWORD '{VALUE}'",
    f"密码是{VALUE}",
    f"la contraseña es {VALUE}",
    f"şifresi {VALUE}",
    f"пароль: {VALUE}",
    f"mysqli_connect('db', 'app', '{VALUE}')",
    f"requests.get(url, auth=HTTPBasicAuth('app', '{VALUE}'))",
    f"conn = new PostmarkClient('{'a1B2c3D4e5F6g7H8i9J0k1L2m3'}')",
    "totp = pyotp.TOTP('JBSWY3DPEHPK3PXPJBSWY3DP')",
    f"root:{VALUE}",
    f"admin / {VALUE}",
    f"ssh asks for it, type {VALUE}",
    f"At the login prompt enter {VALUE}",
    "backup codes:\n4e062-e3418\n6a2f9-b1c07\n93d1e-0f4a2\n",
    "Recovery codes\n1. 5251 0462\n2. 7899 7789\n3. 1234 5678\n",
    f"$ kubectl get secret db -o jsonpath='{{.data.password}}' | base64 -d\n{VALUE}\n",
    f"try {VALUE}!",
    f"{VALUE} is the new one for the NAS",
    f"log in as admin with {VALUE}",
    f"use {VALUE} to log in",
    f"mysql -u root -p{VALUE} app",
    f"docker login -u bot -p {VALUE}",
    f"--db-password {VALUE}",
    f"-Dsonar.token={VALUE}",
    f"<password>{VALUE}</password>",
    f'<add key="DbPassword" value="{VALUE}"/>',
    f'<property name="db.password">{VALUE}</property>',
    f"| user | password |\n|---|---|\n| app | {VALUE} |",
    f"requirepass {VALUE}",
    f'define("DB_PASSWORD", "{VALUE}");',
    f"set -gx JIRA_API_TOKEN {VALUE}",
    f"- name: DB_PASSWORD\n  value: {VALUE}",
    f'const ADMIN_PASSWORD: &str = "{VALUE}";',
    "postgres://app:s3cr3t-Pa55@db:5432/app",
    "app/s3cr3tPa55@db.example.com:1521/orcl",
    "db.internal:5432:app:app:s3cr3tPa55",
    "WIFI:T:WPA;S:home;P:s3cr3tPa55;;",
    "app:s3cr3tPa55@tcp(db:3306)/app",
    "Authorization: Bearer abcDEF1234567890ghiJKL",
    "authorization: token 1a2b3c4d5e6f7a8b9c0d",
    "Cookie: session=0123456789abcdefABCDEF",
    "Authorization: Basic YWRtaW46czNjcjN0UGE1NQ==",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4dh1F0lzVb1o2nZJk7zX5pQ\n-----END RSA PRIVATE KEY-----",
    "AKIAQYLPMN5HHHFPZAM2",
    "ghp_R4nd0mT0k3nV4lu3Abcdefghij0123456789",
    "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abcdefghijklmnopqrstuvwx12==",
    "k9Qz3LmX7pR2vT8wY4nB6cD1fG5hJ0sA",
    base64.b64encode(f"password={VALUE}".encode()).decode(),
    "the staging password is hunter2024!",
    "PIN 4417",
    "wifi key: correct-horse-battery-staple",
]


_RNG = random.Random(38)


def _random(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


_HEX = "0123456789abcdef"
# One token of each vendor format, for the shapes whose need is their prefix.
VENDOR_TOKENS = [
    f"dop_v1_{_random(64, _HEX)}",
    f"abc8Q~{_random(33)}",
    f"shpat_{_random(32, _HEX)}",
    f"dckr_pat_{_random(24)}",
    f"hvs.{_random(24)}",
    f"dapi{_random(32, _HEX)}",
    f"AGE-SECRET-KEY-1{_random(58, string.ascii_uppercase + string.digits)}",
    f"ATATT3{_random(45)}",
    f"lin_api_{_random(32)}",
    f"ntn_{_random(43)}",
    f"sbp_{_random(40, _HEX)}",
    f"glsa_{_random(32)}",
    f"NRAK-{_random(27, string.ascii_uppercase + string.digits)}",
    f"PMAK-{_random(24, _HEX)}-{_random(34, _HEX)}",
    f"dp.st.{_random(32)}",
    f"pul-{_random(40, _HEX)}",
    f"key-{_random(32, _HEX)}",
    f"rdme_{_random(72, string.ascii_lowercase + string.digits)}",
    f"xkeysib-{_random(64, _HEX)}-{_random(16)}",
    f"EAAG{_random(64)}",
    f"ya29.{_random(32)}",
    f"1//0{_random(32)}",
    f"LTAI{_random(20)}",
    f"rubygems_{_random(48, _HEX)}",
    f"rzp_live_{_random(16)}",
    f"pat{_random(14)}.{_random(64, _HEX)}",
    f"squ_{_random(40, _HEX)}",
    "-".join(_random(6, string.digits) for _ in range(8)),
    f"glpat-{_random(24)}",
    f"xoxb-{_random(24)}",
    f"sk_live_{_random(24)}",
    f"sk-ant-{_random(32)}",
    f"AIza{_random(35)}",
    f"hf_{_random(34)}",
    f"npm_{_random(36)}",
    f"pypi-{_random(48)}",
    f"SG.{_random(22)}.{_random(43)}",
    f"SK{_random(32, _HEX)}",
    f"eyJ{_random(20)}.{_random(20)}.{_random(20)}",
    f"https://hooks.slack.com/services/{_random(30)}",
    f"https://discord.com/api/webhooks/123456/{_random(60)}",
    f"https://api.telegram.org/bot123456789:AA{_random(33)}/getMe",
    f"AC{_random(32, _HEX)}: {_random(32, _HEX)}",
    f"https://x.blob.core.windows.net/c?sv=2022&sig={_random(40)}",
]
EDGE_CASES += [f"the deploy uses {token} here" for token in VENDOR_TOKENS]

# Near misses that no detector fires on, as the folding characters leave them.
QUIET = [
    f"PA\u017f\u017fWORD: {VALUE}",
    f"\u03ba\u03c9\u03b4\u03b9\u03ba\u03cc\u03c3'\u03b1 {VALUE}",
    "Rotate the cache worker before the release.",
    "db-migration",
    "Retry the flaky queue consumer after the schema change",
]


def _variants(text: str) -> list[str]:
    return [
        text,
        text.upper(),
        text.swapcase(),
        text.replace("s", "\u017f").replace("k", "\u212a").replace("i", "\u0131"),
    ]


SECRET_TEXTS = [case.text for case in screening.load(screening.corpus_files("secrets"))]
TEXTS = [variant for text in SECRET_TEXTS + EDGE_CASES + QUIET for variant in _variants(text)]


@pytest.mark.parametrize(("name", "find", "need"), DETECTORS, ids=[d[0] for d in DETECTORS])
def test_a_need_never_rules_out_a_text_its_detector_fires_on(name, find, need):
    fired = [text for text in TEXTS if any(True for _ in find(text))]
    assert fired, f"{name} fires on no test text: its need is not tested"
    missed = [text for text in fired if not need.met(text)]
    assert not missed, missed[:5]


def test_every_edge_case_is_found_by_some_detector():
    quiet = [
        text for text in EDGE_CASES if not any(any(True for _ in d[1](text)) for d in DETECTORS)
    ]
    assert not quiet


def test_the_one_scan_matches_wherever_some_first_need_does():
    needs = [need for _, _, need in DETECTORS]
    scan = one_scan(needs)
    for text in TEXTS:
        assert (scan.search(text) is not None) == any(Need(n.patterns[0]).met(text) for n in needs)
    assert (
        secrets._ANY_NEED.pattern == one_scan((*secret_tokens.NEEDS, *secret_values.NEEDS)).pattern
    )


def test_clean_text_meets_no_need_and_has_no_secret():
    for text in QUIET[2:]:
        assert secrets._ANY_NEED.search(text) is None
        assert secrets.find_secrets(text) == []


def test_a_word_pattern_matches_only_at_the_start_of_a_word():
    need = Need(AtWord("key"))
    assert need.met("api key") and need.met("_key") and not need.met("monkey")


def test_every_vendor_token_is_found_by_its_shape():
    assert all(any(True for _ in secret_tokens.shaped(token)) for token in VENDOR_TOKENS)


def test_words_led_by_their_cases_read_as_ignorecase_reads_them():
    words = ["pass", "password", "key", "sig", "cookie:", "ç", "2fa", "in"]
    tries = [
        "PASS",
        "Password",
        "pa\u017f\u017f",
        "\u212aEY",
        "SIG",
        "\u017fig",
        "Cookie:",
        "Ç",
        "2FA",
        "\u0130n",
        "ın",
    ]
    tries += ["pas", "keys", "co", ""]
    alternation = "|".join(re.escape(word) for word in words)
    for text in tries:
        expected = re.fullmatch(f"(?i:{alternation})", text) is not None
        assert (re.fullmatch(led(*words), text) is not None) == expected, text
        expected = re.fullmatch(f"(?ai:{alternation})", text) is not None
        assert (re.fullmatch(led(*words, ascii=True), text) is not None) == expected, text


def test_a_prefix_tree_matches_exactly_its_words():
    words = ["pass", "password", "passwd", "pw", "pin", "key", "a"]
    pattern = re.compile(any_of(words))
    assert all(pattern.fullmatch(word) for word in words)
    assert not any(pattern.fullmatch(word) for word in ("pas", "passw", "p", "ke", ""))


# ---- case folding, over all of Unicode ---------------------------------------------------

ALL = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)


def test_the_folds_of_a_letter_are_exactly_what_ignorecase_matches():
    for letter, folds in secret_needs._FOLDS.items():
        assert set(re.findall(f"(?i:{letter})", ALL)) == set(folds), letter
    assert re.fullmatch(led("cookie:"), "\u212aOOKIE:") is None
    assert all(re.fullmatch(led("sig="), s + "IG=") for s in "sS\u017f")


def test_ignorecase_folds_every_character_lower_maps_to_a_label_letter():
    """`labels` lower-cases words with str.lower; its need reads the label with
    IGNORECASE: every character that lower-cases to a label's letter must match it."""
    words = [*secret_labels._BY_FIRST, *secret_labels._COMPOUNDS]
    alphabet = {char for word in words for char in word if char.lower() != char.upper()}
    for char in ALL:
        lowered = char.lower()
        if len(lowered) == 1 and lowered in alphabet:
            assert re.fullmatch(f"(?i:{re.escape(lowered)})", char), hex(ord(char))
    # str.lower maps a word-final sigma to ς: IGNORECASE folds Σ into both.
    assert re.fullmatch("(?i:ς)", "Σ") and re.fullmatch("(?i:σ)", "Σ")
    # The one character str.lower makes two of leaves a combining dot no label holds.
    assert {char for char in ALL if len(char.lower()) != 1} == {"\u0130"}
    assert not any("\u0307" in word for word in words)


def test_key_names_are_read_in_ascii():
    """names_secret reads a key's last piece, which is ASCII letters when it names a
    secret: an ASCII IGNORECASE need reads it."""
    pieces = {char for char in ALL if secret_tokens.PIECES.fullmatch(char)}
    assert all(char.isascii() or char.isdecimal() for char in pieces)  # digits end no key


def test_a_need_compiles_its_patterns_when_it_first_searches_and_shares_them():
    label = r"\bzqxv_label_(?:one|two)\b"
    first, second = Need(label, r"=\s*\S"), Need(label)
    assert label not in secret_needs._COMPILED  # made, but nothing searched yet
    assert not first.met("no such label here")
    assert label in secret_needs._COMPILED and r"=\s*\S" not in secret_needs._COMPILED
    seen: dict[int, bool] = {}
    assert first.met("zqxv_label_two = value", seen)
    assert second.met("zqxv_label_two = value", seen)
    assert len(seen) == 2  # the label, searched once for both needs, and the value
