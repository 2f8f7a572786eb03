"""Credentials an agent passes as tool arguments: values of credential-named keys, masked.

An agent that calls ``login(user="ann", password="hunter2")`` or
``fetch(url=..., headers={"Authorization": "Bearer ..."})`` hands heartbeat a
secret that no config names. Every text heartbeat keeps of an action (its
summary, and so ``state.json``, the journal, ``ESCALATION.md``, notifications,
``report.html``, ``status`` and ``replay``) shows the values of such keys as
``***``, at any depth; the fingerprint still hashes the real values, so a call
repeated with the same password is still seen as a repeat.

A key is a credential when one of its words (``apiKey`` and ``api-key`` are
``api key``) says so: ``password``, ``passwd``, ``passphrase``, ``secret``,
``credential(s)``, ``authorization``, ``auth``, ``cookie``, ``bearer``, or ends in
``password`` run together with another (``PGPASSWORD``); or
when it ends in ``token`` (``access_token``, ``token``, not ``max_tokens``)
or in ``key`` after a word such as ``api``, ``access``, ``secret``,
``private`` or ``signing`` (``api_key``, ``AWS_SECRET_ACCESS_KEY``; a bare
``key``, a cache key, is not).

Free text holds credentials too: an argument's value (a URL's ``?api_key=...``, a command's
``Authorization: Bearer ...`` or ``export OPENAI_API_KEY=sk-...``, a DSN's ``user:password@``) and
an error's text (a client error quoting the URL it failed on). :func:`mask_credential_text` masks
what can be told from the text alone: the value after a credential-named key (``name=``, ``name:``,
``"name": "``, as above), after ``Bearer``/``Basic``, a URL's password, ``-u user:password``,
``mysql -p<password>``, a credential-named flag's value (``--api-key X``, ``--token=X``), a
credential told in prose (``the auth token is 9f8e...``: a digit in six characters or more, or
twenty, after a credential's name and "is"), and tokens whose form gives them away
(``sk-``/``sk_live_``, ``ghp_``, ``github_pat_``, ``glpat-``, ``xox?-``, ``xapp-``,
``AKIA``/``ASIA``, ``AIza``, ``hf_``, ``npm_``, ``pypi-``, ``dckr_pat_``, SendGrid's, Shopify's,
DigitalOcean's, a JWT, an incoming webhook's path, a signed URL's signature, a PEM private key, a
PGP private key block). Summaries and error texts pass through it before anything keeps or shows
them; so do names an agent or a model chose (a tool's, a model's: :func:`mask_name`), which are kept
and shown on their own.

Pure and standard library only: the detectors' fingerprints use it for every
recorded action. What the agent keeps in its own data is masked by :mod:`.kept_data`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

__all__ = [
    "KNOWN_LIMIT",
    "KNOWN_NAME",
    "LEAVES",
    "MASK",
    "credential_words",
    "holds_credentials",
    "is_credential_key",
    "mask_credential_text",
    "mask_credentials",
    "mask_forms",
    "mask_name",
    "name_words",
]

MASK = "***"
"""What a credential's value is shown as."""

_ANY_WORD = frozenset(
    [
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "secrets",
        "credential",
        "credentials",
        "authorization",
        "auth",
        "cookie",
        "cookies",
        "bearer",
        "apikey",
        "apikeys",
        "privatekey",
        "sessionid",
        "sessiontoken",
    ]
)
_KEY_AFTER = frozenset(
    [
        "api",
        "access",
        "secret",
        "private",
        "signing",
        "client",
        "auth",
        "encryption",
        "master",
        "ssh",
        "license",
        "session",
        "webhook",
        "account",
        "service",
        "app",
        "subscription",
    ]
)
_ENDINGS = ("password", "passwd", "passphrase")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORDS = re.compile(r"[a-z0-9]+")
# is_credential_key of the key names seen (bounded): an agent uses the same few names again
# and again, and the test of a name costs two regexes.
_KNOWN: dict[object, bool] = {}  # keyed by plain str names only
KNOWN_LIMIT = 4096
"""How many names a cache of names' answers keeps."""
KNOWN_NAME = 64
"""The longest name such a cache keeps: longer names are tested each time."""
_SAFE: set[str] = set()  # the names among them that are no credential's
_PLAIN_STR = frozenset([str])
LEAVES = frozenset([str, int, float, bool, type(None)])
"""The classes of values that hold no keys: skipped without an isinstance test."""


def is_credential_key(name: object) -> bool:
    """Whether an argument named ``name`` holds a credential (see the module docstring)."""
    if not isinstance(name, str) or not name:
        return False
    return credential_words(name_words(name))


def credential_words(words: list[str]) -> bool:
    """:func:`is_credential_key` of a name already split into its words."""
    if not words:
        return False
    if _ANY_WORD.intersection(words) or "".join(words) in _ANY_WORD:
        return True
    last = words[-1]
    if last.endswith(_ENDINGS):  # one word run together: PGPASSWORD, dbpasswd, MYSQL_ROOTPASSWORD
        return True
    if last == "token":
        return True
    return last == "key" and len(words) > 1 and words[-2] in _KEY_AFTER


def name_words(name: str) -> list[str]:
    """The words of a key's name, lowercased: ``apiKey`` and ``api-key`` are ``api key``."""
    return _WORDS.findall(_CAMEL.sub(r"\1 \2", name).lower())


def _credential_name(name: object) -> bool:
    """is_credential_key, remembered for short plain-str names."""
    if name.__class__ is not str:  # a subclass may compare or hash as it likes: not kept
        return is_credential_key(name)
    found = _KNOWN.get(name)
    if found is None:
        found = is_credential_key(name)
        if len(_KNOWN) < KNOWN_LIMIT and len(name) <= KNOWN_NAME:
            _KNOWN[name] = found
            if not found:
                _SAFE.add(name)
    return found


# A credential given as a name and a value side by side: a HAR header ``{"name": "X-Api-Key",
# "value": "..."}``, a Kubernetes env entry, ``{"header_name": ..., "header_value": ...}``.
_NAME_KEYS = ("name", "key", "header", "header_name", "headerName", "field", "Name", "Key")
_VALUE_KEYS = frozenset(["value", "header_value", "headerValue", "Value"])


def _named_value(item: Mapping[Any, Any]) -> Any:
    """The key of ``item``'s value that a key beside it names as a credential's; else None."""
    if _VALUE_KEYS.isdisjoint(item):
        return None
    named = next((item[key] for key in _NAME_KEYS if key in item), None)
    if named.__class__ is not str or not _credential_name(named):
        return None
    return next(key for key in item if key in _VALUE_KEYS)


def holds_credentials(value: Any) -> bool:
    """Whether :func:`mask_credentials` would mask anything: a credential-named key at any depth."""
    # Per recorded action: the keys are looked at, not the text of the values. Most arguments
    # are one plain dict of plain values with names seen before: one pass, no walk.
    known = _KNOWN
    leaves = LEAVES
    if value.__class__ is dict:
        # The common case in C: plain str names, all known to be safe, and plain values.
        if (
            _SAFE.issuperset(value)
            and _PLAIN_STR.issuperset(map(type, value))
            and leaves.issuperset(map(type, value.values()))
            and _VALUE_KEYS.isdisjoint(value)
        ):
            return False
        if _named_value(value) is not None:
            return True
        nested = False
        for name, inner in value.items():
            found = known.get(name) if name.__class__ is str else None
            if found is None:
                found = _credential_name(name)
            if found:
                return True
            if inner.__class__ not in leaves:
                nested = True
        if not nested:
            return False
    seen: set[int] = set()
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if item.__class__ in leaves or id(item) in seen:
            continue
        if isinstance(item, Mapping):
            seen.add(id(item))
            if _named_value(item) is not None:
                return True
            for name, inner in item.items():
                if _credential_name(name):
                    return True
                if inner.__class__ not in leaves:
                    stack.append(inner)
        elif isinstance(item, list | tuple):
            seen.add(id(item))
            stack.extend(item)
    return False


def mask_credentials(value: Any) -> Any:
    """A copy of JSON-like arguments with the value of every credential-named key as ``***``, and
    of a ``value`` whose ``name`` beside it is a credential's (``{"name": "X-Api-Key", "value": ...}``).

    At any depth and without recursion; other values are kept as they are (not copied).
    A container met twice (passed twice, or a cycle) is the same masked copy both times:
    the original, kept, would show its secrets.
    """
    root: list[Any] = [None]
    copies: dict[int, Any] = {}
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if id(item) in copies:
            parent[key] = copies[id(item)]
        elif isinstance(item, Mapping | list | tuple):
            if isinstance(item, Mapping):
                new: Any = {}
                named = _named_value(item)
                for name, inner in item.items():
                    if _credential_name(name) or (named is not None and name == named):
                        new[name] = MASK
                    else:
                        new[name] = None  # the keys keep their order; the value is filled in below
                        stack.append((inner, new, name))
            else:
                new = [None] * len(item)
                stack.extend((inner, new, i) for i, inner in enumerate(item))
            copies[id(item)] = parent[key] = new
        else:
            parent[key] = item
    return root[0]


def _lazy(source: str) -> Callable[[], re.Pattern[str]]:
    """A pattern compiled at its first use: together they cost an import 2 ms, and a cron tick
    that records no failure and no ``name=value`` never needs most of them."""
    return cache(lambda: re.compile(source))


# Tokens whose form gives them away, wherever they stand.
_TOKEN = _lazy(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:sk|rk)[-_][A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic (sk-ant-), Stripe (sk_live_, rk_live_)
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}"  # GitHub, GitLab
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"  # Slack's bot, user and app tokens
    # An incoming webhook's URL is its credential: its path after the host (Slack's, Discord's)
    r"|(?<=hooks\.slack\.com/services/)[\w/]{20,}|(?<=/api/webhooks/)\d+/[\w-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[\w-]{35}"  # Google API keys
    r"|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}"  # Hugging Face, npm
    r"|pypi-AgE[\w-]{40,}|dckr_pat_[\w-]{20,}"  # PyPI, Docker Hub
    r"|SG\.[\w-]{16,}\.[\w-]{16,}"  # SendGrid
    r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}"  # Shopify, DigitalOcean
    # a signed URL's signature (Azure's SAS, S3's and GCS's presigned URLs): its access, in the clear
    r"|(?<=[?&]sig=)[^&\s\"'#\\]+|(?<=[?&]X-Amz-Signature=)[^&\s\"'#\\]+|(?<=[?&]X-Goog-Signature=)[^&\s\"'#\\]+"
    r"|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}"  # a JSON Web Token
    # A PEM private key (OpenSSH's, PKCS#8's, an RSA or EC one), its lines as they are or escaped in
    # a JSON text ("\\n"), through its END line; cut short (a clipped summary), to where it stops.
    # Its body holds no "-----" (the next marker ends it): linear time on a text of many markers.
    r"|-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:(?:[\w+/=\s\\:.,]|-(?!----))*"
    r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"|[\w+/=\s\\]*)"
    r")"
)
# name=value, name: value, "name": "value" (also JSON-escaped, \"name\": \"value\", and escaped
# twice: a JSON text inside a JSON text's string, as a call's summary shows a request body), the value
# after an optional auth scheme; masked when the name is a credential's (is_credential_key).
# The value is looked ahead at, not taken, so a value that is itself a name ("note": "password:
# x") is tried as one; it stops where a URL's query or a list goes on (& ; , ? #), and holds the
# "=" of a base64 key or a generated password after its first character (api_key=Zm9v=YmFy). A
# name starts a word, not a path's last part (".../github-token: could not save state" names a
# file), and is taken whole (possessive): linear time on a 64 KiB exception message.
_PAIR = _lazy(
    r"""(?<![\w.\-/\\])([A-Za-z][\w.-]*+)\\{0,3}["']?[ \t]*[:=][ \t]*\\{0,3}["']?"""
    r"""(?=(?:(?:Bearer|Basic|Token|bearer|basic|token)[ \t]+)?([^\s"'&;,?#:=\\][^\s"'&;,?#:\\]*))"""
)
# A cookie header's further name=value pairs after the first ("Cookie: a=1; session=8f7e..."): a
# cookie's every value may be a session's key.
_COOKIES = _lazy(r"""(?:;[ \t]*[^\s"'&;,?#:\\]+)*""")
_LEFT_TO_TOKENS = frozenset([MASK, "-----BEGIN"])  # a pair's value masked, or a PEM key's start
_SCHEME = _lazy(r"\b((?:Bearer|Basic|bearer|basic)[ \t]+)[\w.~+/=-]{8,}")
_USERINFO = _lazy(r"""(://[^/\s:@"'\\]*:)[^/\s@"'\\]+(?=@)""")  # redis://:pw@ has no user
# A command line's credential-named flag and its value: --api-key X, --token=X, --password 'a b',
# and as an argv list shows it in JSON ("--token", "X"). The value is a word of three characters or
# more, or a quoted text; a word that is another flag is no value. The flag's name is tested as a
# key's is (_credential_name): --max-tokens 100 stays.
_FLAG = _lazy(
    r"""(?<![^\s"'\[])(--?([A-Za-z][\w-]*+))(=|[ \t]+|\\?["'],[ \t]*\\?["'])"""
    r"""('[^'\n]*'|"[^"\n]*"|(?!-)[^\s"'\\,\]]{3,})"""
)
# curl's, wget's and many tools' user:password after -u / --user (not docker's uid:gid), also as
# an argv list shows it in JSON ("-u", "admin:pw").
_USER_FLAG = _lazy(
    r"""((?<![^\s"'\[])(?:-u|--user)(?:[ =]|\\?["'],[ \t]*)\\?["']?[^\s:"'\\\d][^\s:"'\\]*:)[^\s"'\\]+"""
)
# The MySQL clients' password written against its flag: mysql -uroot -pS3cret app.
_MYSQL_PASSWORD = _lazy(r"""(\bmysql(?:dump|admin|import|show|check)?\b[^\n|;&]*?(?<!\S)-p)[^\s"'\\]+""")


# A credential told in prose: "the auth token is 9f8e...", "my password was hunter2". The one or
# two words before "is"/"was" are tested as a key's name is ("the token" ends in token, "max tokens"
# does not); the value must look like one (a digit in six characters or more, or twenty), so "the
# token is invalid" and "the password is wrong" stay as they are.
_PROSE = _lazy(
    r"""(?<![\w-])((?:[A-Za-z][\w-]*[ \t]+)?[A-Za-z][\w-]*)[ \t]+(?:is|was)(?:[ \t]*:[ \t]*|[ \t]+)["'`]?"""
    r"""([^\s"'`<>,;()\[\]{}]{6,})"""
)
_PROSE_NAMES = ("oken", "assw", "ecret", "key", "Key", "KEY", "redential", "uth")


def _mask_prose(text: str) -> str:
    """``text`` with a credential told in prose (see :data:`_PROSE`) masked."""

    def masked(match: re.Match[str]) -> str:
        value = match.group(2).rstrip(".:!?")
        looks = len(value) >= 20 or (len(value) >= 6 and any(c.isdigit() for c in value))
        if not looks or value == MASK or not credential_words(name_words(match.group(1))):
            return match.group(0)
        start = match.start(2) - match.start()
        return match.group(0)[:start] + MASK + match.group(2)[len(value) :]

    return _PROSE().sub(masked, text)


def _token_marked(text: str) -> bool:
    """Whether ``text`` holds the start of a token _TOKEN knows (no start, no token): substring
    tests, which cost this per-action path less than any one pattern's scan."""
    # Grouped by a character each start holds, so a text without it (most have no "-", many no
    # "_") pays one search for the group instead of one per start: a quarter of the time.
    return (
        (
            "_" in text
            and (
                "k_" in text  # sk_live_, rk_live_
                or "hp_" in text  # ghp_ (and gho_ ghu_ ghs_ ghr_ below)
                or "ho_" in text
                or "hu_" in text
                or "hs_" in text
                or "hr_" in text
                or "_pat_" in text
                or "hf_" in text
                or "npm_" in text
                or "shp" in text  # shpat_ shpss_ shpca_ shppa_
                or "_v1_" in text  # dop_v1_ doo_v1_ dor_v1_
                or "dckr_" in text
            )
        )
        or ("pypi-" in text or "SG." in text or "sig=" in text or "Signature=" in text)
        # sk-, rk-; glpat-; xox?-, xapp-; a PEM key's "PRIVATE KEY-----", a PGP key's "KEY BLOCK-----"
        or (
            "-" in text
            and ("k-" in text or "glpat-" in text or "xox" in text or "xapp-" in text or "KEY" in text)
        )
        or ("/" in text and ("hooks.slack.com/" in text or "/webhooks/" in text))
        or ("A" in text and ("AKIA" in text or "ASIA" in text or "AIza" in text))
        or "eyJ" in text
    )


def _mask_pairs(text: str) -> str:
    """``text`` with the value of every credential-named ``name=value`` pair masked."""
    parts: list[str] = []
    done = 0
    for match in _PAIR().finditer(text):
        start, end = match.span(2)
        if start < done or match.group(2) in _LEFT_TO_TOKENS or not _credential_name(match.group(1)):
            continue  # masked, or a PEM key: _TOKEN masks it whole, its BEGIN line to its END line
        if "ookie" in match.group(1):  # Cookie, Set-Cookie, cookies: each pair of the header
            end = more.end() if (more := _COOKIES().match(text, end)) else end
        parts += (text[done:start], MASK)
        done = end
    return "".join(parts) + text[done:] if parts else text


def _mask_flags(text: str) -> str:
    """``text`` with the value of every credential-named flag (``--api-key X``) masked."""

    def masked(match: re.Match[str]) -> str:
        if match.group(4) == MASK or not _credential_name(match.group(2)):
            return match.group(0)
        return match.group(1) + match.group(3) + MASK

    return _FLAG().sub(masked, text)


def mask_credential_text(text: str) -> str:
    """``text`` with the credentials that can be told from the text alone as ``***``.

    See the module's docstring for which. Quick tests first: most texts (a
    search, a file path, a command) contain none of the marks and cost a few
    substring tests.
    """
    if "=" in text or ": " in text:
        text = _mask_pairs(text)
    text = _mask_schemes(text)
    if "-u" in text:
        text = _USER_FLAG().sub(lambda m: m.group(1) + MASK, text)
    if "mysql" in text and " -p" in text:
        text = _MYSQL_PASSWORD().sub(lambda m: m.group(1) + MASK, text)
    if "--" in text:
        text = _mask_flags(text)
    if (" is" in text or " was" in text) and any(name in text for name in _PROSE_NAMES):
        text = _mask_prose(text)
    return _mask_tokens(text)


def _mask_schemes(text: str) -> str:
    """``text`` with the value after ``Bearer``/``Basic`` and a URL's password masked."""
    if "earer" in text or "asic " in text:
        text = _SCHEME().sub(lambda m: m.group(1) + MASK, text)
    if "@" in text:
        text = _USERINFO().sub(lambda m: m.group(1) + MASK, text)
    return text


def _mask_tokens(text: str) -> str:
    """``text`` with every token whose form gives it away masked (see :data:`_TOKEN`)."""
    return _TOKEN().sub(MASK, text) if _token_marked(text) else text


# mask_name of the names seen (bounded): an agent calls the same few tools, a framework the same
# few models, once per call.
_NAMES: dict[str, str] = {}


def mask_name(name: str) -> str:
    """A name an agent or a model chose (a tool's, a model's) with the credentials it gives away
    as ``***``, as :func:`mask_credential_text` masks a text: it is kept and shown on its own
    (``state.json``'s ``tool``, the journal, anomaly messages, ``status``), not only inside a
    call's summary."""
    if name.__class__ is not str:  # a subclass may compare or hash as it likes: not kept
        return mask_credential_text(str(name))
    found = _NAMES.get(name)
    if found is None:
        found = mask_credential_text(name)
        if len(_NAMES) < KNOWN_LIMIT and len(name) <= KNOWN_NAME:
            _NAMES[name] = found
    return found


def mask_forms(text: str) -> str:
    """``text`` with what gives a credential away by its form alone masked: a token's form, the
    value after ``Bearer``/``Basic``, a URL's password (no ``name=value``: the agent's own URLs keep
    their cursors)."""
    return _mask_tokens(_mask_schemes(text))
