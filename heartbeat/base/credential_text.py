"""Credentials a text gives away, masked: a URL's, a command's, an error's, a tool's name.

Free text holds credentials too: an argument's value (a URL's ``?api_key=...``, a command's
``Authorization: Bearer ...`` or ``export OPENAI_API_KEY=sk-...``, a DSN's ``user:password@`` or key
as its user, ``https://<key>@...``) and an error's text (a client error quoting the URL it failed
on). :func:`mask_credential_text` masks what can be told from the text alone: the value after a
credential-named key (``name=``, ``name:``, ``"name": "``; which names: :mod:`.credentials`), after
``Bearer``/``Basic``, a URL's password, ``-u user:password``, ``mysql -p<password>``, ``redis-cli -a
<password>``, a value beside its credential's name in a JSON text (``{"header_name": "X-Api-Key",
"header_value": ...}``), a credential-named flag's value (``--api-key X``, ``--token=X``), a
credential told in prose (``the auth token is 9f8e...``: a digit in six characters or more, or
twenty, after a credential's name and "is"), and tokens whose form gives them away
(``sk-``/``sk_live_``, ``ghp_``, ``github_pat_``, GitLab's ``glpat-``/``glptt-``..., ``xox?-``,
``xapp-``, ``AKIA``/``ASIA``, ``AIza``, ``hf_``, ``npm_``, ``pypi-``, ``dckr_pat_``, SendGrid's,
Shopify's, DigitalOcean's, Google's ``ya29.``, Vault's ``hvs.``, Atlassian's ``ATATT``, Linear's
``lin_api_``, New Relic's ``NRAK-``, Doppler's ``dp.st.``, Okta's ``SSWS``, Heroku's ``HRKU-``,
Databricks' ``dapi``, Stripe's ``whsec_``, Google's ``GOCSPX-``, Pulumi's ``pul-``, Supabase's ``sbp_``,
Fly.io's ``fm2_``, an Azure client secret (``...8Q~...``), an age secret key, a Telegram bot's
token, a Discord bot's token (and the value after ``Bot``), a ``.pgpass`` line's password, a JWT, an
incoming webhook's path, a signed URL's signature, a PEM private key, a PGP private key block).
Summaries and error texts pass through it before anything keeps or shows them; so do names an agent
or a model chose (a tool's, a model's: :func:`mask_name`), which are kept and shown on their own.

Pure and standard library only: the detectors' fingerprints use it for every recorded action.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, partial

from .credentials import KNOWN_LIMIT, KNOWN_NAME, MASK, credential_name, credential_words, name_words

__all__ = ["mask_credential_text", "mask_name"]


def _lazy(source: str) -> Callable[[], re.Pattern[str]]:
    """A pattern compiled at its first use: together they cost an import 2 ms, and a cron tick
    that records no failure and no ``name=value`` never needs most of them."""
    return cache(lambda: re.compile(source))


# Tokens whose form gives them away, wherever they stand.
_TOKEN = _lazy(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:sk|rk)[-_][A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic (sk-ant-), Stripe (sk_live_, rk_live_)
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"  # GitHub
    r"|gl(?:pat|rt|dt|ptt|cbt|imt|soat|ffct|oas|agent)-[\w-]{20,}"  # GitLab's: personal, runner, trigger...
    r"|whsec_[A-Za-z0-9]{24,}|GOCSPX-[\w-]{24,}"  # a Stripe webhook's signing secret, a Google client's
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"  # Slack's bot, user and app tokens
    # An incoming webhook's URL is its credential: its path after the host (Slack's, Discord's)
    r"|(?<=hooks\.slack\.com/services/)[\w/]{20,}|(?<=/api/webhooks/)\d+/[\w-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[\w-]{35}"  # Google API keys
    r"|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}"  # Hugging Face, npm
    r"|pypi-AgE[\w-]{40,}|dckr_pat_[\w-]{20,}"  # PyPI, Docker Hub
    r"|SG\.[\w-]{16,}\.[\w-]{16,}"  # SendGrid
    r"|SK[0-9a-fA-F]{32}(?![0-9A-Za-z])|key-(?=[A-Za-z]*\d)[0-9A-Za-z]{24,}"  # Twilio's API key, Mailgun's
    r"|[A-Za-z0-9]{10,}\.atlasv1\.[\w-]{16,}"  # Terraform Cloud's
    r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}"  # Shopify, DigitalOcean
    r"|ya29\.[\w-]{20,}|hv[sbr]\.[\w-]{24,}"  # a Google OAuth access token, HashiCorp Vault's
    r"|ATATT[\w=-]{20,}|lin_api_[A-Za-z0-9]{32,}|NRAK-[A-Za-z0-9]{20,}"  # Atlassian's, Linear's, New Relic's
    r"|dp\.(?:st|pt|ct|sa)\.[\w.-]{20,}"  # Doppler's
    r"|HRKU-[\w-]{30,}"  # Heroku's
    r"|pul-[A-Za-z0-9]{32,}|sbp_[A-Za-z0-9]{32,}|fm[12]_[\w+/=-]{32,}"  # Pulumi's, Supabase's, Fly.io's
    r"|[\w.-]{3}\dQ~[\w.~-]{31,34}"  # an Azure (Entra ID) client secret: its 4th-6th characters "8Q~"
    r"|dapi[0-9a-f]{32}(?:-\d+)?|AGE-SECRET-KEY-1[0-9A-Z]{50,}"  # Databricks', an age secret key
    r"|(?:bot)?\d{8,10}:AA[\w-]{30,}"  # a Telegram bot's token (its id, its secret), in a URL after /bot
    # A Discord bot's token: its user id in base64 (a digit's code: M, N or O first), a stamp, a MAC
    r"|[MNO][A-Za-z\d]{23,27}\.[\w-]{6}\.[\w-]{27,40}(?![\w-])"
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
# twice or three times: a JSON text inside a JSON text's string, as a call's summary shows a request
# body, and one more inside it: up to seven backslashes before a quote), the value
# after an optional auth scheme; masked when the name is a credential's (is_credential_key).
# The value is looked ahead at, not taken, so a value that is itself a name ("note": "password:
# x") is tried as one; it stops where a URL's query or a list goes on (& ; , ? #), and holds the
# "=" of a base64 key or a generated password after its first character (api_key=Zm9v=YmFy). A
# name (a letter or "_" first: npm's ``_authToken``) starts a word, not a path's last part
# (".../github-token: could not save state" names a file), or a line, also one a JSON text escapes
# ("HOME=/root\\nPGPASSWORD=...", ``env`` printed into an argument), and is taken whole
# (possessive): linear time on a 64 KiB exception message.
_PAIR = _lazy(
    r"""(?:(?<![\w.\-/\\])|(?<=\\[nrt]))([A-Za-z_][\w.-]*+)\\{0,7}["']?[ \t]*[:=][ \t]*\\{0,7}["']?"""
    r"""(?=(?:(?:Bearer|Basic|Token|bearer|basic|token|SSWS|Bot)[ \t]+)?([^\s"'&;,?#:=\\]))"""
)
# The rest of a pair's value, read only after a credential's name: looked ahead at for every pair,
# a run of them ("a=b=c=...") would be read to its end again at each "=" (quadratic: seconds on a
# 40 KiB text).
_VALUE_REST = _lazy(r"""[^\s"'&;,?#:\\]*""")
# A cookie header's further name=value pairs after the first ("Cookie: a=1; session=8f7e..."): a
# cookie's every value may be a session's key.
_COOKIES = _lazy(r"""(?:;[ \t]*[^\s"'&;,?#:\\]+)*""")
_LEFT_TO_TOKENS = frozenset([MASK, "-----BEGIN"])  # a pair's value masked, or a PEM key's start
# SSWS: Okta's; Bot: Discord's, before a token's length only ("the Bot framework" stays)
_SCHEME = _lazy(r"\b((?:Bearer|Basic|bearer|basic|SSWS)[ \t]+|Bot[ \t]+(?=[\w.~+/=-]{50}))[\w.~+/=-]{8,}")
_USERINFO = _lazy(r"""(://[^/\s:@"'\\]*:)[^/\s@"'\\]+(?=@)""")  # redis://:pw@ has no user
# A URL whose user is a key, no password after it (a Sentry DSN's https://<key>@o1.ingest.sentry.io,
# a token given as the user of a clone URL): a user name that long is no person's.
_KEY_USER = _lazy(r"""(?<=://)[\w-]{20,}(?=@)""")
# A command line's credential-named flag and its value: --api-key X, --token=X, --password 'a b',
# and as an argv list shows it in JSON ("--token", "X"). The value is a word of three characters or
# more, or a quoted text; a word that is another flag is no value. The flag's name is tested as a
# key's is (_credential_name): --max-tokens 100 stays.
# (A flag saying no, ``--no-auth-warning``, takes no value: the word after it is the command's.)
_FLAG = _lazy(
    r"""(?<![^\s"'\[])(--?(?!no-)([A-Za-z][\w-]*+))(=|[ \t]+|\\?["'],[ \t]*\\?["'])"""
    r"""('[^'\n]*'|"[^"\n]*"|(?!-)[^\s"'\\,\]]{3,})"""
)
# curl's, wget's and many tools' user:password after -u / --user (not docker's uid:gid), also as
# an argv list shows it in JSON ("-u", "admin:pw").
_USER_FLAG = _lazy(
    r"""((?<![^\s"'\[])(?:-u|--user)(?:[ =]|\\?["'],[ \t]*)\\?["']?[^\s:"'\\\d][^\s:"'\\]*:)[^\s"'\\]+"""
)
# The MySQL clients' password written against its flag: mysql -uroot -pS3cret app.
_MYSQL_PASSWORD = _lazy(r"""(\bmysql(?:dump|admin|import|show|check)?\b[^\n|;&]*?(?<!\S)-p)[^\s"'\\]+""")
# A password given to a program by its -p: a registry's login (docker login -u ci -p X), sshpass;
# or by its -a: redis-cli -a X.
_P_PASSWORD = _lazy(
    r"""((?:\b(?:docker|podman|buildah|nerdctl)\s+login\b[^\n|;&]*?(?<!\S)-p|\bsshpass\s+-p"""
    r"""|\bredis-cli\b[^\n|;&]*?(?<!\S)-a)[ \t]*)"""
    r"""[^\s"'\\;&|-][^\s"'\\;&|]*"""
)
# A setting given by name and value apart: aws configure set aws_secret_access_key X.
_SET_PAIR = _lazy(r"""(\bconfigure[ \t]+set[ \t]+)([\w.-]+)([ \t]+)([^\s"'\\]+)""")
# A credential given as a name and a value side by side in a JSON text ("request failed:
# {"header_name": "X-Api-Key", "header_value": "..."}"), as :mod:`.credentials` masks them in the
# arguments: the value after a name field that names a credential (also JSON-escaped).
_NAMED_VALUE = _lazy(
    r"""(\\{0,7}"(?:name|key|header|header_name|headerName|field|Name|Key)\\{0,7}"[ \t]*:[ \t]*\\{0,7}")"""
    r"""([^"\\]+)(\\{0,7}"[ \t]*,[ \t]*"""
    r"""\\{0,7}"(?:value|header_value|headerValue|Value)\\{0,7}"[ \t]*:[ \t]*\\{0,7}")([^"\\]+)"""
)
# A .pgpass line's password (host:port:database:user:password), at a line's start (also one a JSON
# text escapes), a word's or a quote's: its port a number or "*", its database and user each a name or "*".
_PGPASS = _lazy(
    r"""(?m)((?:^|(?<=\\n)|(?<=[\s"'])|(?<=\\["']))[\w.*-]+:(?:\d{1,5}|\*):[A-Za-z_*][^\s:"'\\]*:[A-Za-z_*][^\s:"'\\]*:)"""
    r"""[^\s"'\\]+"""
)
# A .netrc entry's password: machine api.example.com login me password X (on one line or several).
_NETRC = _lazy(r"""(\bmachine\s+\S+(?:\s+(?:login|account)\s+\S+)*\s+password\s+)[^\s"'\\]+""")


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
                or "lin_api_" in text
                or "whsec_" in text
                or "sbp_" in text  # Supabase's
                or "m1_" in text  # Fly.io's fm1_, fm2_
                or "m2_" in text
            )
        )
        or (
            "." in text and ("ya29." in text or "hv" in text or "dp." in text)  # Google's, Vault's, Doppler's
        )
        or "ATATT" in text
        or "dapi" in text  # Databricks'
        or ":AA" in text  # Telegram's
        or (len(text) >= 59 and "." in text and _discord_marked(text))
        or ("pypi-" in text or "SG." in text or "sig=" in text or "Signature=" in text)
        or ("SK" in text or "key-" in text or "atlasv1" in text)
        # sk-, rk-; glpat-; xox?-, xapp-; a PEM key's "PRIVATE KEY-----", a PGP key's "KEY BLOCK-----"
        or (
            "-" in text
            and (
                "k-" in text
                or "gl" in text
                or "xox" in text
                or "xapp-" in text
                or "KEY" in text
                or "AK-" in text
                or "KU-" in text
                or "PX-" in text  # Google's GOCSPX-
                or "pul-" in text  # Pulumi's
            )
        )
        or ("/" in text and ("hooks.slack.com/" in text or "/webhooks/" in text))
        or ("A" in text and ("AKIA" in text or "ASIA" in text or "AIza" in text))
        or "eyJ" in text
        or "Q~" in text  # an Azure client secret
    )


def _discord_marked(text: str) -> bool:
    """Whether ``text`` holds the start of a Discord token: a user id's first digit in base64."""
    return any(head in text for head in ("MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"))


def _mask_pairs(text: str, named: Callable[[str], bool] = credential_name) -> str:
    """``text`` with the value of every ``name=value`` pair whose name is a credential's masked."""
    parts: list[str] = []
    done = 0
    rest = _VALUE_REST()
    for match in _PAIR().finditer(text):
        start = match.start(2)
        if start < done or not named(match.group(1)):
            continue  # masked already, or no credential's name
        end = found.end() if (found := rest.match(text, start + 1)) else start + 1
        if text[start:end] in _LEFT_TO_TOKENS:
            continue  # masked, or a PEM key: _TOKEN masks it whole, its BEGIN line to its END line
        if "ookie" in match.group(1):  # Cookie, Set-Cookie, cookies: each pair of the header
            end = more.end() if (more := _COOKIES().match(text, end)) else end
        parts += (text[done:start], MASK)
        done = end
    return "".join(parts) + text[done:] if parts else text


def _mask_flags(text: str, named: Callable[[str], bool] = credential_name) -> str:
    """``text`` with the value of every credential-named flag (``--api-key X``) masked."""

    def masked(match: re.Match[str]) -> str:
        if match.group(4) == MASK or not named(match.group(2)):
            return match.group(0)
        return match.group(1) + match.group(3) + MASK

    return _FLAG().sub(masked, text)


def mask_credential_text(text: str, named: Callable[[str], bool] = credential_name) -> str:
    """``text`` with the credentials that can be told from the text alone as ``***``.

    See the module's docstring for which; ``named`` says which names are a credential's (an agent's
    own data keeps a cursor's ``next_token``: :func:`.kept_data.is_kept_secret`). Quick tests
    first: most texts (a search, a file path, a command) contain none of the marks and cost a few
    substring tests.
    """
    if "=" in text or ": " in text:
        text = _mask_pairs(text, named)
    text = _mask_schemes(text)
    if "-u" in text:
        text = _USER_FLAG().sub(_masked_after, text)
    if " -p" in text and "mysql" in text:
        text = _MYSQL_PASSWORD().sub(_masked_after, text)
    # One pass for a login's or sshpass's -p and redis-cli's -a (whose -p is a port: -h H -p 6380 -a X).
    if (" -p" in text and ("login" in text or "sshpass" in text)) or (" -a" in text and "redis-cli" in text):
        text = _P_PASSWORD().sub(_masked_after, text)
    by_name = _masked_named if named is credential_name else partial(_masked_named, named=named)
    if "configure" in text:
        text = _SET_PAIR().sub(by_name, text)
    if text.count(":") >= 4:
        text = _PGPASS().sub(_masked_after, text)
    if "machine" in text and "password" in text:
        text = _NETRC().sub(_masked_after, text)
    if "alue" in text and '"' in text:
        text = _NAMED_VALUE().sub(by_name, text)
    if "--" in text:
        text = _mask_flags(text, named)
    if (" is" in text or " was" in text) and any(name in text for name in _PROSE_NAMES):
        text = _mask_prose(text)
    return _mask_tokens(text)


def _masked_named(match: re.Match[str], named: Callable[[str], bool] = credential_name) -> str:
    """A match of a name and its value apart (:data:`_SET_PAIR`, :data:`_NAMED_VALUE`: groups 1 to
    4, what comes before the name, the name, what stands between, the value) with the value masked
    when the name is a credential's."""
    if match.group(4) == MASK or not named(match.group(2)):
        return match.group(0)
    return match.group(1) + match.group(2) + match.group(3) + MASK


def _masked_after(match: re.Match[str]) -> str:
    """A match of what comes before a credential (group 1) and the credential: the latter masked."""
    return match.group(1) + MASK


def _mask_schemes(text: str) -> str:
    """``text`` with the value after ``Bearer``/``Basic``/``SSWS`` and a URL's password masked."""
    if "earer" in text or "asic " in text or "SSWS " in text or "Bot " in text:
        text = _SCHEME().sub(_masked_after, text)
    if "@" in text:
        text = _KEY_USER().sub(MASK, _USERINFO().sub(_masked_after, text))
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
