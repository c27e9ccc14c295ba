"""Text → statements: what a message decides, rules, prefers, plans or finds, and what it does not."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plait.nodes.statement_kinds import undecided
from plait.nodes.statements import (
    SCAN_MAX,
    STATEMENTS_MAX,
    Statement,
    StatementKind,
    normalize,
    promoted,
    statements,
)
from plait.state.events import EventKind

K = StatementKind


def kinds(text: str, speaker: str = "user") -> list[StatementKind]:
    return [s.kind for s in promoted(statements(text, speaker))]


def of_kind(text: str, kind: StatementKind, speaker: str = "user") -> list[Statement]:
    return [s for s in statements(text, speaker) if s.kind is kind]


def assert_found(text: str, speaker: str, expected: list[tuple[str, str]]) -> None:
    """The text yields the expected (kind, words in it) statements, in order, and no others."""
    found = [(s.kind.value, s.text) for s in promoted(statements(text, speaker))]
    assert len(found) == len(expected), found
    for (kind, said), (want_kind, want) in zip(found, expected, strict=True):
        assert kind == want_kind and want in said, found


# -- the failures the issue measured ------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        '"Rule: never log request bodies"',
        "'Rule: never log request bodies'",
        "\u201cRule: never log request bodies\u201d",
        '"  \\"Rule: never log request bodies\\"  "',
    ],
)
def test_statements_quoted_opencode_run_prompt_keeps_its_anchored_marker(text: str) -> None:
    [rule] = promoted(statements(text))
    assert rule.kind is K.RULE
    assert rule.text == "never log request bodies"


def test_statements_several_statements_in_one_message_are_each_captured() -> None:
    found = promoted(
        statements(
            "\"We'll use FastAPI for the API. Rule: every handler validates input with pydantic. "
            'TODO: add OpenAPI examples."'
        )
    )
    assert [s.kind for s in found] == [K.DECISION, K.RULE, K.TASK]
    assert found[0].text == "We'll use FastAPI for the API"
    assert found[2].text == "add OpenAPI examples"


def test_statements_decision_marker_in_mid_message_is_found() -> None:
    [decision] = promoted(
        statements("ok so the plan is fine, but Decision: we keep the REST API for now.")
    )
    assert decision.kind is K.DECISION
    assert decision.text == "we keep the REST API for now"


def test_statements_decisions_get_their_own_subjects_never_the_marker() -> None:
    [sessions] = promoted(statements("Decision: store sessions in Redis."))
    [hashing] = promoted(statements("Decision: use argon2 for password hashing"))
    assert sessions.subject == "sessions"
    assert hashing.subject == "password hashing"
    assert "decision" not in (sessions.subject, hashing.subject)


def test_statements_assistant_decisions_are_captured_and_marked_as_the_assistants() -> None:
    [decision] = promoted(
        statements("I'll use httpx rather than requests because it supports async.", "assistant")
    )
    assert decision.kind is K.DECISION and decision.speaker == "assistant"
    assert decision.negated == ("requests",) and decision.reverses


def test_statements_a_reversal_worded_differently_names_what_it_drops() -> None:
    [decision] = promoted(
        statements("Actually, let's not use a token bucket after all: use a sliding window log")
    )
    assert decision.kind is K.DECISION and decision.reverses
    assert decision.negated == ("token bucket",)


def test_statements_a_rejection_and_its_replacement_are_one_reversal() -> None:
    [decision] = promoted(
        statements("Actually, don't use SQLite for the local cache. Use Redis instead.")
    )
    assert decision.text == "Use Redis instead"
    assert decision.negated == ("sqlite",) and decision.reverses
    assert decision.subject == "cache"


def test_statements_a_rejection_then_a_replacement_without_a_verb_are_one_reversal() -> None:
    text = (
        "Forget Kafka for the audit trail. An append-only Postgres table with a trigger, "
        "nothing fancier. Can you sketch the migration?"
    )
    [decision] = promoted(statements(text))
    assert decision.kind is K.DECISION and decision.reverses
    assert decision.negated == ("kafka",)
    assert decision.text.startswith("Forget Kafka for the audit trail; An append-only Postgres")
    assert "migration" not in decision.text


def test_statements_choices_listed_with_commas_are_one_decision_each() -> None:
    found = promoted(statements("Use Vitest for unit tests, Playwright for e2e, and MSW for mocks"))
    assert [s.text for s in found] == [
        "Use Vitest for unit tests",
        "Playwright for e2e",
        "MSW for mocks",
    ]
    assert all(s.kind is K.DECISION for s in found)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Actually, revert to Mocha, the new runner keeps hanging in CI.", K.DECISION),
        ("Roll back to the REST client; grpc-web is too flaky behind the proxy.", K.DECISION),
        ("Revert to the previous version of the file and rerun the tests.", None),
        ("roll back to the last good deploy", None),
    ],
)
def test_statements_reverting_to_a_choice_decides_and_to_a_version_asks(
    text: str, kind: StatementKind | None
) -> None:
    assert [s.kind for s in promoted(statements(text))] == ([kind] if kind else [])


def test_statements_a_rejection_takes_in_one_sentence_after_it() -> None:
    [decision] = promoted(statements("Scratch the XGBoost baseline. It was slow. The team agrees."))
    assert decision.text == "Scratch the XGBoost baseline; It was slow"


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("Poetry was a mistake. Back to plain pip-tools.", "poetry"),
        ("nah, Celery's overkill. A plain asyncio TaskGroup will do.", "celery"),
        ("GraphQL is a no-go for the public API. Stick with the REST endpoints.", "graphql"),
    ],
)
def test_statements_a_choice_spoken_against_then_a_decision_is_a_reversal(
    text: str, left: str
) -> None:
    [decision] = promoted(statements(text))
    assert decision.kind is K.DECISION and decision.reverses and decision.negated == (left,)


@pytest.mark.parametrize(
    "text",
    [
        "yes, do it",
        "ok",
        "thanks",
        "Thanks!",
        "yes please go ahead and do that, thanks!",
        "lgtm, ship it",
        "Sounds good, go for it!",
        "nvm, that's fine",
        "Never mind.",
        "\U0001f44d",
        "k",
        "hmm",
        "continue",
    ],
)
def test_statements_approvals_and_chatter_are_never_promoted(text: str) -> None:
    assert promoted(statements(text)) == []
    assert promoted(statements(text, "assistant")) == []


@pytest.mark.parametrize(
    "text",
    [
        "Should we switch to Ruff?",
        "could you use redis for the cache?",
        "What if we used Kafka instead?",
        "why is the CI red",
        "What's the TODO in main.py about?",
        "Is it ok to never retry?",
        "Rule of thumb question: how long should functions be?",
    ],
)
def test_statements_questions_decide_nothing(text: str) -> None:
    assert promoted(statements(text)) == []


def test_a_word_that_only_starts_like_a_question_word_asks_nothing() -> None:
    (found,) = statements("Whenever possible I like the logs in JSON")
    assert found.kind is StatementKind.PREFERENCE


@pytest.mark.parametrize(
    "text",
    [
        "Fix the failing login test.",
        "Add a --dry-run flag to the sync command",
        "Summarize the diff",
        "The result will be cached by the proxy.",
    ],
)
def test_statements_a_plain_request_is_not_a_task_or_decision(text: str) -> None:
    assert promoted(statements(text)) == []


# -- kinds ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Never commit directly to main.", K.RULE),
        ("From now on, every new endpoint needs an integration test.", K.RULE),
        ("pls dont touch the generated files in src/gen/", K.RULE),
        ("No print() in library code.", K.RULE),
        ("Use 4 spaces for indentation in YAML files.", K.RULE),
        ("Constraint: the service must start in under 2 seconds.", K.CONSTRAINT),
        ("I'd rather you didn't add new dependencies without asking.", K.PREFERENCE),
        ("Please prefer composition over inheritance.", K.PREFERENCE),
        ("Let's go with Postgres for the main database.", K.DECISION),
        ("Switch the queue from RabbitMQ to Redis Streams.", K.DECISION),
        ("Retries: exponential backoff, max 5 attempts.", K.DECISION),
        ("we're standardizing on pnpm across all packages", K.DECISION),
        ("we'll store the feature flags in flags.toml", K.DECISION),
        ("Let's not add caching yet.", K.DECISION),
        ("TODO fix flaky test_upload", K.TASK),
        ("remember to bump the version before tagging", K.TASK),
        ("We still need to write docs for the webhook retries.", K.TASK),
        ("The migration is done.", K.TASK_DONE),
        ("Done: CI caching", K.TASK_DONE),
    ],
)
def test_statements_classify_user_statements(text: str, kind: StatementKind) -> None:
    assert kinds(text) == [kind]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("for me, explicit loops read better than clever comprehensions", K.PREFERENCE),
        ("not a fan of one-letter variable names outside tiny lambdas", K.PREFERENCE),
        ("If you ask me, guard clauses beat nested ifs every time.", K.PREFERENCE),
        ("Where possible I'd go for pure functions.", K.PREFERENCE),
        ("lets go w/ postgress for the catalog db", K.DECISION),
        ("Let's undo the pnpm switch and go back to npm.", K.DECISION),
        ("Redux over Context for the cart state.", K.DECISION),
        ("Between Sentry and Rollbar — Sentry wins.", K.DECISION),
        ("let's make the default page size 50", K.DECISION),
        ("Webhook calls should time out after 10 seconds.", K.DECISION),
        ("A plain asyncio TaskGroup will do.", K.DECISION),
        ("Change of plan: we deploy to Fly.io, not Heroku.", K.DECISION),
        ("Decision on the folder layout: domain code lives under src/core.", K.DECISION),
        ("No self-merges, ever.", K.RULE),
        ("Nothing in core may import from adapters.", K.RULE),
        ("Query params are snake_case.", K.RULE),
        ("Do not use `any` in TypeScript code.", K.RULE),
        ("Next up: the CSV export for the admin panel.", K.TASK),
        ("Note to self: write a runbook for the failover.", K.TASK),
        ("Let's circle back to the image resizing queue next week.", K.TASK),
        ("Migrating the cron jobs to the scheduler is on my list.", K.TASK),
        ("The CSV export can wait until after the release.", K.TASK),
        ("Down the road the importer has to cope with files over 2 GB.", K.TASK),
        ("After the demo on Friday we have to hook up the real payment provider.", K.TASK),
        ("Once the new schema is live, the legacy_status column can be deleted.", K.TASK),
        ("Nobody touches the payment gateway config without a second reviewer.", K.RULE),
        ("Every public function gets a docstring.", K.RULE),
        ("The staging database is for QA only.", K.RULE),
        ("We don't do force-pushes to shared branches here.", K.RULE),
    ],
)
def test_statements_fresh_wordings_of_the_training_sets(text: str, kind: StatementKind) -> None:
    """Wordings from datasets/capture/train1 to train3, which the rules were widened on."""
    assert kinds(text) == [kind]


@pytest.mark.parametrize(
    "text",
    [
        "Everyone wins.",
        "I will do.",
        "I'd go for it.",
        "Tests must not depend on the system clock; inject a clock instead.",
        "the design doc says we use optimistic locking on the orders table",
        "Option A is Kafka, option B is Pulsar.",
        "getting ModuleNotFoundError: No module named 'yaml' when I run the tests",
        "Not saying it's wrong, just curious.",
    ],
)
def test_statements_no_decision_from_their_look_alikes(text: str) -> None:
    assert K.DECISION not in kinds(text) and K.PREFERENCE not in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        # someone else pushing for a choice (wordings of train4 to train7)
        "Priya keeps saying we should go with Bun instead of Node for the scripts lol",
        "Priya's take is that we should drop Flutter and go fully native for the banking app",
        "Mei is proposing we adopt Biome in place of ESLint + Prettier across the org",
        "Keisha: wants to try Terragrunt for the env layering",
        "Kofi: the e2e suite is too slow, wants sharding",
        # a question put as a statement, the past, how things are
        "the question is do we keep the monolith or start splitting out payments",
        "back in 2021 we switched from Jenkins to GitLab CI, the pipelines are still hacky",
        "Last sprint we decided on Playwright over Cypress, and that's already rolled out",
        "we tried rabbitmq before and dropped it cause of the clustering issues",
        "we currently run postgres 13 on rds, single m5.xlarge, no replicas",
        # work asked for at hand
        "can you go into the user repository file and change that query so it uses a join "
        "instead of the two separate selects",
        "use the existing retry helper in that function instead of the for loop you wrote",
    ],
)
def test_statements_others_words_open_questions_and_the_past_choose_nothing(text: str) -> None:
    assert kinds(text) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # the same words where the speaker chooses: still chosen
        ("Keisha wants Terragrunt, but we'll stick with plain workspaces.", K.DECISION),
        ("Backend: Go with chi for the router.", K.DECISION),
        ("at some point we have to add audit logging, investors keep asking", K.TASK),
        ("I recommend we use Postgres for the ledger.", K.DECISION),
        ("Use httpx instead of requests for the client.", K.DECISION),
        ("In 2027 we'll move the ledger to Postgres 17.", K.DECISION),
    ],
)
def test_statements_the_speakers_own_choice_beside_those_wordings(
    text: str, kind: StatementKind
) -> None:
    assert kind in kinds(text)


def test_statements_someone_elses_rule_is_not_the_users() -> None:
    text = "My colleague Sam says we should always use an ORM, but I'm not convinced."
    assert kinds(text) == []


def test_statements_a_reminder_after_a_decision_is_its_own_task() -> None:
    found = promoted(statements("We'll go with Sentry, and remember to scrub PII first."))
    assert [(s.kind, s.text) for s in found] == [
        (K.DECISION, "We'll go with Sentry"),
        (K.TASK, "remember to scrub PII first"),
    ]


def test_statements_a_standing_reminder_is_a_rule_not_a_task() -> None:
    assert kinds("Remember to always run ruff.") == [K.RULE]


@pytest.mark.parametrize(
    "text",
    [
        "At some point we also have to swap the Node 16 base image for Node 20, it's EOL.",
        "Put it on the backlog that we drop the v1 webhooks once every client is on v2.",
    ],
)
def test_statements_work_put_off_is_a_task_though_it_names_a_choice(text: str) -> None:
    assert kinds(text) == [K.TASK]


def test_statements_a_recurring_reminder_stays_a_rule() -> None:
    assert kinds("Please remember to bump the changelog after each release.") == [K.RULE]


def test_statements_a_constraint_is_kept_as_a_rule_event() -> None:
    [constraint] = promoted(statements("Constraint: no network in tests"))
    assert constraint.event_kind is EventKind.RULE


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The cause was a missing await in fetch_user.", K.FINDING),
        ("It turns out the flaky test depends on dict ordering.", K.FINDING),
        ("Next, I'll add a migration for the new column.", K.TASK),
        ("Then I'll refactor the loader once the tests are green.", K.TASK),
        ("I've switched the parser to tomllib instead of toml.", K.DECISION),
        ("I'm going with a sliding window for the rate limiter.", K.DECISION),
        ("I've finished the migration script.", K.TASK_DONE),
    ],
)
def test_statements_classify_assistant_statements(text: str, kind: StatementKind) -> None:
    [statement] = promoted(statements(text, "assistant"))
    assert statement.kind is kind and statement.speaker == "assistant"


@pytest.mark.parametrize(
    "text",
    [
        "You should always pin versions in production.",
        "Rule: always run tests.",
        "I'd prefer to use a dataclass here.",
        "Let me look at the failing test first.",
        "I'll now run the linter.",
        "Done! Let me know if you want anything else.",
    ],
)
def test_statements_the_assistant_makes_no_rules_preferences_or_chatter_events(text: str) -> None:
    assert promoted(statements(text, "assistant")) == []


def test_statements_event_kinds() -> None:
    found = promoted(
        statements("Use uv. Never edit uv.lock by hand. I prefer tabs. TODO: docs. Done: CI.")
    )
    assert [s.event_kind for s in found] == [
        EventKind.DECISION,
        EventKind.RULE,
        EventKind.PREFERENCE,
        EventKind.TASK_CREATE,
        EventKind.TASK_COMPLETE,
    ]
    [question] = statements("Why?")
    assert question.kind is K.QUESTION and question.event_kind is None


# -- markdown -------------------------------------------------------------------------------------
def test_statements_text_inside_code_blocks_is_never_promoted() -> None:
    text = (
        "Use this pattern:\n```python\n# TODO: never do this\nx = eval(s)\n```\nbut never use eval."
    )
    assert [(s.kind, s.text) for s in promoted(statements(text))] == [(K.RULE, "never use eval")]
    assert promoted(statements("```\nRule: x\nDecision: y\n")) == []  # unclosed fence


def test_statements_a_heading_or_label_gives_its_kind_to_the_bullets_under_it() -> None:
    text = (
        "## Conventions\n- snake_case for module names\n- type hints everywhere\n\n"
        "# Decisions\n- Postgres for storage\n\nTODO list:\n* add login rate limit"
    )
    assert kinds(text) == [K.RULE, K.RULE, K.DECISION, K.TASK]


def test_statements_checkboxes_are_open_and_done_tasks() -> None:
    found = promoted(statements("- [ ] backfill existing rows\n- [x] add the column"))
    assert [(s.kind, s.text) for s in found] == [
        (K.TASK, "backfill existing rows"),
        (K.TASK_DONE, "add the column"),
    ]


def test_statements_inline_code_keeps_its_words_and_is_never_cut() -> None:
    [decision] = promoted(statements("Use `httpx.AsyncClient` instead of `requests`; thanks"))
    assert decision.text == "Use httpx.AsyncClient instead of requests"
    assert decision.negated == ("requests",)


def test_normalize_strips_wrapping_quotes_markdown_and_fences() -> None:
    text = '"## Plan\n- **use** _httpx_\n> quoted\n```\ncode\n```\n1. `x`"'
    assert normalize(text) == "Plan\nuse httpx\nquoted\n\nx"
    assert normalize("'it\\'s fine'") == "it's fine"
    assert normalize('"a" and "b"') == '"a" and "b"'
    assert normalize("snake_case and *.py globs") == "snake_case and *.py globs"


# -- hostile input --------------------------------------------------------------------------------
HOSTILE = [
    "We'll use httpx. Rule: never x. TODO: y.\n" * 300_000,  # ~12 MB
    "a; " * 100_000,
    "." * 1_000_000,
    "TODO: Rule: Decision: " * 100_000,
    "*a " * 300_000,
    "`" * 1_000_000,
    '"' * 1_000_001,
    "(" * 500_000 + ")" * 500_000,
    "```\n" * 200_001,
    "- [ ] x\n" * 200_000,
    "instead of " * 200_000,
    "\n" * 1_000_000,
    "x" * 2_000_000,
    "\u202e\u0000\ud800\U0001f600" * 100_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile-{i}" for i in range(len(HOSTILE))])
def test_statements_hostile_input_costs_bounded_time_and_never_raises(text: str) -> None:
    started = time.perf_counter()
    found = statements(text)
    assert time.perf_counter() - started < 0.5
    assert len(found) <= STATEMENTS_MAX
    assert all(len(s.text) <= 400 for s in found)


def test_statements_read_at_most_scan_max_characters() -> None:
    late = "x " * SCAN_MAX + "Rule: never do this"
    assert promoted(statements(late)) == []


@pytest.mark.parametrize("value", [None, b"Rule: never x", 42, b"\xff\xfe\x00garbage"])
def test_statements_non_text_input_is_read_leniently(value: object) -> None:
    statements(value)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=600), st.sampled_from(["user", "assistant"]))
def test_statements_any_text_gives_bounded_statements(text: str, speaker: str) -> None:
    for statement in statements(text, speaker):
        assert statement.text and len(statement.text) <= 400
        assert statement.speaker == speaker
        if statement.speaker == "assistant":
            assert statement.kind not in (K.RULE, K.CONSTRAINT, K.PREFERENCE)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["Rule:", "TODO", "Decision:", "use", "never", "not", "instead of", "`", '"', "'"]
            + ["\n", ". ", "; ", "- ", "# ", "[ ]", "**", "actually", "x", "redis", "?"]
        ),
        max_size=80,
    )
)
def test_statements_marker_soup_never_raises(parts: list[str]) -> None:
    statements(" ".join(parts))


# -- generalisations after the third blind set (fresh3) ----------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Go ahead and use pydantic v2 models for the request bodies.", ["pydantic v2"]),
        ("Deploy target will be Fly.io; Heroku is out.", ["Fly.io"]),
        (
            "Let's keep the monorepo layout but move shared types into packages/types.",
            ["monorepo", "packages/types"],
        ),
        ("The docs site uses MkDocs Material; keep it that way.", ["MkDocs Material"]),
    ],
)
def test_statements_decisions_in_new_phrasings(text: str, expected: list[str]) -> None:
    decisions = of_kind(text, K.DECISION)
    assert len(decisions) == len(expected)
    for decision, word in zip(decisions, expected, strict=True):
        assert word in decision.text


def test_statements_a_reversal_across_a_semicolon_is_one_decision() -> None:
    [decision] = of_kind("Deploy target will be Fly.io; Heroku is out.", K.DECISION)
    assert decision.reverses and "heroku" in decision.negated


@pytest.mark.parametrize(
    "text",
    ["OK, keep going with the tests.", "Fix the bug. Keep it that way.", "Then go ahead."],
)
def test_statements_no_decision_in_go_ahead_and_keep_going(text: str) -> None:
    assert of_kind(text, K.DECISION) == []


def test_statements_a_marker_may_be_followed_by_a_dash() -> None:
    [done] = of_kind(
        "Done \u2014 the handler now returns 404 for unknown ids.", K.TASK_DONE, "assistant"
    )
    assert done.text == "the handler now returns 404 for unknown ids"
    assert kinds("TODO - add retries") == [K.TASK]


@pytest.mark.parametrize(
    "text", ["Turn 31: refactor src/module_31.py and keep the tests green.", "Bug: fix the parser."]
)
def test_statements_a_label_before_a_request_is_no_decision(text: str) -> None:
    assert of_kind(text, K.DECISION) == []


def test_a_todo_list_in_prose_is_not_a_task_named_list() -> None:
    """'todo' inside a sentence is a word; only TODO (or 'todo:') marks a task."""
    said = statements("Plan the work as a todo list")
    assert [s.text for s in said if s.kind is StatementKind.TASK] == []
    marked = statements("Fix the parser TODO add retries later")
    assert [s.text for s in marked if s.kind is StatementKind.TASK] == ["add retries later"]


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        # a request after a comma is cut off the decision before it
        (
            "let's keep terraform state in S3 with DynamoDB locking, can you set up the backend?",
            "user",
            [("decision", "let's keep terraform state in S3 with DynamoDB locking")],
        ),
        # "and let's" starts a decision of its own (the request before it is none)
        (
            "ship it behind a feature flag, and let's not add the i18n stuff yet",
            "user",
            [("decision", "let's not add the i18n stuff yet")],
        ),
        # "then" starts the plan's next step
        (
            "After that I'll rerun the eval, then update the model card with the new numbers.",
            "assistant",
            [("task", "After that I'll rerun the eval"), ("task", "then update the model card")],
        ),
        # what was found is the sentence after "Found it."
        (
            "Found it. The pool is created before the fork, so every child shares a socket.",
            "assistant",
            [("finding", "The pool is created before the fork")],
        ),
        (
            "I'm a dark mode person, so default the dashboard theme to dark",
            "user",
            [("preference", "dark mode person")],
        ),
        ("so default the dashboard theme to dark", "user", [("decision", "default the dashboard")]),
        (
            "scratch the websocket idea, polling every 5s is plenty",
            "user",
            [("decision", "polling every 5s is plenty")],
        ),
        (
            "for the webhook sender: 3 retries with exponential backoff starting at 200ms, capped "
            "at 5s",
            "user",
            [("decision", "3 retries with exponential backoff")],
        ),
        (
            "couple things first: indent with 4 spaces in this repo",
            "user",
            [("rule", "indent with 4 spaces")],
        ),
        (
            "the public API stays backwards compatible until 3.0",
            "user",
            [("rule", "stays backwards compatible")],
        ),
        (
            "we'll need a changelog entry too but I'll write that one later",
            "user",
            [("task", "changelog entry")],
        ),
        (
            "before we ship the beta someone has to write the privacy policy page",
            "user",
            [("task", "privacy policy page")],
        ),
        ("I'm torn between Svelte and Vue for the admin panel", "user", []),
        (
            "hmm scratch the websocket idea, long polling is fine for an internal dashboard",
            "user",
            [("decision", "long polling is fine for an internal dashboard")],
        ),
        (
            "Let's walk back vendoring the protobuf files; generate them in CI instead.",
            "user",
            [("decision", "generate them in CI instead")],
        ),
        ("do that instead", "user", []),
    ],
)
def test_statements_wordings_of_fresh11(
    text: str, speaker: str, expected: list[tuple[str, str]]
) -> None:
    assert_found(text, speaker, expected)


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        # what docs say is their word, not the user's rule
        ("The Vue docs say you should never mutate props.", "user", []),
        # "Found it." before a stated cause: one finding, the cause
        (
            "Found it. The cause was the proxy: it strips the auth header on redirects.",
            "assistant",
            [("finding", "The cause was the proxy")],
        ),
        # an instruction for this once is no rule
        ("don't run the slow integration tests this time, just the unit ones", "user", []),
        # the past decides nothing
        ("Historically we used Travis for all of this.", "user", []),
        # a move to a named thing decides
        ("background jobs move to RQ", "user", [("decision", "background jobs move to RQ")]),
        # "haven't made up my mind" hedges a choice
        ("I haven't made up my mind, we'll probably go with Auth0", "user", []),
        # deferred work, said with "later"
        (
            "we'll port the settings page over later, not today",
            "user",
            [("task", "port the settings page")],
        ),
        # the model's decisions said as where a thing lives and a cap
        (
            "The retry logic will live in the shared HTTP client wrapper.",
            "assistant",
            [("decision", "will live in the shared HTTP client")],
        ),
        ("I'm capping it at 3 attempts with jitter.", "assistant", [("decision", "capping it")]),
        # naming rules, a rule of thumb, a remaining-work label, a TODO for later
        (
            "Branch names follow feature/<ticket>-short-desc.",
            "user",
            [("rule", "Branch names follow")],
        ),
        (
            "rule of thumb for this repo: public functions get docstrings",
            "user",
            [("rule", "public functions get docstrings")],
        ),
        (
            "Remaining work on refunds: regenerating the client from the spec.",
            "assistant",
            [("task", "regenerating the client")],
        ),
        (
            "TODO for later: turn on the pydocstyle check in CI",
            "user",
            [("task", "turn on the pydocstyle check")],
        ),
    ],
)
def test_statements_wordings_of_fresh12(
    text: str, speaker: str, expected: list[tuple[str, str]]
) -> None:
    assert_found(text, speaker, expected)


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        # a pasted chat: the names before a colon are speakers, not slots of a choice
        (
            "from #backend:\n> Priya: final answer, we're moving the queue onto Dramatiq\n"
            "> Tom: 👍 finally\n> Priya: I'll tell infra",
            "user",
            [("decision", "moving the queue onto Dramatiq")],
        ),
        ("License question settled: we stay on Apache-2.0", "user", [("decision", "Apache")]),
        # "not strictly required" rejects nothing; a wish that would make one happy is taste
        (
            "Compose previews for every new screen would make me happy, not strictly required.",
            "user",
            [("preference", "Compose previews")],
        ),
        ("I'd take register-level code over the HAL any day", "user", [("preference", "HAL")]),
        (
            "I'm more comfortable with argon2id than bcrypt here",
            "user",
            [("preference", "argon2id")],
        ),
        # a choice for one query only is a request
        ("use the staging replica for this one query", "user", []),
        ("min SDK goes to 26 for the next release", "user", [("decision", "min SDK goes to 26")]),
        ("session tokens do not go in localStorage", "user", [("rule", "localStorage")]),
        ("Nobody runs ALTER TABLE on orders outside the window", "user", [("rule", "ALTER")]),
        ("remind me later to rotate the staging keys", "user", [("task", "rotate the staging")]),
        # the model's plan under a label, its pin, its findings
        (
            "Plan for the tenant column:\n1. Add tenant_id as nullable\n2. Backfill in batches",
            "assistant",
            [("task", "Add tenant_id"), ("task", "Backfill in batches")],
        ),
        (
            "I'm going to pin requests-oauthlib to 2.3.1 for now.",
            "assistant",
            [("decision", "pin requests-oauthlib")],
        ),
        # a plan's step stays a task whatever it chooses
        ("Next I'll pin the provider to 4.67.", "assistant", [("task", "pin the provider")]),
        (
            "The watchdog resets were coming from the I2C read.",
            "assistant",
            [("finding", "watchdog resets")],
        ),
        (
            "The report is slow because the planner picks a seq scan.",
            "assistant",
            [("finding", "seq scan")],
        ),
    ],
)
def test_statements_wordings_of_fresh14(
    text: str, speaker: str, expected: list[tuple[str, str]]
) -> None:
    assert_found(text, speaker, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # options weighed under a label are no choice; the choice after them is
        (
            "## Options for the cache\n- Redis: fast, one more service\n- Memcached: we'd run it"
            "\n\nstill thinking",
            [],
        ),
        (
            "Alternatives:\n- use Kafka\n- use NATS\n\nLet's use NATS.",
            [("decision", "Let's use NATS")],
        ),
        # someone else's word, and the speaker's own choice after it
        ("people on the forum said the docs should use pnpm instead of npm", []),
        (
            "the TA said we can use any framework so we decided on FastAPI",
            [("decision", "decided on FastAPI")],
        ),
        ('comment from @li on the PR: "I would rather we kept the ORM out of this"', []),
        # a rejected choice after a parenthesis; staying on a tool
        ("Amounts stay integer cents (minor units), not floats", [("decision", "integer cents")]),
        (
            "drop the plan to move logs to Loki, we're staying on Graylog",
            [("decision", "staying on Graylog")],
        ),
        # short answers to "which one?"
        ("Redis, obviously.", [("decision", "Redis")]),
        ("yes, obviously", []),
        ("neither, just hardcode it for now", [("decision", "hardcode it")]),
        # a rule said again is one rule; a prohibition on a place
        ("Every migration must be reversible. No exceptions.", [("rule", "reversible")]),
        (
            "Every migration must be reversible. No exceptions, never edit an applied one.",
            [("rule", "reversible"), ("rule", "never edit")],
        ),
        ("no more manual kubectl edits on the prod cluster", [("rule", "kubectl edits")]),
    ],
)
def test_statements_wordings_of_fresh16(text: str, expected: list[tuple[str, str]]) -> None:
    assert_found(text, "user", expected)


def test_a_choice_before_a_parenthesis_still_rejects_the_one_after_it() -> None:
    (decision,) = promoted(statements("Amounts stay integer cents (minor units), not floats"))
    assert decision.reverses and decision.negated == ("floats",)


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        # a hypothetical, a suggestion left to others, dithering: no choice yet
        ("if we ever pass a thousand users I'd probably move off the VPS", "user", []),
        (
            "My suggestion would be to move the exports to Avro, but I'll leave the final call "
            "to you.",
            "user",
            [],
        ),
        ("I keep going back and forth on Celery versus RQ.", "user", []),
        (
            "after a lot of back and forth we settled on gRPC for the scorer",
            "user",
            [("decision", "settled on gRPC")],
        ),
        # "let's do that" names nothing; courtesy is no rule or rejection
        ("I'm fairly sure it's right, so let's do that.", "user", []),
        ("Have a look whenever you have a moment, no rush at all.", "user", []),
        # choices said as keeping a named tool, doing something with one, a home for a thing
        (
            "Keep the Django admin for the support staff, it does the job.",
            "user",
            [("decision", "Django admin")],
        ),
        ("We'll do blue/green deploys with Argo Rollouts.", "user", [("decision", "Argo")]),
        ("Settings go in pyproject.toml, end of discussion.", "user", [("decision", "pyproject")]),
        # a task before rule words; a recurring reminder stays a rule
        (
            "don't forget to file a ticket for each skipped test or we'll never fix them",
            "user",
            [("task", "file a ticket")],
        ),
        (
            "Please remember to update the changelog after each feature.",
            "user",
            [("rule", "changelog")],
        ),
        # rules after a slot or a "but"; the past and what keeps happening are no rules
        (
            "for the kiosk image: don't put secrets in local.conf",
            "user",
            [("rule", "secrets in local.conf")],
        ),
        ("But nobody writes raw SQL in the handlers, ever.", "user", [("rule", "raw SQL")]),
        ("The table was 40GB and we never used the ranking.", "user", []),
        ("Every time someone adds a helper gem we end up with two ways of doing it.", "user", []),
        # a commit header is no slot of a choice
        ("chore: settle logging", "user", []),
        (
            "The 502s happen because the worker timeout kills long exports.",
            "assistant",
            [("finding", "worker timeout")],
        ),
    ],
)
def test_statements_wordings_of_fresh17(
    text: str, speaker: str, expected: list[tuple[str, str]]
) -> None:
    assert_found(text, speaker, expected)


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        # choices said as moving, placing, writing out, a number changed
        (
            "move the queue over to NATS, we're done with Redis pubsub",
            "user",
            [("decision", "NATS")],
        ),
        ("reports get written as parquet, one file per day", "user", [("decision", "parquet")]),
        ("the timeout goes from 10 to 30 seconds", "user", [("decision", "from 10 to 30")]),
        (
            "just deploy it on Render, no time for Kubernetes this month",
            "user",
            [("decision", "Render")],
        ),
        ("batch jobs go on spot instances", "user", [("decision", "spot instances")]),
        (
            "the changelog moves out of the wiki and into the repo as markdown",
            "user",
            [("decision", "into the repo")],
        ),
        (
            "Design choice for the cache: entries expire after an hour.",
            "assistant",
            [("decision", "expire")],
        ),
        # taste said as one's own way, if it were up to them
        ("I'd use Vitest over Jest if it were only up to me", "user", [("preference", "Vitest")]),
        ("I'd personally keep comments short", "user", [("preference", "comments short")]),
        # rules: never…, ever; an ultimatum; every X comes with Y; a choice for every page
        ("no force pushes to main, ever", "user", [("rule", "force pushes")]),
        ("releases are tagged from main or they don't ship at all", "user", [("rule", "tagged")]),
        ("every API change comes with a changelog entry", "user", [("rule", "changelog entry")]),
        (
            "code blocks use two-space indents. applies to every page you edit",
            "user",
            [("rule", "two-space")],
        ),
        # someone else's word in a meeting; work put off; a plan list; the model's next step
        ("Sam said in the retro we should always squash merges", "user", []),
        (
            "we must add rate limits to the export, but not now, after the release",
            "user",
            [("task", "rate limits")],
        ),
        (
            "things we still owe before launch:\n1. the pricing page\n2. the status page",
            "user",
            [("task", "pricing page"), ("task", "status page")],
        ),
        ("Next up I'll port the billing specs.", "assistant", [("task", "port the billing")]),
        (
            "The retries come from the health check hitting a cold start.",
            "assistant",
            [("finding", "health check")],
        ),
        (
            "The accuracy jumped because the test set leaked into training.",
            "assistant",
            [("finding", "leaked")],
        ),
    ],
)
def test_statements_wordings_of_fresh15(
    text: str, speaker: str, expected: list[tuple[str, str]]
) -> None:
    assert_found(text, speaker, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I think it might be best if we kept the secrets in Vault, if that's alright.",
            [("decision", "secrets in Vault")],
        ),
        ("For the beta we leave out the invite system entirely.", [("decision", "invite system")]),
        ("build outputs get signed with sigstore", [("decision", "sigstore")]),
        ("We'll partition by week on created_at.", [("decision", "partition by week")]),
        ("next up after this one: add retries to the uploader", [("task", "add retries")]),
        ("docstrings in Google style, line length max 100", [("rule", "Google style")]),
        ("Been going back and forth between Vue and Svelte for the widget.", []),
    ],
)
def test_statements_more_wordings_of_fresh14(text: str, expected: list[tuple[str, str]]) -> None:
    assert_found(text, "user", expected)


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        (
            "Actually, let's just use Dramatiq on the broker we have.",
            "user",
            [("decision", "Dramatiq")],
        ),
        (
            "Let's build the charts on the client with the canvas API instead.",
            "user",
            [("decision", "canvas API")],
        ),
        ("Let's see what the logs say instead.", "user", []),
        (
            "The migration script is done. Remaining work:\n- backfill the audit table\n"
            "- drop the old column",
            "assistant",
            [("done", "migration script"), ("task", "backfill"), ("task", "drop the old column")],
        ),
        ("no idea which is faster, never tried either honestly", "user", []),
        ("Never touch the vendored SDK.", "user", [("rule", "vendored SDK")]),
        (
            "cache → memcached\nqueue => SQS, 14 day retention",
            "user",
            [("decision", "memcached"), ("decision", "SQS")],
        ),
        ("build: checkout → lint → test → package\nworks fine", "user", []),
        ("legacy FTP sync → gone, uploads move to S3", "user", [("reversal", "legacy FTP sync")]),
        ("Our CTO wants us to try Pulumi instead of Terraform, I haven't looked yet.", "user", []),
        ("Load tests showed that most calls hit the cache, not the database.", "user", []),
        ("It's the security team's call rather than mine.", "user", []),
        (
            "Backups are encrypted at rest. That's a compliance requirement, not a suggestion.",
            "user",
            [],
        ),
        (
            "I'm torn between tabs and a sidebar. Tabs feel nicer, but a sidebar scales better.",
            "user",
            [],
        ),
        (
            "I keep going back and forth on the ORM. Actually, let's just use SQLAlchemy.",
            "user",
            [("decision", "SQLAlchemy")],
        ),
    ],
)
def test_statements_wordings_of_fresh18(
    text: str, speaker: str, expected: list[tuple[str, str]]
) -> None:
    kinds = {"reversal": "decision", "done": "task_done"}
    found = [(s.kind.value, s.text, s.reverses) for s in promoted(statements(text, speaker))]
    assert len(found) == len(expected), found
    for (kind, said, reverses), (want_kind, want) in zip(found, expected, strict=True):
        assert kind == kinds.get(want_kind, want_kind) and want in said, found
        assert reverses or want_kind != "reversal", found


def test_what_is_weighed_after_dithering_gets_no_second_look() -> None:
    text = "I'm on the fence about autosave. Autosave is friendlier but undo gets harder."
    assert undecided(text) == []
