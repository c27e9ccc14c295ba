"""What a decision is about, and whether a later decision supersedes an earlier one.

Pure and dependency-free (stdlib only): the snapshot fold (:mod:`plait.state.snapshot`) applies
it to every decision it folds, and the capture rules (:mod:`plait.nodes.statements`) use its
subjects and rejected choices. A decision supersedes another only on evidence: the new one names
the old choice as rejected ("use httpx instead of requests"), or it carries a reversal cue
("actually", "switch to", "change of plan"…) *and* shares the old one's subject while choosing
something else, or, with no cue at all, it is plainly about the same thing (two words of its
subject shared, or one between two short decisions doing the same with it; its slot and
platform no other) and picks another choice or another number ("The mobile app
is built with React Native." → "We're building the mobile app in Flutter."). Two decisions on
different subjects both stay; a new decision that keeps the old choice and adds detail ("use
Postgres 16 for the main database") leaves the old one in place.

Where these rules find no evidence either way, a small pair model decides (:class:`PairModel`,
shipped as ``supersede_pairs.json``): a logistic regression over what the rules saw, fitted on
pairs written in words the rules were never shown ("Deploy the API on Heroku." → "The API is
moving to Fly.io and the Heroku dynos get shut off."). It is never asked against the rules'
evidence that the old decision stays.

Vocabulary: the *choice* is what is picked ("Redis"), the *slot* what it is picked for
("the cache"), the *subject* the slot when one is named, else the category of the choice
("http client" for httpx), else the choice itself.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache, wraps
from typing import Protocol

from plait.state.base.shipped import shipped_text
from plait.state.words import stem


def word_set(words: str) -> frozenset[str]:
    """The words of a space-separated list, as a set (long word lists stay readable)."""
    return frozenset(words.split())


TEXT_MAX = 600
TOKENS_MAX = 120
CACHE_SIZE = 1024
TERM_WORDS_MAX = 3
WORD = r"[\w.+#/@'()&-]+"
# Up to three words: a term such as "redis streams" or "datetime.utcnow()".
TERM = rf"(?P<term>{WORD}(?:[ \t]+{WORD}){{0,{TERM_WORDS_MAX - 1}}})"
ARTICLE = r"(?:(?:the|a|an|our|their|its|using|all|every|each|any)\s+)?"
# "rather than bringing in Redis" rejects Redis, not "bringing".
GERUND = (
    r"(?:(?:bringing|pulling|adding|introducing|using|keeping|going with|sticking with|"
    r"relying on|switching to)\s+(?:in\s+)?)?"
)

# Words that end a term: "use Redis for the cache" → "redis".
TERM_STOP = word_set(
    "for in on with to as at by via from into onto of over and or but so then "
    "than because since if when while where which that who instead rather after "
    "before anymore anyway now today here there too also please everywhere only "
    "just again later yet specifically is are was were be being been will would "
    "should could can must may might it's its we i you they he she this these "
    "those not no nor"
)
LEADING_PREPOSITIONS = word_set("in on at into onto inside within from with via")
# Terms that name nothing: "scratch that", "use it for now".
EMPTY_TERMS = word_set(
    "it that this them one those these something anything everything thing "
    "things me us you now all both either way option idea plan the a an "
    # no choice in "their call rather than mine", "a requirement, not a suggestion"
    "mine ours yours theirs suggestion request joke wish"
)
STOPWORDS = word_set(
    "a an the and or but so of to in on for with as at by via from into is are "
    "was were be been being it its it's this that these those we i you they he "
    "she our my your their me us them will would should could can must may "
    "might shall do does did done not no yes ok okay please let let's lets "
    "we'll we're i'll i'm i've we've i'd we'd now then than also too just only "
    "here there all any every each some more most very really still yet again "
    "which what when where who why how if because since while until over under "
    "up down out off about re ll ve s m t d"
)
# Verbs that say a choice is made; they are not what the decision is about.
DECISION_VERBS = word_set(
    "use using used uses go going went gone stick stay adopt switch "
    "switching switched move moving migrate migrating migrated opt opted "
    "settle take pick picked choose chose chosen keep decide decided "
    "decision prefer make made set want need drop dropping ditch replace "
    "scratch forget stop abandon revert actually instead rather change "
    "changed plan mind thought second longer anymore after store put write build implement "
    "give bump raise lower increase decrease reduce"
)
MARKER = re.compile(
    r"^\s*(?:decision|decided|decison|desicion|decsion|rule|constraint|convention|policy|"
    r"preference|note|todo|task|next)\s*:\s*",
    re.IGNORECASE,
)
QUANTITY_WORDS = (
    r"\b(?:once|twice|thrice|daily|weekly|monthly|hourly|nightly|yearly|one|two|three|four|five|"
    r"six|seven|eight|nine|ten|a (?:day|week|month|year|minute|second|hour))\b"
)
LEADING_CUE = re.compile(
    r"^(?:(?:actually|ok|okay|so|well|no|nope|wait|hmm|on second thought|instead|also|and|but)"
    r"\b[,;:\s-]*)+",
    re.IGNORECASE,
)
CODE_TICKS = re.compile(r"`+|\*{1,3}|(?<!\w)_{1,2}(?=\w)|(?<=\w)_{1,2}(?!\w)")

# An arrow in notes ("auth → keycloak"), and one that drops what is before it ("cron → gone")
ARROW = r"(?:\u2192|=>|->)"
ARROW_GONE = rf"{ARROW}\s*(?:out|gone|dead|dropped|removed)\b"
# A reversal cue: the new decision turns away from something decided before.
REVERSAL_CUE = re.compile(
    r"\b(?:actually|instead|change of plan|changed? (?:my|our) minds?|on second thought|"
    r"scratch (?:that|this|the\b|\w+)|no longer|not [\w.+#/ -]{1,40}? after all|"
    r"no more|anymore|any more|rather than|"
    r"switch(?:ing|ed)? (?:\w+ ){0,4}?(?:to|from|back|over)|swap|"
    r"(?:move|moving|migrat\w*) (?:\w+ ){0,4}?from|(?:go(?:ing)? back|revert\w*) to|"
    r"mov(?:e|es|ing) (?:\w+ ){0,4}?over to|mov(?:e|es|ing) out of|from \d+ to \d+|"
    r"drop|ditch|abandon|replace|stop using|forget|never mind|nope|wait,? no|no,? wait|"
    r"is out\b|'s out\b|back out of|mov(?:e|ing|ed) off|"
    r"on reflection|makes? more sense than|take [\w.+#-]+(?: [\w.+#-]+)? out of|"
    r"(?:bump|raise|lower|increase|decrease|reduce) (?:the |our )?[\w -]{1,30}? to\b|"
    rf"\bover [\w.+#-]+ for\b|{ARROW_GONE})|"
    # "X, not Y", also after a parenthesis: "integer cents (minor units), not floats"
    r"(?:^|[,(]\s*)(?:not|no) [\w.+#-]+",
    re.IGNORECASE,
)
# What "not" is said of when it rejects nothing: "…, not strictly required", "not urgent"
NEEDLESS = (
    r"(?!(?:strictly|really|absolutely|necessarily|required|needed|necessary|mandatory|urgent|"
    r"essential|critical|important|a must|a blocker|a priority|yet|now|rush|hurry|pressure|"
    r"worries|problem)\b)"
)
# Forms that name the rejected choice; the term is in the group ``term``.
REJECTIONS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\binstead of {GERUND}{ARTICLE}{TERM}",
        rf"\brather than {GERUND}{ARTICLE}{TERM}",
        rf"(?:^|[,;(\u2014]\s*|\s-\s)(?:not|no) {NEEDLESS}{ARTICLE}{TERM}\s*(?=[,.;:)!]|$)",
        rf"\bnot {ARTICLE}{TERM} (?:after all|anymore|any more)\b",
        rf"\bno (?:more|longer) (?:use of |using |use |need (?:for )?|support(?: for)? |want )?"
        rf"{ARTICLE}{TERM}",
        rf"\b(?:don'?t|do not|stop|quit) (?:use|using) {ARTICLE}{TERM}",
        rf"\b(?:let'?s|we) (?:not|won'?t|will not) (?:use|go with|keep) {ARTICLE}{TERM}",
        rf"\b(?:drop(?:ped|ping)?|ditch(?:ed|ing)?|abandon(?:ed|ing)?|scrap(?:ped|ping)?|"
        rf"replac(?:e|es|ed|ing)|swap(?:ped|ping)?) {ARTICLE}{TERM}",
        rf"\b(?:switch\w*|mov\w*|migrat\w*|go\w* back)\b[^.;:]{{0,40}}?\bfrom {ARTICLE}{TERM}"
        r" to\b",
        rf"(?:^|[,;:.]\s*){TERM} (?:is|are) (?:out|gone|dead|dropped)\b",
        rf"(?:^|[,;:.]\s*){TERM}'s (?:out|gone|dead)\b",
        # in notes: "old cron jobs → gone"
        rf"^{ARTICLE}{TERM}\s*{ARROW_GONE}",
        rf"\b(?:back out of|mov(?:e|ing|ed) off(?: of)?) {ARTICLE}{TERM}"
        r"(?= and\b| onto\b| to\b|\s*[,.;:]|$)",
        rf"\btake {ARTICLE}{TERM} out of\b",
        rf"\bmakes? more sense than {ARTICLE}{TERM}",
        rf"^(?:please )?(?:pick|choose|use) [\w.+#-]+ over {ARTICLE}{TERM}",
        rf"\b(?:undo|revert|roll back) (?:the |our )?(?:switch|move|migration) to {ARTICLE}{TERM}",
        rf"\brip(?:ped|ping)? out {ARTICLE}{TERM}",
        rf"\bmov(?:e|ing|ed) {ARTICLE}[\w-]+(?: [\w-]+)? off(?: of)? {ARTICLE}{TERM}",
    )
)
# "forget Docker", "scratch JWT": rejections only when the word names a technology.
WEAK_REJECTION = re.compile(rf"\b(?:forget|scratch|never mind) {ARTICLE}{TERM}", re.IGNORECASE)
# Said of a choice that is being left: "Kafka is overkill".
DISPARAGED = re.compile(
    rf"(?:^|[,;:.]\s*|\bso ){TERM}(?:'s| is| are| was| were| seems| felt| feels|'s been|"
    r" has been| have been| kept| keeps| turned out to be| proved) "
    r"(?:overkill|(?:way |much |far )?too \w+|"
    r"not (?:needed|necessary|worth it|a good fit)|a bad fit|out|a no-go|a dead end|"
    r"a (?:mistake|bad (?:call|idea|fit)|pain|headache|nightmare)|clunky|flaky|unreliable|"
    r"brittle|painful|eating|killing|hurting|breaking|blowing up|slowing (?:\w+ )?down|"
    r"flaking|failing|crashing|timing out)\b",
    re.IGNORECASE,
)
# Said of a choice that did not hold: "REST didn't survive the latency review".
FELL_SHORT = re.compile(
    rf"(?:^|[,;:.]\s*){TERM} (?:didn'?t|did not|doesn'?t|does not|won'?t) "
    r"(?:survive|work out|cut it|scale|hold up)\b",
    re.IGNORECASE,
)
CHOICES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\b(?:use|using|uses|go(?:ing)? with|went with|stick(?:ing)? with|stay with|adopt|"
        rf"switch(?:ing)? to|move to|moving to|migrat\w* to|opt(?:ed)? for|settle on|"
        r"choose|chose|pick(?:ed)?|rely on|standardi[sz]e on|we take|keep|keeping) "
        rf"{ARTICLE}{TERM}",
        rf"\b(?:store|put|host|deploy|run|write|build|ship|implement|switch)\s+(?:\w+\s+){{0,3}}?"
        rf"(?:in|on|to|with|via|using|into)\s+{ARTICLE}{TERM}",
        rf"\b(?:via|through) {ARTICLE}{TERM}",
        rf"(?:^|:\s*){TERM} (?:for|as) (?:the |our |a |an )?\w",
        rf"^[\w -]{{1,30}}:\s+{ARTICLE}{TERM}\s*[,.;]?\s*",
        rf"\b(?:should|will|must) be {ARTICLE}{TERM}\s*[.!]?$",
    )
)
SLOTS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\bswitch(?:ing|ed)? {ARTICLE}{TERM} (?:to|from|over)\b",
        rf"\b(?:store|put|keep|host|write|build|implement|deploy|run|ship|send)\s+{ARTICLE}{TERM}"
        r"\s+(?:in|on|to|into|with|via|using)\b",
        rf"\bfor {ARTICLE}{TERM}",
        rf"\bas (?:the|our|a|an) {TERM}",
        rf"^{TERM}\s*(?::\s|\s+(?:via|through|with|using|in|should|will|is)\b)",
        r"^(?P<term>[a-z]+)\b",
    )
)
# Slots that say when or who, not what: "for now", "as well".
EMPTY_SLOTS = word_set(
    "now example instance me you us it this that well while good later all "
    "the moment free real sure ever once a an production prod tests test dev "
    "local speed simplicity"
)
# Nouns that start a message but are not a slot ("Context: …", "Goal: …").
META_WORDS = word_set(
    "context goal note question problem issue bug error errors output result "
    "results summary background hint example update fyi status info warning "
    "reason why quick one more thing ps edit tldr also btw here plan important "
    "nb todo task next done decision rule actually ok okay so hmm well yes no "
    "please"
)

# A few technologies and the slot they fill, so "we'll use httpx" and "switch to aiohttp"
# are recognised as decisions about the same thing.
CATEGORY_TERMS: dict[str, tuple[str, ...]] = {
    "http client": ("requests", "httpx", "aiohttp", "urllib3", "axios", "fetch", "got", "ky"),
    "test framework": ("pytest", "unittest", "nose", "jest", "vitest", "mocha", "jasmine", "ava")
    + ("playwright", "cypress", "selenium", "rspec", "minitest"),
    "package manager": ("pip", "poetry", "uv", "pdm", "pipenv", "conda", "hatch", "npm", "yarn")
    + ("pnpm", "bun"),
    "formatter": ("black", "ruff format", "yapf", "autopep8", "isort", "prettier", "gofmt")
    + ("rustfmt",),
    "linter": ("ruff", "flake8", "pylint", "eslint", "biome", "clippy", "golangci-lint"),
    "database": ("postgres", "postgresql", "mysql", "mariadb", "sqlite", "mongodb", "mongo")
    + ("dynamodb", "cockroachdb", "cassandra", "supabase"),
    "cache": ("redis", "memcached", "valkey", "dragonfly"),
    "queue": ("celery", "rq", "dramatiq", "arq", "huey", "rabbitmq", "kafka", "sqs", "nats")
    + ("redis streams", "sns", "pubsub", "bullmq", "sidekiq"),
    "web framework": ("flask", "fastapi", "django", "starlette", "express", "fastify", "nestjs")
    + ("rails", "sinatra", "gin", "echo", "axum", "actix", "spring"),
    "orm": ("sqlalchemy", "sqlmodel", "peewee", "prisma", "typeorm", "drizzle", "sequelize")
    + ("activerecord", "gorm", "diesel", "alembic", "asyncpg"),
    "logging": ("logging", "loguru", "structlog", "slog", "zap", "logrus", "winston", "pino"),
    "cli framework": ("click", "typer", "argparse", "cobra", "clap", "commander", "yargs"),
    "validation": ("pydantic", "marshmallow", "attrs", "zod", "yup", "joi", "cerberus"),
    "type checker": ("mypy", "pyright", "pyre", "pytype"),
    "bundler": ("webpack", "vite", "esbuild", "rollup", "parcel", "turbopack", "cra"),
    "frontend": ("react", "vue", "svelte", "angular", "solid", "preact", "htmx", "next.js"),
    "styling": ("tailwind", "css modules", "styled-components", "sass", "emotion", "bootstrap"),
    "state management": ("redux", "zustand", "mobx", "pinia", "recoil", "jotai"),
    "date library": ("moment", "moment.js", "dayjs", "date-fns", "luxon", "arrow", "pendulum")
    + ("zoneinfo", "pytz"),
    "serialization": ("json", "orjson", "ujson", "msgpack", "protobuf", "yaml", "toml", "serde")
    + ("avro", "cbor"),
    "hosting": ("heroku", "fly.io", "vercel", "netlify", "render", "railway", "aws", "gcp")
    + ("azure", "github pages", "read the docs", "cloudflare"),
    "deployment": ("docker", "docker compose", "kubernetes", "k8s", "nomad", "systemd", "podman")
    + ("helm", "ansible", "terraform"),
    "ci": ("github actions", "gitlab ci", "circleci", "jenkins", "travis", "buildkite"),
    "auth": ("jwt", "oauth", "oauth2", "server-side sessions", "saml", "oidc", "paseto"),
    "api style": ("rest", "graphql", "grpc", "trpc", "soap", "json-rpc"),
    "async runtime": ("tokio", "async-std", "asyncio", "trio", "anyio", "gevent", "smol"),
    "language": ("python", "go", "golang", "rust", "typescript", "javascript", "java", "kotlin")
    + ("ruby", "elixir", "zig", "c++", "c#", "swift"),
    "password hashing": ("argon2", "bcrypt", "scrypt", "pbkdf2"),
    "rate limiting": ("token bucket", "leaky bucket", "sliding window", "sliding window log")
    + ("fixed window", "fixed window counter"),
    "pagination": ("cursor", "offset", "keyset"),
    "license": ("mit", "apache", "apache-2.0", "gpl", "bsd", "mpl"),
    "monorepo tool": ("turborepo", "nx", "lerna", "bazel", "pants"),
    "payments": ("stripe", "paypal", "adyen", "braintree"),
    "email": ("sendgrid", "postmark", "mailgun", "ses", "mailchimp", "resend", "sparkpost"),
    "plotting": ("matplotlib", "ggplot2", "plotly", "makie", "seaborn", "bokeh", "altair")
    + ("chart.js", "recharts", "d3", "echarts", "vega-lite"),
    "search": ("elasticsearch", "opensearch", "meilisearch", "algolia", "typesense", "solr"),
}
CATEGORY_OF: dict[str, str] = {
    term: category for category, terms in CATEGORY_TERMS.items() for term in terms
}


def bounded_cache[Result](function: Callable[[str], Result]) -> Callable[[str], Result]:
    """Memoize a pure text function on the first ``TEXT_MAX`` characters (all it ever reads).

    Classifying one statement asks for its rejected choices, its choices and its subject, and
    each asks for the others: the cache makes that one computation each.
    """
    cached = lru_cache(maxsize=CACHE_SIZE)(function)

    @wraps(function)
    def bounded(text: str) -> Result:
        return cached(str(text)[:TEXT_MAX])

    return bounded


class HasText(Protocol):
    """Anything with a ``text``, such as a ``Statement`` of :mod:`plait.nodes.statements`."""

    @property
    def text(self) -> str:
        """The decision's own words."""
        ...


def text_of(decision: HasText | str) -> str:
    """A decision's words, bounded, without a leading marker ("Decision:") or emphasis."""
    raw = decision if isinstance(decision, str) else decision.text
    return CODE_TICKS.sub("", MARKER.sub("", str(raw)[:TEXT_MAX])).strip()


def words(text: str) -> list[str]:
    """Lower-cased words of a text (dots and pluses kept: ``fly.io``, ``c++``)."""
    return re.findall(r"[a-z0-9][a-z0-9.+#_-]*[a-z0-9+#]|[a-z0-9]", text.lower())


def trim_term(term: str) -> str:
    """A captured term cut at its first stop word, without punctuation at either end."""
    kept: list[str] = []
    for word in term.split():
        bare = word.strip(".,;:!?\"'()").lower()
        if not kept and bare in LEADING_PREPOSITIONS:
            continue  # "not in settings files" rejects "settings files"
        if bare in TERM_STOP and not (bare == "go" and not kept):
            break
        kept.append(word)
    return " ".join(kept).strip(".,;:!?\"'").lower()


def found_terms(patterns: tuple[re.Pattern[str], ...], text: str) -> list[str]:
    """The terms the patterns capture in a text, trimmed, without empty ones."""
    found = (trim_term(match.group("term")) for p in patterns for match in p.finditer(text))
    return [term for term in found if term and term not in EMPTY_TERMS]


def is_technology(term: str, original: str) -> bool:
    """Whether a term names a technology: a known one, or written like a name (``JWT``, ``a.b``)."""
    if term in CATEGORY_OF or re.search(r"[._+#/]\w", term):
        return True
    return bool(re.search(rf"\b{re.escape(term)}\b", original, re.IGNORECASE)) and any(
        ch.isupper() for ch in original_spelling(term, original)
    )


def original_spelling(term: str, original: str) -> str:
    """The term as the original text spells it."""
    match = re.search(re.escape(term), original, re.IGNORECASE)
    return match.group(0) if match else term


@bounded_cache
def rejected_choices(text: str) -> tuple[str, ...]:
    """The choices a text turns away from: "use httpx instead of requests" → ("requests",)."""
    cleaned = text_of(text)
    strict = found_terms(REJECTIONS, cleaned)
    weak = [t for t in found_terms((WEAK_REJECTION,), cleaned) if is_technology(t, cleaned)]
    return tuple(dict.fromkeys(strict + weak))


@bounded_cache
def disparaged_choices(text: str) -> tuple[str, ...]:
    """Choices a text speaks against without a rejection form: "Kafka is overkill"."""
    return tuple(dict.fromkeys(found_terms((DISPARAGED, FELL_SHORT), text_of(text))))


@bounded_cache
def chosen(text: str) -> tuple[str, ...]:
    """What a decision picks ("use Redis for the cache" → ("redis",)), rejected terms excluded."""
    cleaned = text_of(text)
    rejected = rejected_choices(cleaned) + disparaged_choices(cleaned)
    terms = [term for term in found_terms(CHOICES, cleaned) if not names([term], rejected)]
    if not terms:
        terms = [term for term in known_terms(cleaned) if not names([term], rejected)]
    return tuple(dict.fromkeys(terms))


# "go" names the language only where it is not the verb: "written in Go", "Go and Rust", not
# "go with cursors", "Go over BLE"
AFTER_THE_VERB = r"(?! (?:with|for|over|through|to|back|ahead|on|into|out|up|down|away|live)\b)"
GO_LANGUAGE = re.compile(
    rf"\bgolang\b|(?<!let's )(?<!to )\b(?-i:Go)\b{AFTER_THE_VERB}|"
    rf"\b(?:in|using|use|with) go\b{AFTER_THE_VERB}",
    re.IGNORECASE,
)


def known_terms(text: str) -> list[str]:
    """Known technologies a text names, in order, the longest where they overlap."""
    tokens = words(text)[:TOKENS_MAX]
    if "go" in tokens and not GO_LANGUAGE.search(text):
        tokens = ["" if token == "go" else token for token in tokens]
    found: list[str] = []
    index = 0
    while index < len(tokens):
        term = next(
            (
                " ".join(tokens[index : index + size])
                for size in (3, 2, 1)
                if " ".join(tokens[index : index + size]) in CATEGORY_OF
            ),
            "",
        )
        if term:
            found.append(term)
        index += len(term.split()) or 1
    return found


@bounded_cache
def slot_of(text: str) -> str:
    """What a decision is for ("use Redis for the cache" → "cache"), or ""."""
    cleaned = LEADING_CUE.sub("", text_of(text))
    for pattern in SLOTS:
        for match in pattern.finditer(cleaned):
            slot = slot_words(match.group("term"))
            if slot:
                return slot
    return ""


def slot_words(term: str) -> str:
    """A captured slot as its content words, or "" when it names nothing."""
    kept = [
        w
        for w in words(trim_term(term))
        if w not in STOPWORDS and w not in DECISION_VERBS and w not in EMPTY_SLOTS
    ]
    if not kept or kept[0] in META_WORDS or kept[0][0].isdigit() or is_choice_not_slot(kept[0]):
        return ""
    return " ".join(kept[:TERM_WORDS_MAX])


def is_choice_not_slot(word: str) -> bool:
    """A technology's name ("redis"), not the name of what it is for ("logging", "cache")."""
    return word in CATEGORY_OF and word not in CATEGORY_TERMS


def categories(terms: tuple[str, ...] | list[str]) -> frozenset[str]:
    """The categories of the known technologies among the terms."""
    return frozenset(CATEGORY_OF[t] for t in terms if t in CATEGORY_OF)


@bounded_cache
def decision_subject(text: str) -> str:
    """What a decision is about: its slot, else its choice's category, else its choice.

    Never a marker: "Decision: store sessions in Redis" is about "sessions", and
    "Decision: use argon2 for password hashing" about "password hashing".
    """
    slot = slot_of(text)
    if slot:
        return slot
    choices = chosen(text)
    known = sorted(categories(choices))
    if known:
        return known[0]
    if choices:
        return choices[0]
    return " ".join(content_words(text)[:TERM_WORDS_MAX])


def content_words(text: str) -> list[str]:
    """The words of a text that carry meaning (no stop words, no decision verbs)."""
    return [w for w in words(text_of(text)) if w not in STOPWORDS and w not in DECISION_VERBS]


@bounded_cache
def has_reversal_cue(text: str) -> bool:
    """Whether a text turns away from something ("actually", "switch to", "no longer"…)."""
    return bool(REVERSAL_CUE.search(text_of(text)))


def names(phrases: tuple[str, ...] | list[str], terms: tuple[str, ...] | list[str]) -> bool:
    """Whether any term and any phrase name the same thing (one contains the other as words)."""
    return any(contains_words(p, t) or contains_words(t, p) for p in phrases for t in terms)


def contains_words(phrase: str, term: str) -> bool:
    """Whether ``term`` occurs in ``phrase`` as whole words."""
    wanted = " ".join(words(term))
    return bool(wanted) and f" {wanted} " in f" {' '.join(words(phrase))} "


@lru_cache(maxsize=CACHE_SIZE)
def shares_subject(old: str, new: str) -> bool:
    """Whether two decisions are about the same thing: slot, category or several shared words."""
    old_slot, new_slot = stems(slot_of(old)), stems(slot_of(new))
    if old_slot and new_slot:
        named = new_slot <= stems(old) or old_slot <= stems(new)  # "switch the fixture to …"
        return bool(old_slot & new_slot) or named or shared_words(old, new, 2)
    if categories(chosen(old)) & categories(chosen(new)):
        return True
    return shared_words(old, new, 2) or (
        shared_words(old, new, 1) and min(len(content_words(old)), len(content_words(new))) <= 2
    )


@bounded_cache
def stems(text: str) -> frozenset[str]:
    """The stems of a text's content words."""
    return frozenset(stem(w) for w in content_words(text))


def shared_words(old: str, new: str, at_least: int) -> bool:
    """Whether two texts share at least that many content-word stems."""
    return len(stems(old) & stems(new)) >= at_least


def keeps_choice(old: str, new: str, rejected: tuple[str, ...]) -> bool:
    """Whether the new decision keeps the old choice (it names it and does not reject it).

    A changed quantity ("for 10 minutes" → "for 30 seconds") is a new choice.
    """
    if quantities(old) and quantities(new) and quantities(old) != quantities(new):
        return False
    new_slot = slot_of(new)
    old_choices = [
        c for c in chosen(old) if not names([c], rejected) and not same_stems(c, new_slot)
    ]
    # "Next.js" is named "next" as often (as :func:`named_things` reads it)
    return any(
        contains_words(new, choice) or contains_words(new, choice.removesuffix(".js"))
        for choice in old_choices
    )


def same_stems(first: str, second: str) -> bool:
    """Whether two phrases have the same content-word stems ("logging" and "log")."""
    return bool(stems(first)) and stems(first) == stems(second)


@bounded_cache
def quantities(text: str) -> frozenset[str]:
    """The numbers with their units a text names ("10 minutes", "5 retries", "v2")."""
    lowered = text.lower()
    found = re.findall(r"\b\d[\d.,]*\s?[a-z%]*", lowered)
    return frozenset(found + re.findall(QUANTITY_WORDS, lowered))


def without_numbers(text: str) -> frozenset[str]:
    """A text's content-word stems, quantities left out."""
    bare = re.sub(r"\b\d[\d.,]*\s?[a-z%]*", " ", text.lower())
    return stems(bare)


def restates_with_new_numbers(old: str, new: str) -> bool:
    """The same words with other numbers: "Timeouts: 5s connect" → "Timeouts: 10s connect"."""
    changed = bool(quantities(old)) and quantities(old) != quantities(new)
    return changed and bool(without_numbers(old)) and without_numbers(old) == without_numbers(new)


def versions(text: str, choice: str) -> frozenset[str]:
    """The versions a text gives a choice: "Python 3.12" → {"3.12"}."""
    pattern = rf"(?<![\w.]){re.escape(choice)}(?:\s+v?|\s*\bv)(\d+(?:\.\d+)*)"
    return frozenset(re.findall(pattern, text.lower()))


def unversioned(choice: str) -> str:
    """A choice without its version: "python 3.11" → "python"."""
    return re.sub(r"(?:\s+v?|\s*\bv)\d+(?:\.\d+)*$", "", choice)


def new_version(old: str, new: str) -> bool:
    """The same choice with another version: "Python 3.11" → "Python 3.12"."""
    named = {unversioned(c) for c in chosen(old)} & {unversioned(c) for c in chosen(new)}
    for choice in (c for c in named if re.search(r"[a-z]", c)):
        before, after = versions(old, choice), versions(new, choice)
        if before and after and before != after:
            return True
    return False


def rejects_old(old: str, rejected: tuple[str, ...]) -> bool:
    """Whether the rejected terms name the old choice (or, when it names none, its words)."""
    old_choices = chosen(old)
    if old_choices:
        return names(old_choices, rejected)
    return any(stems(term) and stems(term) <= stems(old) for term in rejected)


def supersedes(
    old: HasText | str, new: HasText | str, rejected: tuple[str, ...] = (), *, cue: bool = False
) -> bool:
    """Whether ``new`` replaces ``old``: evidence required, a shared word is not enough.

    True when the new decision names the old choice as rejected, or when it carries a reversal
    cue, shares the old one's subject and does not keep the old choice, or when, with no cue, it
    replaces the old choice by another (:func:`replaces_choice`). ``rejected`` adds
    choices known to be turned away from that the new text no longer names (a rejection
    captured apart: "Scratch the token bucket. Use a fixed window instead."). With ``cue``
    a replacement needs its cue (the model's decision against the user's: the model may only
    be proposing).
    """
    return judged(text_of(old), text_of(new), tuple(rejected), cue)


@lru_cache(maxsize=CACHE_SIZE)
def judged(old_text: str, new_text: str, rejected: tuple[str, ...], cue: bool = False) -> bool:
    """:func:`supersedes` on bounded texts (memoized: a fold asks for the same pairs again).

    The rules' evidence first; where they find none either way, the pair model weighs what they
    saw (:func:`pair_features`), unless ``cue`` asks for a cue the new decision does not carry.
    """
    verdict = ruled(old_text, new_text, rejected, cue)
    if verdict is not None:
        return verdict
    if cue and not has_reversal_cue(new_text):
        return False
    model = pair_model()
    return model is not None and model.replaces(old_text, new_text)


def ruled(
    old_text: str, new_text: str, rejected: tuple[str, ...], cue: bool = False
) -> bool | None:
    """The rules' verdict (see :func:`supersedes`), None when they find no evidence either way.

    False is evidence that the old decision stays: the same words, its choice kept, or a
    choice of another kind (:func:`other_kinds`).
    """
    if not old_text or not new_text or words(old_text) == words(new_text):
        return False
    if restates_with_new_numbers(old_text, new_text) or new_version(old_text, new_text):
        return True
    cued = has_reversal_cue(new_text) or bool(rejected)
    rejected = rejected + rejected_choices(new_text) + disparaged_choices(new_text)
    if rejected and rejects_old(old_text, rejected):
        return True
    if keeps_choice(old_text, new_text, rejected):
        return False
    if cued and shares_subject(old_text, new_text):
        return True
    if other_kinds(old_text, new_text):
        return False
    return True if not (cued or cue) and replaces_choice(old_text, new_text) else None


def other_kinds(old: str, new: str) -> bool:
    """Whether two decisions pick known things of other kinds, so neither replaces the other.

    "Use Redis on port 6379 for dev." and "Use Postgres on port 5432 for dev.": a cache and a
    database.
    """
    old_kinds, new_kinds = categories(list(picked(old))), categories(list(picked(new)))
    return bool(old_kinds and new_kinds) and old_kinds.isdisjoint(new_kinds)


# Names of one technology: "k8s" is "kubernetes".
ALIASES = {"k8s": "kubernetes", "postgresql": "postgres", "mongo": "mongodb", "golang": "go"}
# A word written as a name: a capital ("Datadog", "gRPC"), or a dot, sign or digit inside
# ("chart.js", "c++", "bge-small2").
NAME = re.compile(r"(?<![\w.])(?:[\w-]*[A-Z][\w.+#-]*|[\w-]+[.+#/][\w.+#/-]*\w|[a-z]+\d[\w.-]*)")


@bounded_cache
def named_things(text: str) -> frozenset[str]:
    """The technologies a text names: known ones, and words written like names.

    The first word of a sentence counts only when it is known or written like a name beyond
    its capital ("Dagster orchestrates …" names nothing by its capital alone). Spellings of
    one name are one ("Next.js" is "next").
    """
    found = set(known_terms(text))
    for match in NAME.finditer(text):
        word = match.group(0).strip(".-")
        starts = match.start() == 0 or text[: match.start()].rstrip().endswith((".", ";", ":", "!"))
        if starts and not re.search(r".[A-Z]|[.+#/\d]", word):
            continue
        found.add(word.lower())
    named = {ALIASES.get(w, w) for w in found if w and w not in STOPWORDS}
    return frozenset(w.removesuffix(".js") for w in named)


def picked(text: str) -> frozenset[str]:
    """What a decision picks: the things it names, else its choice in plain words.

    "Store user uploads on the local disk." names nothing, and picks "local disk".
    """
    return named_things(text) or frozenset(chosen(text))


# Where a choice applies: the iOS app's and the Android app's choices never replace each other.
PLATFORMS = word_set(
    "ios android web desktop mobile windows macos linux backend frontend server client"
)
# A short decision may share one word of its subject with another and still be about it,
# unless they do different things with it ("host the docs on X", "build the docs with Y")
SHORT_DECISION_WORDS = 6
ACTIONS = word_set(
    "host hosted hosting build built building deploy deployed store stored run runs serve "
    "served publish published ship shipped write written test tested train trained log logged "
    "cache cached send sent generate generated lint format bundle package render track"
)


def apart(old: str, new: str, vocabulary: frozenset[str]) -> bool:
    """Whether both texts say a word of ``vocabulary`` and no word of it is said by both."""
    old_says, new_says = (vocabulary.intersection(words(text)) for text in (old, new))
    return bool(old_says and new_says) and old_says.isdisjoint(new_says)


def subject_stems(text: str, named: frozenset[str]) -> frozenset[str]:
    """What a decision is about, as stems: its content words (units too) less the names."""
    return frozenset(stems(text) - {stem(w) for name in named for w in words(name)})


@lru_cache(maxsize=CACHE_SIZE)
def replaces_choice(old: str, new: str) -> bool:
    """No cue word, and yet a replacement: the same subject, another named choice or number.

    "The mobile app is built with React Native." → "We're building the mobile app in Flutter."
    (two words of the subject shared, a name of its own, the old one's not named); "Log
    retention is 90 days." → "Keep logs for 30 days." (the same subject with other numbers).
    Two shared words of the subject are needed, or one when both decisions are short ("Use
    Redis for the cache." → "The caching layer will be Memcached.") or their choices of one
    category in the same slot: "the request timeout is 30s" and "the session timeout is 30
    minutes" are two settings. A choice need not be a name ("Store uploads on the local disk."
    → "Put uploads in S3."), and never replaces one for another platform (iOS, Android …).
    """
    if apart(old, new, PLATFORMS):
        return False  # "the iOS app uses SwiftUI" and "the Android app uses Jetpack Compose"
    old_slot, new_slot = (without_numbers(slot_of(text)) for text in (old, new))
    if old_slot and new_slot and not (old_slot <= new_slot or new_slot <= old_slot):
        return False  # "the frontend tests" and "the backend tests"
    if bool(old_slot) != bool(new_slot) and not (old_slot & stems(new) or new_slot & stems(old)):
        return False  # "the mobile app targets iOS" and "… Kotlin for Android"
    old_named, new_named = named_things(old), named_things(new)
    named = old_named | new_named
    shared = subject_stems(old, named) & subject_stems(new, named)
    # the choices: what each names, else what it picks in plain words ("the local disk")
    old_names, new_names = picked(old), picked(new)
    old_kinds, new_kinds = categories(list(old_names)), categories(list(new_names))
    short = max(len(content_words(old)), len(content_words(new))) <= SHORT_DECISION_WORDS
    short = short and not apart(old, new, ACTIONS)
    one_is_enough = (old_kinds & new_kinds and old_slot == new_slot) or short
    if len(shared) < 2 and not (shared and one_is_enough and old_names and new_names):
        return False
    if numbers(old) and numbers(new) and numbers(old).isdisjoint(numbers(new)):
        # other numbers for the same thing, not another thing's numbers
        return names(list(old_named), list(new_named)) or not named
    if other_kinds(old, new):
        return False
    same_names = names(list(old_names), list(new_names))
    return bool(old_names) and bool(new_names) and not same_names


@bounded_cache
def numbers(text: str) -> frozenset[str]:
    """The numbers a text says on their own ("90 days", "3"; not "v1", "k8s", "/v2")."""
    return frozenset(re.findall(r"(?<![\w/.])\d+(?:\.\d+)*", text))


# The pair model's weights, beside this module (trained by ``plait.devtools.pair_model``)
PAIR_WEIGHTS = "supersede_pairs.json"
# The old choice retired in passing, or the new one put in place from now on
RETIRED = re.compile(
    r"\b(?:shut (?:off|down)|turn(?:ed)? off|go(?:es)? away|gone|retir\w+|delet\w+|shelv\w+|"
    r"g[ai]ve up|given up|(?:gets?|is|are) closed|revok\w+|emptied|decommission\w*|sunset\w*|"
    r"phas\w+ out|deprecat\w+|removed|rip\w* out|torn down|tear down|kill\w*|replac\w+|"
    r"migrat\w+|moving|moved|from here on|going forward|now|no longer|anymore)\b",
    re.IGNORECASE,
)
# Numbers said in words, for the model: wider than the rules' QUANTITY_WORDS, which it was
# fitted beside and which stays as the rules were tuned
NUMBER_WORDS = (
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|sixty|ninety|hundred|once|twice|daily|weekly|monthly|hourly|nightly|"
    r"yearly|annually|quarterly)\b"
)
SHARED_STEMS_MAX = 4


def amounts(text: str) -> frozenset[str]:
    """The numbers a text gives, in digits or in words ("30 minutes", "twice", "nightly")."""
    spelled = re.findall(NUMBER_WORDS, text.lower())
    return frozenset(re.findall(r"\d+(?:\.\d+)?", text)) | frozenset(spelled)


def pair_features(old: str, new: str) -> tuple[float, ...]:
    """What the pair model reads of two bounded decision texts (:data:`PAIR_FEATURES` names).

    It is asked only where the rules found no evidence either way (:func:`ruled` is None).
    """
    old_picks, new_picks = list(picked(old)), list(picked(new))
    old_stems, new_stems = stems(old), stems(new)
    shared = len(old_stems & new_stems)
    old_amounts, new_amounts = amounts(old), amounts(new)
    return (
        float(has_reversal_cue(new)),
        float(names(old_picks, new_picks)),
        float(bool(old_picks and new_picks) and not names(old_picks, new_picks)),
        float(bool(old_amounts and new_amounts) and old_amounts.isdisjoint(new_amounts)),
        shared / max(1, len(old_stems | new_stems)),
        float(bool(rejected_choices(new) or disparaged_choices(new))),
        float(bool(RETIRED.search(new))),
        min(shared, SHARED_STEMS_MAX) / SHARED_STEMS_MAX,
        float(shares_subject(old, new)),
        float(replaces_choice(old, new)),
        float(any(contains_words(new, p) for p in old_picks)) if old_picks else 0.5,
    )


PAIR_FEATURES = (
    "reversal cue",
    "same choice named",
    "other choices named",
    "other amounts",
    "shared stems (share)",
    "rejects or disparages",
    "retires or puts in place",
    "shared stems (count)",
    "shares the subject",
    "replaces the choice",
    "names the old choice",
)


@dataclass(frozen=True)
class PairModel:
    """A logistic regression over :func:`pair_features` (standardisation folded in)."""

    weights: tuple[float, ...]
    bias: float
    threshold: float

    def probability(self, old: str, new: str) -> float:
        """How likely ``new`` replaces ``old``, by the model."""
        return self.probability_of(pair_features(old, new))

    def probability_of(self, features: Sequence[float]) -> float:
        """How likely a pair with these :func:`pair_features` is a replacement."""
        score = self.bias + sum(w * x for w, x in zip(self.weights, features, strict=True))
        return 1.0 / (1.0 + math.exp(-score))

    def replaces(self, old: str, new: str) -> bool:
        """Whether the model is sure enough that ``new`` replaces ``old``."""
        return self.probability(old, new) >= self.threshold

    def to_json(self) -> str:
        """The model as its shipped file holds it."""
        fields = {"features": PAIR_FEATURES, "weights": self.weights, "bias": self.bias}
        return json.dumps(fields | {"threshold": self.threshold}, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> PairModel:
        """Read a model file; its features must be today's."""
        raw = json.loads(text)
        if tuple(raw["features"]) != PAIR_FEATURES:
            raise ValueError(f"{PAIR_WEIGHTS} was fitted on other features: retrain it")
        return cls(tuple(raw["weights"]), float(raw["bias"]), float(raw["threshold"]))


@cache
def pair_model() -> PairModel | None:
    """The pair model that ships with plait, or None when its file is missing."""
    text = shipped_text("plait.state", PAIR_WEIGHTS)
    return PairModel.from_json(text) if text is not None else None


__all__ = [
    "ARROW",
    "PAIR_FEATURES",
    "PairModel",
    "CATEGORY_OF",
    "chosen",
    "decision_subject",
    "has_reversal_cue",
    "pair_features",
    "pair_model",
    "rejected_choices",
    "ruled",
    "slot_of",
    "supersedes",
    "words",
]
