"""What secrets look like: provider token shapes and the words that name a secret (pure data).

Written for plait from the providers' published token formats; values in tests are fake.
"""

from __future__ import annotations

import re

# -- provider shapes ------------------------------------------------------------------------------
# Searched inside each long token (a run of ``[A-Za-z0-9+/=_.~%:-]``), so a shape needs no
# surrounding context; ``_B`` keeps a shape from starting inside a longer word.
_B = rb"(?<![A-Za-z0-9])"
_E = rb"(?![A-Za-z0-9])"
# Quantifiers stay bounded or possessive where a start could rescan a long run (linear time).
_SHAPES: tuple[bytes, ...] = (
    # OpenAI, Anthropic, OpenRouter, DeepSeek … (sk-, sk-proj-, sk-ant-api03-, sk-or-v1-)
    rb"sk-(?=[A-Za-z0-9_-]{0,64}[0-9A-Z])[A-Za-z0-9_-]{20,}",
    rb"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",  # GitHub
    rb"gl(?:pat|dt|rt|ptt|ft|imt|oas|cbt|soat|ffct|agent)-[A-Za-z0-9_-]{20,}",  # GitLab
    rb"GR1348941[A-Za-z0-9_-]{20}",  # GitLab runner registration
    rb"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}" + _E,  # AWS key ids
    rb"(?:IQoJb3JpZ2lu|FwoGZXIvYXdz|FQoGZXIvYXdz)[A-Za-z0-9+/=]{40,}",  # AWS session tokens
    rb"AIza[0-9A-Za-z_-]{35}" + _E,  # Google API keys
    rb"GOCSPX-[A-Za-z0-9_-]{24,}",  # Google OAuth client secrets
    rb"ya29\.[A-Za-z0-9_-]{20,}",  # Google OAuth access tokens
    rb"1//0[A-Za-z0-9_-]{30,}",  # Google OAuth refresh tokens
    rb"xox[abposre]-[A-Za-z0-9-]{10,}",  # Slack tokens
    rb"xapp-[0-9]-[A-Za-z0-9-]{20,}",  # Slack app tokens
    rb"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{10,}",  # Slack webhooks
    rb"discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_-]{20,}",  # Discord webhooks
    rb"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,  # Discord bots
    rb"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}" + _E,  # Telegram bot tokens
    rb"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe keys
    rb"whsec_[A-Za-z0-9+/=]{24,}",  # Stripe webhook secrets
    rb"npm_[A-Za-z0-9]{36}" + _E,  # npm
    rb"pypi-AgE[A-Za-z0-9_-]{50,}",  # PyPI / TestPyPI upload tokens
    rb"(?:hf|api_org)_[A-Za-z0-9]{30,}",  # Hugging Face
    rb"SK[0-9a-fA-F]{32}" + _E,  # Twilio API key sids
    rb"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}",  # SendGrid
    rb"key-[0-9a-f]{32}" + _E,  # Mailgun (legacy)
    rb"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}" + _E,  # Mailgun
    rb"[0-9a-f]{32}-us[0-9]{1,2}" + _E,  # Mailchimp
    rb"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",  # Shopify
    rb"do[opr]_v1_[a-f0-9]{64}",  # DigitalOcean
    rb"HRKU-[A-Za-z0-9_-]{20,}",  # Heroku
    rb"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",  # Postman
    rb"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}",  # Doppler
    rb"hv[sbr]\.[A-Za-z0-9_-]{24,}",  # HashiCorp Vault
    rb"s\.(?=[A-Za-z]*[0-9])[A-Za-z0-9]{24}" + _E,  # HashiCorp Vault (legacy service tokens)
    rb"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",  # Terraform Cloud
    rb"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}",  # age identities
    rb"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}" + _E,  # Azure AD client secrets
    rb"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}" + _E,  # Azure DevOps personal access tokens
    rb"dapi[a-f0-9]{32}(?:-[0-9])?" + _E,  # Databricks
    rb"ATATT3[A-Za-z0-9_=-]{100,}",  # Atlassian API tokens
    rb"lin_(?:api|oauth)_[A-Za-z0-9]{40}",  # Linear
    rb"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _E,  # Notion
    rb"(?:glsa_[A-Za-z0-9_]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})",  # Grafana
    rb"NR(?:AK|II|JS)-[A-Za-z0-9]{19,}",  # New Relic
    rb"dckr_pat_[A-Za-z0-9_-]{20,}",  # Docker Hub
    rb"pul-[a-f0-9]{40}" + _E,  # Pulumi
    rb"(?:r8_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{60,}|pplx-[A-Za-z0-9]{40,})",
    rb"sbp_[a-f0-9]{40}" + _E,  # Supabase
    rb"(?:sntrys_[A-Za-z0-9+/=_]{50,}|sntryu_[a-f0-9]{64})",  # Sentry
    rb"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}",  # Square
    rb"EAA[A-Za-z0-9]{80,}",  # Meta / Square access tokens
    rb"(?:fo1_|fm[12]_)[A-Za-z0-9+/=_-]{40,}",  # Fly.io
    rb"v1\.0-[a-f0-9]{24}-[a-f0-9]{100,}",  # Cloudflare Origin CA keys
    rb"eyJ[A-Za-z0-9_-]{8,512}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}",  # JWTs
)
PROVIDER_SHAPES = re.compile(_B + rb"(?:" + rb"|".join(_SHAPES) + rb")")

# A PEM block, base64-encoded (kubeconfig ``client-key-data``): decoded to check what it holds.
BASE64_PEM_PREFIX = b"LS0tLS1CRUdJT"

# -- names of secrets -----------------------------------------------------------------------------
# A name is split into lower-case words (``_authToken`` -> auth, token). It names a secret when a
# word is one of these …
SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "passphrase",
        "passcode",
        "secret",
        "secrets",
        "token",
        "credential",
        "credentials",
        "creds",
        "cred",
        "apikey",
        "accountkey",
        "privatekey",
        "auth",
        "authorization",
        "authtoken",
        "sig",
        "signature",
        "sas",
        "cookie",
        "bearer",
    }
)
# … or the name, its words run together, ends in one of these (``storepass``, ``dbpassword``) …
SECRET_SUFFIXES = (
    "pass",
    "passwd",
    "password",
    "pwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accountkey",
    "credential",
    "credentials",
)
# … or it has the word ``key`` after one of these (``api_key``, ``privateKeyId``) …
KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "account",
        "master",
        "encryption",
        "encrypt",
        "decryption",
        "signing",
        "sign",
        "shared",
        "client",
        "app",
        "application",
        "auth",
        "license",
        "licence",
        "subscription",
        "ssh",
        "gpg",
        "pgp",
        "deploy",
        "admin",
        "webhook",
        "hmac",
        "jwt",
        "crypto",
        "cipher",
        "aes",
        "rsa",
        "storage",
        "service",
        "session",
        "consumer",
        "partner",
    }
)
# … or it is an UPPER_CASE environment name ending in ``_KEY`` (``STRIPE_KEY``) whose word before
# ``KEY`` is not one of these.
KEY_NOT_SECRET = frozenset(
    {
        "sort",
        "primary",
        "foreign",
        "partition",
        "cache",
        "group",
        "topic",
        "public",
        "dedup",
        "idempotency",
        "unique",
        "lookup",
        "row",
        "range",
        "index",
        "routing",
        "object",
        "map",
        "item",
        "event",
        "message",
        "hot",
        "redis",
        "bucket",
        "s3",
        "hash",
        "shard",
        "composite",
        "natural",
        "surrogate",
    }
)
# In a URL query (after ``?``, ``&``, ``#`` or ``;``) these names are secrets too.
QUERY_SECRET_NAMES = frozenset(
    {
        "key",
        "code",
        "sig",
        "pw",
        "awsaccesskeyid",
        "googleaccessid",
        "xamzsignature",
        "xamzcredential",
        "xamzsecuritytoken",
        "xgoogsignature",
        "xgoogcredential",
        "apikey",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "privatetoken",
        "clientsecret",
        "jwt",
        "hmac",
    }
)
# A name whose last word is one of these describes a secret, it does not hold one
# (``password_file``, ``token_type``, ``auth_method``, ``secret_name``).
NAME_MODIFIERS = frozenset(
    {
        "count",
        "counts",
        "limit",
        "limits",
        "budget",
        "size",
        "length",
        "len",
        "ttl",
        "type",
        "types",
        "file",
        "files",
        "path",
        "dir",
        "name",
        "names",
        "env",
        "var",
        "url",
        "uri",
        "endpoint",
        "header",
        "policy",
        "method",
        "mode",
        "provider",
        "scheme",
        "strategy",
        "required",
        "enabled",
        "disabled",
        "expires",
        "expiry",
        "expiration",
        "timeout",
        "regex",
        "pattern",
        "hint",
        "prompt",
        "label",
        "placeholder",
        "format",
        "store",
        "helper",
        "helpers",
        "manager",
        "backend",
        "source",
        "cache",
        "handler",
        "class",
        "reset",
        "rotation",
        "field",
        "fields",
        "column",
        "version",
        "counter",
        "counters",
        "map",
        "stdin",
        "command",
        "cmd",
        "prefix",
        "suffix",
        "methods",
        "comment",
        "description",
        "help",
        "summary",
    }
)
# A name whose first word is one of these counts something (``max_token``, ``num_tokens``).
NAME_QUANTIFIERS = frozenset({"max", "min", "num", "n", "total", "used", "remaining"})
# Whole names that only look like secrets.
NOT_SECRET_NAMES = frozenset(
    {"pwd", "oldpwd", "bypass", "compass", "surpass", "overpass", "underpass", "trespass"}
)
# Values that hold no secret: literals, types, placeholders.
NOT_SECRET_VALUES = frozenset(
    {
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "none",
        "null",
        "nil",
        "undefined",
        "required",
        "optional",
        "inherit",
        "str",
        "string",
        "int",
        "integer",
        "bool",
        "boolean",
        "bytes",
        "float",
        "number",
        "any",
        "object",
        "dict",
        "list",
        "secretstr",
        "secretbytes",
        "|",
        ">",
        "|-",
        ">-",
        "memoryview",
        "bytearray",
        "tuple",
        "callable",
        "env",
        "auto",
        "default",
        "keyring",
        "prompt",
        "not-needed",
        "dummy",
        "fake",
        "placeholder",
        "unused",
        "redacted",
        # how a credential is made or checked, named in prose ("auth: OAuth2 with PKCE")
        "oauth",
        "oauth2",
        "oidc",
        "openid",
        "saml",
        "ldap",
        "kerberos",
        "jwt",
        "jwts",
        "pkce",
        "sso",
        "mtls",
        "hmac",
        "bcrypt",
        "scrypt",
        "argon2",
        "argon2id",
        "pbkdf2",
        "sha256",
    }
)
# Authorization schemes: the scheme is kept, the credential after it goes.
AUTH_SCHEMES = frozenset(
    {
        "bearer",
        "basic",
        "token",
        "digest",
        "negotiate",
        "ntlm",
        "apikey",
        "api-key",
        "sso-key",
        "bot",
        "key",
        "hmac",
        "jwt",
        "dpop",
        "otp",
        "aws4-hmac-sha256",
        "gensecret",
    }
)

# -- command lines -------------------------------------------------------------------------------
# Single-letter flags that take a password, and the commands where they mean that.
_CMD = rb"(?m)(?:^|[\s;&|(/'\"`])"  # a command may open a quoted string (bash -c '…')
PASSWORD_FLAGS: dict[bytes, re.Pattern[bytes]] = {
    # -pSECRET (attached only: ``mysql -p dbname`` prompts and names a database)
    b"p": re.compile(_CMD + rb"(?:mysql\w*|mariadb[\w-]*|7za?|sshpass)\s"),
    # -p SECRET
    b"p ": re.compile(
        _CMD + rb"(?:sshpass|(?:docker|podman|buildah|skopeo|nerdctl|oras|helm\s+registry)"
        rb"\s+login)\s"
    ),
    b"a": re.compile(_CMD + rb"(?:redis|valkey|keydb)-cli\s"),
    b"P": re.compile(_CMD + rb"(?:sqlcmd|bcp|zip|unzip|zipcloak)\s"),
    b"w": re.compile(_CMD + rb"ldap\w+\s"),
    b"k": re.compile(_CMD + rb"openssl\s"),
}

__all__ = [
    "AUTH_SCHEMES",
    "BASE64_PEM_PREFIX",
    "KEY_NOT_SECRET",
    "KEY_QUALIFIERS",
    "NAME_MODIFIERS",
    "NAME_QUANTIFIERS",
    "NOT_SECRET_NAMES",
    "NOT_SECRET_VALUES",
    "PASSWORD_FLAGS",
    "PROVIDER_SHAPES",
    "QUERY_SECRET_NAMES",
    "SECRET_SUFFIXES",
    "SECRET_WORDS",
]
