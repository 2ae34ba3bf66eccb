"""The words that name a secret, in prose and as keys. Pure functions.

A prose label is a phrase of whole words ("password", "api key", "door code", "mot de
passe", "das Passwort"); its words may be joined by spaces, hyphens or underscores
(`api-key`, `api_key`). It is not a label inside a name, a path, a flag or an
identifier (`DB_PASSWORD`, `--no-password`, `/auth/token`, `.db.password`,
`design-tokens`): those are keys, read by `names_secret`. Labels in scripts that do
not put spaces between words are found anywhere.

Labels are of four families, which name the redaction and say what a value may look
like: password, passphrase, pin and credential. A weak label (`key`, `auth`) only
takes a value that could be nothing but a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from memlane.write.secret_needs import AtWord, any_of, any_sequence, led
from memlane.write.secret_tokens import PIECES

PASSWORD, PASSPHRASE, PIN, CREDENTIAL = "password", "passphrase", "pin", "credential"
FAMILIES = (PASSWORD, PASSPHRASE, PIN, CREDENTIAL)
WEAK = "weak"

# Phrases by family, comma-separated. `?` stands for any one word; a leading `*` lets
# a word end a compound (`Datenbankpasswort`, `DB-Passwort`).
_KEYS = "access secret private signing encryption master hmac license client app service \
account deploy session cookie consumer partner bot runner admin root ssh gpg pgp".split()
_VOCABULARY: dict[str, str] = {
    PASSWORD: """password, passwd, pwd, pw, passcode, pass code, login, logins, credentials,
        creds, root pass, admin pass, db pass, wifi pass, vpn pass, ssh pass, sudo pass,
        mail pass, email pass, ftp pass, smtp pass, user pass, login pass, nas pass,
        *passwort, *kennwort, mot de passe, mdp, contraseña, contrasena, contraseñas, clave,
        senha, senhas, parola, *wachtwoord, hasło, haslo, hasła, hasla, heslo, hesla, пароль,
        пароля, паролем, паролі, lösenord, losenord, lösenordet, şifre, şifresi, sifre,
        sifresi, parolası, kata sandi, mật khẩu, mat khau, κωδικός, κωδικό, κωδικού,
        συνθηματικό, pass for, pass is, pw for, snmp community, community string, kodeord, kodeordet,
        adgangskode, adgangskoden, passord, passordet, salasana, jelszó, jelszo, lozinka, geslo,
        parolă, parola de acces""",
    PASSPHRASE: """passphrase, pass phrase, security question answer, security answer, phrase de passe, frase de acceso,
        frase de contraseña, frase secreta, seed phrase, recovery phrase, mnemonic phrase,
        wachtzin, wpa key, wpa2 key, wifi key, wi fi key, wlan key, wpa passphrase,
        wpa2 passphrase, wifi passphrase, wifi password, wi fi password, wlan passwort,
        wpa2 password, wpa schlüssel, wpa2 schlüssel, wlan schlüssel, netzwerkschlüssel,
        clé wifi, clé wpa, clave wifi, clave wpa, chave wifi, wifi sleutel, frase senha, frase de senha, frase secreta, кодовая фраза, парольная фраза,
        фраза пароль, phrase secrète, recovery seed, wallet seed, seed words, mnemonic,
        """,
    PIN: """pin, pin code, pincode, puk, door code, alarm code, gate code, lock code,
        unlock code, entry code, access code, safe code, security code, keypad code,
        garage code, door ? code, alarm ? code, gate ? code, code to the ?, code to the ? ?,
        combination to the ?, backup codes, recovery codes,
        recovery key, bitlocker key, disarm code, keypad, code de la porte, code de l alarme,
        code alarme, code d accès, codes de secours, codice allarme, codice d accesso, deurcode,
        alarmcode, toegangscode, portkod, portkoden, larmkod, kod do drzwi, kod alarmu,
        kod do rozbrojenia alarmu, código do portão, código da porta, código de alarma,
        código do alarme, kombination, combination, combinación, combinaison, combinazione,
        комбинация, комбинация сейфа, код двери, код от двери, код сигнализации,
        code porte, code d entrée, digicode, code de la carte, code carte, code cb, code de la boîte,
        codice del portone, codice del cancello, codice della porta, larmkoden, portkod, keypad is, código de la puerta, código do portão,
        otp codes, 2fa codes, mfa codes, türcode, turcode, zugangscode, código de acceso,
        codigo de acceso, código pin, codice pin, пин, пин код""",
    CREDENTIAL: ", ".join(f"{q} {t}" for q in _KEYS for t in ("key", "secret", "token"))
    + """, token, secret, api key, apikey, api secret, access token, auth token,
        bearer token, refresh token, registration token, personal access token, sas token,
        session token, id token, webhook secret, shared secret, otp secret, totp secret,
        2fa secret, mfa secret, pre shared key, preshared key, psk, totp seed, otp seed,
        2fa seed, mfa seed, setup key, clave de configuración, chave de configuração,
        einrichtungsschlüssel, clé de configuration, pat, key for the api, key for the ? api, key for ? api,
        token for the api, token for the ? api, token for ? api, api schlüssel, api schlussel, clé api, cle api, clé d api,
        clave api, clave de api, chave de api, chave api, chiave api, klucz api,
        ключ api, токен, токена, sekret, api anahtarı, api anahtari, api nyckel, api nyckeln""",
    WEAK: "key, schlüssel, schlussel, clé, cle, chave, sleutel, klucz, nyckel, ключ, auth",
}
# A weak `key` after these words is some other kind of key.
_OTHER_KEYS = frozenset(
    "public publishable pub verify verification primary foreign sort partition cache hash "
    "map dict dictionary registry idempotency object composite unique index lookup routing "
    "shard row group keyboard hot shortcut music api_key".split()
)
# Labels in scripts without spaces between words.
_CJK: dict[str, tuple[str, ...]] = {
    PASSWORD: (
        "密码",
        "密碼",
        "口令",
        "パスワード",
        "비밀번호",
        "패스워드",
        "암호",
        "كلمة المرور",
        "رمز عبور",
        "گذرواژه",
        "كلمة السر",
        "पासवर्ड",
        "รหัสผ่าน",
        "סיסמה",
        "סיסמא",
    ),
    PIN: (
        "暗証番号",
        "PIN码",
        "PIN碼",
        "PINは",
        "PINを",
        "PIN은",
        "PIN번호",
        "핀번호",
        "الرقم السري",
        "入室コード",
        "解錠コード",
        "门禁密码",
        "門禁密碼",
    ),
    CREDENTIAL: (
        "密钥",
        "秘钥",
        "令牌",
        "トークン",
        "シークレット",
        "APIキー",
        "토큰",
        "API 키",
        "مفتاح",
        "टोकन",
    ),
}


class Phrase(NamedTuple):
    words: tuple[str, ...]
    family: str
    compound: bool


def _phrases() -> dict[str, list[Phrase]]:
    """Phrases by their first word (a compound's by its last), longest first."""
    out: dict[str, list[Phrase]] = {}
    for family, spec in _VOCABULARY.items():
        for item in spec.split(","):
            words = tuple(item.replace("-", " ").replace("_", " ").lower().split())
            if not words:
                continue
            compound = words[0].startswith("*")
            phrase = Phrase(tuple(w.lstrip("*") for w in words), family, compound)
            out.setdefault(phrase.words[0], []).append(phrase)
    for phrases in out.values():
        phrases.sort(key=lambda p: -len(p.words))
    return out


_BY_FIRST = _phrases()
_COMPOUNDS = tuple(p.words[0] for ps in _BY_FIRST.values() for p in ps if p.compound)
_WORD = re.compile(r"[^\W_]+")
_JOIN = frozenset(" \t-_'’")
_NOT_BEFORE = frozenset("/.:\\-_<{%")  # inside a path, flag, key, identifier or placeholder
_NOT_AFTER = frozenset("-_")


class Found(NamedTuple):
    family: str
    weak: bool
    end: int
    start: int


def labels(text: str) -> Iterator[Found]:
    """Every prose label in the text, in order."""
    words = [(m.start(), m.end(), m[0].lower()) for m in _WORD.finditer(text)]
    i = 0
    while i < len(words):
        matched = _phrase_at(text, words, i)
        if matched is None:
            i += 1
            continue
        phrase, last = matched
        yield Found(
            phrase.family if phrase.family != WEAK else CREDENTIAL,
            phrase.family == WEAK,
            words[last][1],
            words[i][0],
        )
        i = last + 1
    yield from _cjk(text)


def _phrase_at(text: str, words: list[tuple[int, int, str]], i: int) -> tuple[Phrase, int] | None:
    start, _, word = words[i]
    candidates = _BY_FIRST.get(word, [])
    if not candidates and word.endswith(_COMPOUNDS):
        candidates = [p for c in _COMPOUNDS if word.endswith(c) for p in _BY_FIRST[c]]
    before = text[start - 1] if start else " "
    for phrase in candidates:
        if before in _NOT_BEFORE and not (phrase.compound and before == "-"):
            continue
        last = _match(text, words, i, phrase)
        if last is None:
            continue
        end = words[last][1]
        if end < len(text) and (text[end] in _NOT_AFTER or text[end].isalnum()):
            continue
        line = text.rfind("\n", 0, start)
        before_words = (w[2] for w in words[max(0, i - 3) : i] if w[0] > line)
        if phrase.family == WEAK and any(w in _OTHER_KEYS for w in before_words):
            continue
        return phrase, last
    return None


def _match(text: str, words: list[tuple[int, int, str]], i: int, phrase: Phrase) -> int | None:
    """The index of the phrase's last word when it starts at word i."""
    if i + len(phrase.words) > len(words):
        return None
    for k, wanted in enumerate(phrase.words):
        word = words[i + k][2]
        if wanted != "?" and word != wanted and not (phrase.compound and word.endswith(wanted)):
            return None
        if k and not set(text[words[i + k - 1][1] : words[i + k][0]]) <= _JOIN:
            return None
    return i + len(phrase.words) - 1


def _cjk(text: str) -> Iterator[Found]:
    for family, phrases in _CJK.items():
        for phrase in phrases:
            at = text.find(phrase)
            while at >= 0:
                yield Found(family, False, at + len(phrase), at)
                at = text.find(phrase, at + 1)


# What a prose label needs (`labels`): whole words that lower-case to a phrase's words,
# joined by _JOIN, or a word ending in a compound's word; or a label of a script without
# spaces, as is. IGNORECASE folds every character that `str.lower` maps to a letter of a
# label (tests check this over all of Unicode).
_JOINED = "[" + re.escape("".join(sorted(_JOIN))) + "]+"


def _phrase_atoms(phrase: Phrase) -> list[str]:
    atoms: list[str] = []
    for k, word in enumerate(phrase.words):
        atoms += [_JOINED] if k else []
        atoms += [r"[^\W_]+"] if word == "?" else [re.escape(char) for char in word]
    return atoms


LABEL_WORD = AtWord(
    rf"(?i:{any_sequence(_phrase_atoms(p) for ps in _BY_FIRST.values() for p in ps if not p.compound)})"
    r"(?![^\W_])"
)
LABEL_IN_WORD = "|".join(
    [
        *(f"(?:{led(word)})(?![^\\W_])" for word in _COMPOUNDS),
        *(re.escape(phrase) for phrases in _CJK.values() for phrase in phrases),
    ]
)
LABEL = (LABEL_WORD, LABEL_IN_WORD)


def label_family(text: str) -> str | None:
    """The family of a text that is one label (a table header), if it is one."""
    found = list(labels(text.strip()))
    if len(found) != 1 or found[0].weak or found[0].end != len(text.strip()):
        return None
    return found[0].family


# ---- keys --------------------------------------------------------------------------------

# Key names: the LAST words name a secret (`DB_PASSWORD`, `apiKey`, `X-Auth-Token`,
# `aws_secret_access_key`); `TOKEN_TTL`, `password_file`, `secretName`, `PASS` do not.
_KEY_TAILS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("password",),
        ("passwd",),
        ("pwd",),
        ("passphrase",),
        ("secret",),
        ("token",),
        ("apikey",),
        ("credential",),
        ("credentials",),
        ("pin",),
        ("psk",),
        ("api", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("private", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("auth", "key"),
        ("account", "key"),
        ("app", "key"),
        ("license", "key"),
        ("client", "secret"),
        ("secret", "key", "base"),
        ("shared", "key"),
        ("hmac", "key"),
        ("totp", "seed"),
        ("access", "token"),
        ("sig",),
        ("private", "key", "id"),
        ("requirepass",),
        ("masterauth",),
        ("subscription", "key"),
        ("storepass",),
        ("keypass",),
        ("srcstorepass",),
        ("deststorepass",),
        ("srckeypass",),
        ("destkeypass",),
        ("sessionid",),
        ("application", "key"),
        ("application", "secret"),
        ("appid",),
        ("routing", "key"),
        ("setup", "key"),
        ("integration", "key"),
    }
)
# `PGPASSWORD`, `authtoken`, `clientsecret`: a secret word glued to a prefix.
_GLUED_TAILS = ("password", "passwd", "secret", "token", "apikey")


_TAILS_BY_LAST: dict[str, list[tuple[str, ...]]] = {}
for _tail in _KEY_TAILS:
    _TAILS_BY_LAST.setdefault(_tail[-1], []).append(_tail)


_HASHED = frozenset("hash hashed digest checksum fingerprint sha1 sha256 md5 bcrypt".split())
# A token that pages through results, not one that grants access.
_NOT_CREDENTIAL = frozenset("page next continuation pagination cursor sync csrf".split())


# What `names_secret` needs of a key: its last piece (ASCII letters that no ASCII letter
# or digit follows) is a tail's last word, `pass`, or ends with a glued tail; `id` and
# `base` end no tail alone, so their tails need their first word. `key` itself (a bare
# key beside a user) is a tail's last word.
_NAME_WORDS = {tail[-1] for tail in _KEY_TAILS if tail[-1] not in ("id", "base")}
KEY_NAME = (
    rf"(?ai:{any_of(_NAME_WORDS | {'pass', *_GLUED_TAILS})})(?![A-Za-z0-9])"
    rf"|(?ai:{any_of(tail[0] for tail in _KEY_TAILS if tail[-1] in ('id', 'base'))})"
)


def names_secret(key: str) -> bool:
    """Whether a key's last words name a secret."""
    words = tuple(w.lower() for w in PIECES.findall(key))
    if not words or _HASHED.intersection(words):
        return False  # `hashed_secret`, `password_hash`: a digest of a secret is none
    if len(words) >= 2 and words[-1] == "token" and words[-2] in _NOT_CREDENTIAL:
        return False
    if words[-1] == "pass" and (len(words) >= 2 or key.islower()):
        return True  # DB_PASS and `pass:`, not a test runner's PASS:
    tails = _TAILS_BY_LAST.get(words[-1], ())
    return any(words[-len(t) :] == t for t in tails) or words[-1].endswith(_GLUED_TAILS)


def key_family(key: str) -> str:
    words = [w.lower() for w in PIECES.findall(key)]
    last = words[-1] if words else ""
    if last == "passphrase":
        return PASSPHRASE
    if last == "pin":
        return PIN
    if last in ("password", "passwd", "pwd") or last.endswith(("password", "passwd", "pass")):
        return PASSWORD
    return CREDENTIAL


def weak_key(key: str) -> bool:
    pieces = PIECES.findall(key)
    return bool(pieces) and pieces[-1].lower() in ("auth", "sig")
