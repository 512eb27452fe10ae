"""The one public-safety detector (SPEC §3.4).

Everything that may enter a public file passes through here. The detector
*rejects*; it never truncates or redacts, so what is written is exactly what
the caller meant, or nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any, Protocol

from dcx.core.errors import UnsafeText
from dcx.core.terminal import TAGS

TOKEN_MAX = 128
TEXT_MAX = 320
SUMMARY_MAX = 220
REASON_MAX = 120

TOKEN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

# Record keys that never belong in a public record, wherever they appear.
FORBIDDEN_KEYS = frozenset(
    {
        "content",
        "raw_content",
        "api_key",
        "credential",
        "credentials",
        "token",
        "provider_payload",
        "raw_chat",
        "tool_output",
        "raw_provider_payload",
    }
)

_ROOTS = "home|Users|root|tmp|var|etc|opt|srv|mnt|Volumes|private|usr|workspace|workspaces|data"

# (class, pattern, flags, needles). Order is the order reported when several match.
# A pattern runs only when one of its needles — a literal every match holds,
# lower-case for the case-blind ones — is in the text: most text is safe, and
# `in` answers for it long before a regex would.
# Compiled on first use: `dcx status` imports this module but checks no text.
_I = re.IGNORECASE
_PATTERN_SOURCES: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    ("pem_private_key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----", 0, ("-----BEGIN",)),
    ("local_path", r"(?:^|[\s\"'(=,;\[{<])~[/\\]", 0, ("~",)),
    ("local_path", r"(?:^|[^A-Za-z0-9])[A-Za-z]:[\\/][^\s]", 0, (":",)),
    ("local_path", r"(?:^|[\s\"'(=,;\[{<])\\\\[A-Za-z0-9._$-]+\\", 0, ("\\\\",)),
    ("local_path", rf"(?:^|[^A-Za-z0-9._~/-])/(?:{_ROOTS})(?:/|\b)", 0, ("/",)),
    ("url", r"\b[A-Za-z][A-Za-z0-9+.-]*://", 0, ("://",)),
    ("url", r"(?:^|[^A-Za-z0-9_])file:", _I, ("file:",)),
    ("email", r"[A-Za-z0-9._%+-]@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}", 0, ("@",)),
    ("bearer_token", r"\bbearer\s+[A-Za-z0-9._~+/-]{8,}=*", _I, ("bearer",)),
    (
        "credential_assignment",
        r"(?:^|[^A-Za-z0-9])(?:api[_-]?key|secret|password|passwd|token|access[_-]?key)"
        r"\s*[=:]\s*['\"]?[^\s'\"]+",
        _I,
        ("=", ":"),
    ),
    (
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        0,
        ("gh", "github_pat_"),
    ),
    (
        "aws_key",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b",
        0,
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA"),
    ),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0, ("xox",)),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}", 0, ("AIza",)),
    ("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}", 0, ("_live_", "_test_")),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, ("npm_",)),
    ("pypi_token", r"\bpypi-AgE[A-Za-z0-9_-]{20,}", 0, ("pypi-",)),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}", 0, ("eyJ",)),
    # v3 additions (SPEC §3.4)
    (
        "authorization_header",
        r"(?:^|[^A-Za-z0-9-])(?:proxy-)?authorization\s*:\s*\S",
        _I,
        ("authorization",),
    ),
    ("basic_auth", r"\bBasic\s+(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]{12,}={0,2}", 0, ("Basic",)),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", 0, ("sk-ant-",)),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", 0, ("sk-",)),
    ("gitlab_token", r"\bgl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}", 0, ("gl",)),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", 0, ("hf_",)),
    ("twilio_key", r"\b(?:AC|SK)[0-9a-f]{32}\b", 0, ("AC", "SK")),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", 0, ("SG.",)),
    (
        "discord_token",
        r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}",
        0,
        (".",),
    ),
    ("telegram_token", r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])", 0, (":AA",)),
    (
        "azure_connection_string",
        r"\b(?:AccountKey|SharedAccessSignature|SharedAccessKey)\s*=\s*[^\s;]",
        _I,
        ("accountkey", "sharedaccess"),
    ),
    ("aws_secret", r"\baws_?(?:secret_access_key|secret_key|session_token)\b\s*[=:]", _I, ("aws",)),
    # a label, then a private suffix that ends the name (so "x.local" but not "x.localhost")
    (
        "private_host",
        r"[A-Za-z0-9]\.(?:internal|local|lan|corp|intranet|home\.arpa)(?![A-Za-z0-9-]|\.[A-Za-z0-9])",
        _I,
        (".internal", ".local", ".lan", ".corp", ".intranet", ".home.arpa"),
    ),
    (
        "ip_address",
        r"(?<![0-9A-Za-z.])(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}"
        r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?![0-9]|\.[0-9])",
        0,
        (".",),
    ),
    # v4 additions (SPEC §3.4)
    (  # "password": "...", 'client_secret': '...': a JSON or dict pair of a secret-like key
        "json_secret_pair",
        r"[\"'](?:(?:[A-Za-z0-9]+[_.-])*(?i:password|passwd|pwd|secret|token|api[_-]?key|"
        r"access[_-]?key|private[_-]?key|credentials?|auth)(?:[_.-][A-Za-z0-9]+)*|[a-z][a-z0-9]*"
        r"(?:Password|Passwd|Pwd|Secret|Token|Key|Credentials?|Auth)(?:[A-Z][a-z0-9]*)*)[\"']"
        r"\s*:\s*[\"'][^\"'\s]{2,}",
        0,
        ('":', '" :', "':", "' :"),
    ),
    (  # accessToken=, secretKey:, dbPassword = (camelCase keys ending in a secret word)
        "camel_secret_assignment",
        r"\b(?:(?:access|refresh|auth|api|bearer|session|id|csrf|oauth|client|bot|user|github|slack)"
        r"Token|[a-z][a-z0-9]*(?:Secret|Password|Passwd|Pwd|Credentials?)|(?:api|access|secret|private|"
        r"auth|signing|master|encryption|client)Key)\b\s*[=:]\s*['\"]?[^\s'\"]{2,}",
        0,
        ("token", "secret", "passw", "pwd", "key", "credential"),
    ),
    (  # PGPASSWORD=, MYSQL_PWD=, DB_PASSWORD:, GITHUB_TOKEN= (environment-style names)
        "env_secret_assignment",
        r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|_PWD|PWD|SECRET|_TOKEN|API_KEY|APIKEY|ACCESS_KEY|"
        r"SECRET_KEY|PRIVATE_KEY|AUTH_KEY|CREDENTIALS?)\b\s*[=:]\s*['\"]?[^\s'\"]{2,}",
        0,
        ("password", "passwd", "pwd", "secret", "_token", "key", "credential"),
    ),
    (  # user:pass@host[:port] without a scheme
        "userinfo_host",
        r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}:[^\s:@/]{1,128}@[A-Za-z0-9][A-Za-z0-9.-]*"
        r"(?::[0-9]{1,5})?",
        0,
        ("@",),
    ),
    (
        "base64_pem",
        r"LS0tLS1CRUdJTi|LS0tLS1FTkQg",
        0,
        ("ls0tls1",),
    ),  # base64 of "-----BEGIN"/"-----END "
    (  # a DER body as PEM writes it (MII…), however it is cut into chunks
        "pem_body",
        r"(?<![A-Za-z0-9+/])MII[A-Za-z0-9+/](?:\s?[A-Za-z0-9+/]){8,}",
        0,
        ("mii",),
    ),
    ("private_key_id", r"private[_-]?key[_-]?id", _I, ("private",)),
    (  # 32 hex after a key word (Mailchimp, Datadog, New Relic… keys)
        "keyword_hex_key",
        r"\b(?:api[_ -]?key|key|token|secret|password|passwd|auth|apikey)[\s:=\"'(]{1,4}"
        r"[0-9a-fA-F]{32}(?![0-9a-fA-F])",
        _I,
        ("key", "token", "secret", "passw", "auth"),
    ),
    ("mailgun_key", r"\bkey-[0-9a-zA-Z]{32}\b", 0, ("key-",)),
)
# Each pattern is compiled the first time its needle gates it: compiling all of them
# (the case-blind ones most) costs more than `dcx log` reads, and most text gates few.


@cache
def _gates() -> tuple[tuple[str, frozenset[int]], ...]:
    """(lower-case needle, the patterns it gates)."""
    gates: dict[str, set[int]] = {}
    for index, (_name, _src, _flags, needles) in enumerate(_PATTERN_SOURCES):
        for needle in needles:
            gates.setdefault(needle.lower(), set()).add(index)
    return tuple((needle, frozenset(indexes)) for needle, indexes in gates.items())


@cache
def _automaton() -> Any:
    """An Aho-Corasick automaton of the gates."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for needle, indexes in _gates():
        automaton.add_word(needle, indexes)
    automaton.make_automaton()
    return automaton


@cache
def _pattern(index: int) -> re.Pattern[str]:
    _name, src, flags, _needles = _PATTERN_SOURCES[index]
    return re.compile(src, flags)


SHORT = 160  # up to this length (a token, an id) plain `in` tests beat building the automaton


def _first_pattern(text: str) -> str | None:
    gated: set[int] = set()
    lower = text.lower()
    if len(text) <= SHORT:  # `dcx status` checks tokens: no pyahocorasick import for those
        for needle, indexes in _gates():
            if needle in lower:
                gated |= indexes
    else:
        for _, indexes in _automaton().iter(lower):
            gated |= indexes
    for index in sorted(gated):
        if _pattern(index).search(text):
            return _PATTERN_SOURCES[index][0]
    return None


# The patterns below are given to ``re`` as text: compiled (and kept by re's own cache)
# the first time a text needs one.
_CONTROL_RE = r"[\x00-\x1f\x7f-\x9f\u2028\u2029]"
# The invisible or reordering characters (SPEC §3.4 v3): a reader cannot see them.
_INVISIBLE_RE = "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
# IPv6 candidates: groups of hex and colons with at least two colons, checked by ipaddress.
_IPV6_RE = (
    r"(?<![\w:.])(?=[0-9A-Fa-f:]*::|(?:[0-9A-Fa-f]{1,4}:){7})"
    r"[0-9A-Fa-f:]{2,39}(?:%[A-Za-z0-9]+)?(?![\w:])"
)
# Bare secrets: long runs of the base64/base64url alphabet with high entropy, long hex runs.
_B64_RUN_RE = r"[A-Za-z0-9+/=_-]{24,}"
_HEX_RUN_RE = r"(?<![0-9A-Za-z])[0-9A-Fa-f]{48,}(?![0-9A-Za-z])"
# dcx's own ref shapes, exempt from the entropy rules: <prefix>-<32 hex>.
_DCX_REF_RE = r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[0-9a-f]{32}(?![0-9a-f])"
B64_MIN_ENTROPY = 4.5


def _entropy(run: str) -> float:
    from collections import Counter
    from math import log2

    size = len(run)
    return -sum(n / size * log2(n / size) for n in Counter(run).values())


def _bare_secret(text: str) -> str | None:
    if len(text) < 24 or not re.search(_B64_RUN_RE, text):
        return None
    if "-" in text:
        text = re.sub(_DCX_REF_RE, " ", text)
    if re.search(_HEX_RUN_RE, text):
        return "high_entropy_hex"
    for match in re.finditer(_B64_RUN_RE, text):
        run = match.group()
        if _entropy(run) >= B64_MIN_ENTROPY:
            return "high_entropy_secret"
    return None


def _ipv6(text: str) -> bool:
    if "::" not in text and text.count(":") < 7:
        return False
    from ipaddress import IPv6Address

    for match in re.finditer(_IPV6_RE, text):
        try:
            IPv6Address(match.group().split("%", 1)[0])
        except ValueError:
            continue
        return True
    return False


# The absolute path of the goal root being served: text containing it is a path.
_goal_root: ContextVar[str | None] = ContextVar("dcx_goal_root", default=None)


def bind_goal_root(path: str) -> None:
    _goal_root.set(path.rstrip("/") or None)


class PrivateMatcher(Protocol):
    def find(self, text: str) -> str | None: ...


# This workspace's private values (SPEC §3.4: locators, indexed file paths, cursor
# values), bound by the writers that serve a workspace; see dcx/state/privacy.py.
_private: ContextVar[PrivateMatcher | None] = ContextVar("dcx_private_values", default=None)


def bind_private_values(matcher: PrivateMatcher | None) -> None:
    _private.set(matcher)


@contextmanager
def without_private_values() -> Iterator[None]:
    """Reading back a stored packet: its shape is checked, this workspace's values are audit's job."""
    token = _private.set(None)
    try:
        yield
    finally:
        _private.reset(token)


# Removed before matching (SPEC §3.4 v4): every format (Cf) character, the tag block, and the
# variation selectors, so a token split by soft hyphens, tag characters or selectors is seen whole.
_SELECTORS = "[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]"  # printable (Mn)


def _ignorable(char: str) -> bool:
    """A format character or one of the tag block (never a printable one)."""
    return unicodedata.category(char) == "Cf" or TAGS[0] <= ord(char) <= TAGS[1]


def normalised(text: str) -> str:
    """The copy the detector matches: NFKC (full-width letters become ASCII), then every format
    character and variation selector removed. ASCII text is its own normal form."""
    if text.isascii():
        return text
    text = re.sub(_SELECTORS, "", unicodedata.normalize("NFKC", text))
    if text.isprintable():  # no format character is printable
        return text
    return "".join(c for c in text if c.isprintable() or not _ignorable(c))


def unsafe_class(text: str) -> str | None:
    """The first class of unsafe content in ``text``, or None when it may be public."""
    if not text.isprintable():  # every character the two match is one isprintable refuses
        if re.search(_CONTROL_RE, text):
            return "control_character"
        if re.search(_INVISIBLE_RE, text):
            return "invisible_character"
    text = normalised(text)
    root = _goal_root.get()
    if root and len(root) > 1 and root in text:
        return "local_path"
    name = _first_pattern(text)
    if name is not None:
        return name
    if _ipv6(text):
        return "ip_address"
    secret = _bare_secret(text)
    if secret:
        return secret
    matcher = _private.get()
    if matcher is not None and matcher.find(text) is not None:
        return "private_value"
    return None


def check_text(value: Any, *, field: str, limit: int = TEXT_MAX, allow_empty: bool = False) -> str:
    """Return ``value`` if it may enter a public file, else raise ``UnsafeText`` naming ``field``."""
    if not isinstance(value, str):
        raise UnsafeText(f"{field}: expected text", field=field, code="invalid_type")
    if not value.strip() and not allow_empty:
        raise UnsafeText(f"{field}: must not be empty", field=field, code="empty_text")
    if len(value) > limit:
        raise UnsafeText(
            f"{field}: {len(value)} characters is over the limit of {limit}",
            field=field,
            code="text_too_long",
        )
    problem = unsafe_class(value)
    if problem:
        raise UnsafeText(
            f"{field}: text is not public-safe ({problem.replace('_', ' ')})",
            field=field,
            hint="public text may not hold paths, URLs, hosts, addresses, e-mail addresses, credentials "
            "or this workspace's private values",
        )
    return value


# Values the detector accepted, by exact value, for the bound goal root: an id or reason
# code recurs in every packet of a report, and the detector costs microseconds a value.
_ACCEPTED: set[str] = set()
# what the answers depend on: the goal root and the bound private values (the matcher
# object itself, held here, so that another matcher can never pass for it)
_ACCEPTED_FOR: list[Any] = [None, None]
_ACCEPTED_MAX = 200_000


def accepted(value: str) -> bool:
    """``unsafe_class(value) is None``, remembered for the bound goal root and private
    values: forgotten whenever either changes."""
    root, matcher = _goal_root.get(), _private.get()
    if root != _ACCEPTED_FOR[0] or matcher is not _ACCEPTED_FOR[1]:
        _ACCEPTED.clear()
        _ACCEPTED_FOR[0], _ACCEPTED_FOR[1] = root, matcher
    if value in _ACCEPTED:
        return True
    if unsafe_class(value) is not None:
        return False
    if len(_ACCEPTED) >= _ACCEPTED_MAX:
        _ACCEPTED.clear()
    _ACCEPTED.add(value)
    return True


def check_token(value: Any, *, field: str, limit: int = TOKEN_MAX) -> str:
    """A token (an id, a reason code) that may enter a public file: its shape, and then the same
    detector as free text (SPEC §3.4 v4: a credential typed as an id is still a credential)."""
    if not (isinstance(value, str) and len(value) <= limit and TOKEN_RE.fullmatch(value)):
        raise UnsafeText(
            f"{field}: expected a token ([A-Za-z0-9][A-Za-z0-9_.:-]*, at most {limit} characters)",
            field=field,
            code="invalid_token",
        )
    refuse_unsafe(value, field=field)
    return value


def refuse_unsafe(value: str, *, field: str) -> None:
    """``UnsafeText`` naming ``field`` (never the value) when the detector refuses ``value``."""
    problem = unsafe_class(value)
    if problem:
        raise UnsafeText(
            f"{field}: not public-safe ({problem.replace('_', ' ')})",
            field=field,
            hint="public text may not hold paths, URLs, hosts, addresses, e-mail addresses, credentials "
            "or this workspace's private values",
        )


def forbidden_keys(record: Any, path: str = "") -> Iterator[str]:
    """Key paths in ``record`` whose key may never appear in a public record."""
    if isinstance(record, Mapping):
        for key, value in record.items():
            here = f"{path}.{key}" if path else str(key)
            if key in FORBIDDEN_KEYS:
                yield here
            yield from forbidden_keys(value, here)
    elif isinstance(record, list):
        for index, value in enumerate(record):
            yield from forbidden_keys(value, f"{path}[{index}]")


def check_record(record: Any, *, where: str = "record") -> None:
    for key_path in forbidden_keys(record):
        raise UnsafeText(
            f"{where}: key {key_path!r} may not appear in a public record",
            field=key_path,
            code="forbidden_public_key",
        )


def unsafe_strings(record: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(key path, class) of every string in ``record`` the detector rejects (used by audit)."""
    if isinstance(record, Mapping):
        for key, value in record.items():
            yield from unsafe_strings(value, f"{path}.{key}" if path else str(key))
    elif isinstance(record, list):
        for index, value in enumerate(record):
            yield from unsafe_strings(value, f"{path}[{index}]")
    elif isinstance(record, str):
        problem = unsafe_class(record)
        if problem:
            yield path, problem


# SPEC §18: Ed25519 signatures and public keys are high-entropy by nature and public by
# design. They are accepted in exactly these fields — the top-level ``signature`` of a
# statement (statements.jsonl) and of a signer or revocation file (signers/), and
# ``public_key`` of a signer file — and only in their own form: unpadded base64url of
# 64 or 32 bytes. The caller (`dcx audit`) says which file a field is in.
SIGNATURE_FIELDS = {"signature": 86, "public_key": 43}
_B64URL_RE = r"^[A-Za-z0-9_-]+$"  # given to re as text, as the patterns above


def is_signature_value(field: str, value: str) -> bool:
    """Whether ``value`` is a signature or public key in its own field (``SIGNATURE_FIELDS``)."""
    size = SIGNATURE_FIELDS.get(field)
    return size is not None and len(value) == size and bool(re.fullmatch(_B64URL_RE, value))
