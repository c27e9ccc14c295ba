"""Redaction: private spans and secrets never get past the extractors."""

from __future__ import annotations

import io
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plait.state.base._randomness import looks_random
from plait.state.base.redact import (
    REDACTED,
    RedactingFilter,
    holds_secret,
    is_secret_name,
    redact,
    redact_fields,
    redact_url,
    strip_private,
)


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
        "sk-abcdefghijklmnopqrstuvwxyz0123456789",
        "sk-ant-api03-abcdefghijklmnopqrstuv",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "glpat-xK9mQ2vL7pR4tW8nZ3bY",
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdefghij",
        "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "sk_live_abcdefghijklmnop1234",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        # base64 whose slashes cut it into parts as short as a path's
        "+LQqUwoPEw+Bof/VaEkMXb7Zinj9sZ/UR/vI/2oX",
        "/6ev2OjDmVaQEou/1SG2/cDtrEZ/C/8g4/HfkhOb",
    ],
)
def test_redact_replaces_known_secret_shapes(secret: str) -> None:
    cleaned = redact(f"token is {secret} ok")
    assert secret not in cleaned
    assert REDACTED in cleaned and cleaned.startswith("token is ")


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        ("postgres://app:hunter2@db:5432/x", "hunter2", "postgres://app:"),
        ("redis://:s3cretpw@127.0.0.1:6379/0", "s3cretpw", "@127.0.0.1:6379"),
        ("GITHUB_TOKEN=abc123def456", "abc123def456", "GITHUB_TOKEN="),
        ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI", "export "),
        ("STRIPE_KEY=pk9ab8cd7ef", "pk9ab8cd7ef", "STRIPE_KEY="),
        ('{"api_key": "abcd1234efgh"}', "abcd1234efgh", '"api_key"'),
        ("db_password = 'hunter22'", "hunter22", "db_password"),
        ("Authorization: Bearer abcdefghijklmnop", "abcdefghijklmnop", "Bearer"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "Basic"),
        # letters only, capitalised like a class name: in a query it is a value, not code
        ("https://h/page?sig=RdBYOuipkMmrCpuGMs&n=1", "RdBYOuipkMmrCpuGMs", "?sig="),
        ("https://h/page?token=RdBYOuipkMmrCpuGMs", "RdBYOuipkMmrCpuGMs", "?token="),
    ],
)
def test_redact_assignments_urls_and_headers_keep_their_names(
    text: str, secret: str, kept: str
) -> None:
    cleaned = redact(text)
    assert secret not in cleaned
    assert kept in cleaned


def test_redact_private_keys_even_when_cut_off() -> None:
    whole = "-----BEGIN RSA PRIVATE KEY-----\nMIIBsecret\n-----END RSA PRIVATE KEY-----\nafter"
    assert redact(whole) == f"{REDACTED}\nafter"
    assert "MIIB" not in redact("-----BEGIN OPENSSH PRIVATE KEY-----\nMIIBsecret and more")


@pytest.mark.parametrize(
    "text",
    [
        "password: str",
        "primary_key=True",
        "PWD=/home/me/project",
        "the author: me",
        "nothing secret here",
        "sort by key then value",
        "see /usr/X11R6/lib/X11/fonts/TTF/ for fonts",
        "http://www.combinatorics.org/Volume_17/PDF/v17i1r66.pdf",
        "built dist/assets/index-4f8a2c1e/app/Vendor/v2/a.js",
    ],
)
def test_redact_leaves_harmless_text_alone(text: str) -> None:
    assert redact(text) == text


def test_redact_strips_private_spans_even_unclosed() -> None:
    assert redact("a <private>my ssn</private> b") == "a  b"
    assert redact("a <PRIVATE>everything after") == "a "
    assert redact('a <private reason="x">one</private> b <private>two</private>c') == "a  b c"
    assert strip_private("stray </private> close") == "stray  close"


def test_redact_survives_lone_surrogates_and_nul() -> None:
    assert (
        redact("x \udcff y\x00 sk-ant-api03-abcdefghijklmnopqrstuv") == f"x \udcff y\x00 {REDACTED}"
    )


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300))
def test_redact_is_idempotent_and_hides_private_spans(before: str, after: str) -> None:
    private = "zq-private-marker-zq"
    text = f"{before}<private>{private}</private>{after}"
    cleaned = redact(text)
    assert private not in cleaned
    assert redact(cleaned) == cleaned


# -- names, values, randomness ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "query", "secret"),
    [
        ("DB_PASS", False, True),
        ("MYSQL_PWD", False, True),
        ("PWD", False, False),
        ("SECRET_KEY_BASE", False, True),
        ("KEY_BASE", False, True),
        ("AccountKey", False, True),
        ("SharedAccessSignature", False, True),
        ("private_key_id", False, True),
        ("_authToken", False, True),
        ("X-Amz-Signature", False, True),
        ("--password", False, True),
        ("storepass", False, True),
        ("STRIPE_KEY", False, True),
        ("SORT_KEY", False, False),
        ("primary_key", False, False),
        ("key", False, False),
        ("key", True, True),
        ("code", False, False),
        ("code", True, True),
        ("max_tokens", False, False),
        ("token_type", False, False),
        ("password_file", False, False),
        ("author", False, False),
        ("bypass", False, False),
        ("SharedAccessKeyName", False, False),
    ],
)
def test_is_secret_name(name: str, query: bool, secret: bool) -> None:
    assert is_secret_name(name, query=query) is secret


@pytest.mark.parametrize(
    ("value", "name", "bare", "secret"),
    [
        ("hunter2!", "password", True, True),
        ("Hunter.Two", "DB_PASS", True, False),
        ("correct horse battery staple", "passphrase", True, True),
        ("str", "password", True, False),
        ("Optional[str]", "token", True, False),
        ("${DB_PASSWORD}", "DB_PASSWORD", True, False),
        ("<your-token>", "token", False, False),
        ("settings.api_key", "api_key", True, False),
        ("api_key", "api_key", True, False),
        ("os.environ['X']", "token", True, False),
        ("/run/secrets/db", "password", True, False),
        ("the token to send.", "token", True, False),
        ("[REDACTED]", "token", True, False),
        ("pass.word1", "db_pass", True, True),
        ("current_context", "CONTEXT_KEY", False, False),
        ("0x4000", "FAILED_AUTH", True, False),
    ],
)
def test_holds_secret(value: str, name: str, bare: bool, secret: bool) -> None:
    assert holds_secret(value, name, bare=bare) is secret


@pytest.mark.parametrize(
    ("candidate", "random"),
    [
        ("k9Rz2Qw7/Lm4XvB8nP3tY6sD1fG5hJ0aC2eV7uZx", True),
        ("q8f3k2l9x0zm7vn4b6ts1wya", True),
        ("Tvpc8hwGBjYGJADjHDrAwPzAjv", True),
        ("0123456789abcdef0123456789abcdef01234567", False),
        ("123e4567-e89b-12d3-a456-426614174000", False),
        ("AbstractSingletonProxyFactoryBean", False),
        ("test_redact_assignments_and_headers", False),
        ("gpt-4o-mini-2024-07-18", False),
        ("sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg", False),
        ("ses_5e3f8b0c1ffeQ8mK2pLx9RtVwZ", False),
        ("HTTP2ServerConnectionHandler", False),
        # letters only: random ones are dense in segments, names are made of words
        ("jLuArmGqpidKTebBKjuFZrFQWrnMoeRwWZUEywKv", True),
        ("PaymentMethodDoesNotBelongToSubscription", False),
        ("XMLHttpRequestEventTarget", False),
    ],
)
def test_looks_random(candidate: str, random: bool) -> None:
    assert looks_random(candidate) is random


# -- urls, mappings, logs -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("redis://:s3cret@127.0.0.1:6379/0", f"redis://:{REDACTED}@127.0.0.1:6379/0"),
        ("postgres://app:pa%40ss@db:5432/x", f"postgres://app:{REDACTED}@db:5432/x"),
        ("https://h/x?token=abc123&page=2", f"https://h/x?token={REDACTED}&page=2"),
        ("https://h/x?sig=a%2Bb&X-Amz-Credential=AKIA", None),
        ("redis://db:6379/0", "redis://db:6379/0"),
        ("https://[::1]:99/", "https://[::1]:99/"),
    ],
)
def test_redact_url(url: str, expected: str | None) -> None:
    cleaned = redact_url(url)
    if expected is not None:
        assert cleaned == expected
    assert "s3cret" not in cleaned and "a%2Bb" not in cleaned
    assert redact_url(cleaned) == cleaned


def test_redact_fields_redacts_every_string_and_keeps_what_it_is_told() -> None:
    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    values = {
        "id": "evt-1",
        "summary": f"pushed with {secret}",
        "refs": [f"https://x:{secret}@github.com/a/b", "src/app.py"],
        "keywords": (secret, "git"),
        "extra": {"headers": {"Authorization": f"token {secret}"}, secret: 1},
        "count": 3,
        "ts": None,
    }
    cleaned = redact_fields(values, keep={"id"})
    assert secret not in repr(cleaned)
    assert cleaned["id"] == "evt-1" and cleaned["count"] == 3 and cleaned["ts"] is None
    assert cleaned["refs"][1] == "src/app.py" and isinstance(cleaned["keywords"], tuple)
    assert cleaned["extra"]["headers"]["Authorization"] == f"token {REDACTED}"


def test_redacting_filter_redacts_messages_arguments_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("plait.test.redacting_filter")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("connecting to %s with password=%s", "redis://:s3cretpw@h:1/0", "hunter22")
        try:
            raise ValueError("bad token sk-ant-api03-abcdefghijklmnopqrstuvWX12")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    output = stream.getvalue()
    assert "s3cretpw" not in output and "hunter22" not in output
    assert "abcdefghijklmnop" not in output and "Traceback" in output
    assert output.count(REDACTED) >= 3


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("bash -c 'mysql -uroot -pS3cretPassw0rd app'", "S3cretPassw0rd"),
        ('ssh host "zip -P m1GOWr3NvcUv4w x.zip y"', "m1GOWr3NvcUv4w"),
        ("printf '%s\\n' 'redis-cli -h db -a 9aonJquFHN%Qnh ping'", "9aonJquFHN%Qnh"),
        ("echo 'sshpass -p '\"'\"'wWk!Kry2Ft44Zi'\"'\"' ssh deploy@h'", "wWk!Kry2Ft44Zi"),
        ("echo 'export MYSQL_PWD='\\''u17Ncbr3wKuv9OdLM6x'\\'''", "u17Ncbr3wKuv9OdLM6x"),
        ("searched for 'DB_HOST=db\\nDB_PASS=!lBN7No%00*XBr\\nDB_NAME=app'", "!lBN7No%00*XBr"),
        (
            '{"env": "A=1\\r\\nTWILIO_AUTH_TOKEN=510f6af4eccd68b9d583\\tB=2"}',
            "510f6af4eccd68b9d583",
        ),
        ("http://deploy:G4Aj!Eh#pW%!Rd@127.0.0.1:8080/x", "G4Aj!Eh#pW%!Rd"),
    ],
)
def test_redact_finds_secrets_in_quoted_commands_escaped_text_and_loose_urls(
    text: str, secret: str
) -> None:
    cleaned = redact(text)
    assert secret not in cleaned and redact(cleaned) == cleaned


def test_redact_leaves_flags_that_only_contain_a_short_flag_letter() -> None:
    text = "redis-cli -h 10.0.0.5 --no-auth-warning ping; ls -lap --color=auto"
    assert redact(text) == text
