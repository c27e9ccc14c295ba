"""Build ``datasets/devlog.json``: a hand-written history of one software project, for recall.

Ledgerline is a small expense-sharing API (FastAPI, Postgres, Redis) built by a developer with an
AI coding agent over 24 sessions, March to April 2026. The history holds what a coding agent's
long-term memory has to keep: decisions made and later reversed, bugs and their fixes, the
user's preferences, project rules, people, libraries and files. Each question names the turns
that answer it (its evidence). Turns carry labels here; ids are ``c1:s<session>:t<turn>``.

Run ``uv run python datasets/build_devlog.py`` to rewrite the JSON next to this script.
"""

from __future__ import annotations

import json
from pathlib import Path

OUTPUT = Path(__file__).with_name("devlog.json")
CONVERSATION = "c1"
SPEAKERS = {"u": "user", "a": "assistant"}

# The history is data: one turn or question per line reads best, however long.
# ruff: noqa: E501
# fmt: off

# Each session: (start time, [(label, speaker, text)]). A label ("" for none) lets a question
# name the turn as evidence.
SESSIONS: list[tuple[str, list[tuple[str, str, str]]]] = [
    (
        "2026-03-02T09:00:00Z",
        [
            ("kickoff", "u", "New project: Ledgerline, an API for splitting shared expenses between friends and flatmates. Let's set up the repo."),
            ("", "a", "Sounds good. Any constraints on the web framework, or should I propose one?"),
            ("fastapi", "u", "Use FastAPI, not Flask. We want async endpoints and the OpenAPI docs for free."),
            ("", "a", "FastAPI it is. I'll create the app factory in src/ledgerline/app.py."),
            ("poetry", "u", "For dependencies let's go with Poetry, Jonas already knows it from his last job."),
            ("layout", "a", "I set up a src layout: src/ledgerline/ for the package and tests/ next to it, managed by Poetry with pyproject.toml."),
            ("pref_types", "u", "One thing about how I like code: full type hints everywhere, and keep functions small, under 20 lines if you can."),
            ("", "a", "Noted, type hints on every function and short functions."),
            ("rule_main", "u", "Rule for the repo: nobody pushes to main directly. Everything goes through a pull request and Maya has to review it."),
            ("people_maya", "a", "Understood. Maya is the tech lead and reviewer, so I'll open PRs and tag her."),
            ("pyver", "u", "Target Python 3.12."),
        ],
    ),
    (
        "2026-03-04T10:30:00Z",
        [
            ("postgres", "u", "Database time. Postgres 16, and I want SQLAlchemy 2 with the async engine and asyncpg."),
            ("", "a", "Got it. I'll add an async session factory in src/ledgerline/db.py."),
            ("alembic", "a", "Migrations will be handled by Alembic; the first revision creates users, groups, memberships and expenses."),
            ("cents", "u", "Store money as integer cents in a BIGINT column. No floats for money, ever, not in the DB and not in Python."),
            ("", "a", "Amounts will be int cents everywhere; the API accepts strings like '12.50' and converts them."),
            ("currency_col", "a", "Each expense also has a currency column holding the ISO 4217 code, three letters, e.g. EUR."),
            ("models_file", "a", "The ORM models live in src/ledgerline/models.py, one class per table."),
            ("", "u", "Good. Run the migration against the local docker postgres."),
            ("docker_compose", "a", "Added docker-compose.yml with postgres:16 on port 5433, so it doesn't clash with a system Postgres on 5432."),
        ],
    ),
    (
        "2026-03-06T14:00:00Z",
        [
            ("auth_start", "u", "Next: authentication. Jonas owns auth, he wants JWTs."),
            ("pyjwt", "a", "I'll use PyJWT for signing and verifying tokens, with HS256 and the secret from the LEDGERLINE_JWT_SECRET environment variable."),
            ("expiry15", "u", "Access tokens should expire after 15 minutes. Refresh tokens live 14 days."),
            ("", "a", "Set: access 15 min, refresh 14 days, refresh tokens stored hashed so they can be revoked."),
            ("auth_file", "a", "The token code is in src/ledgerline/auth.py; login and refresh endpoints are in src/ledgerline/routes/auth.py."),
            ("argon2", "u", "Passwords hashed with argon2, please, via argon2-cffi. Not bcrypt."),
            ("", "a", "Switched the hasher to argon2-cffi with the library's default parameters."),
            ("people_jonas", "u", "Jonas is the backend person for auth and payments; ping him on anything security related."),
            ("", "a", "Will do."),
        ],
    ),
    (
        "2026-03-09T09:15:00Z",
        [
            ("flaky", "u", "The test suite is flaky. test_create_group passes alone but fails when the whole suite runs."),
            ("", "a", "Looking at it now."),
            ("flaky_cause", "a", "Cause: all tests share one database and earlier tests leave rows behind, so a unique group name collides."),
            ("flaky_fix", "a", "Fix: a fixture in tests/conftest.py opens a transaction per test and rolls it back at the end, so every test starts clean."),
            ("", "u", "Does that work with the async session?"),
            ("flaky_nested", "a", "Yes, using a connection-level transaction and join_transaction_mode='create_savepoint' on the session."),
            ("pref_pytest", "u", "I prefer plain pytest functions with fixtures over unittest classes. Please keep tests that way."),
            ("", "a", "Okay, no TestCase classes."),
            ("flaky_done", "a", "The full suite passes ten runs in a row now."),
        ],
    ),
    (
        "2026-03-11T11:00:00Z",
        [
            ("fx_need", "u", "Groups travel, so expenses come in different currencies. We need conversion to the group's home currency."),
            ("fx_api", "a", "I suggest exchangerate.host for rates; it's free and has historical rates by date."),
            ("", "u", "Fine for now."),
            ("fx_cache1h", "a", "To avoid hammering it, rates are cached in Redis for one hour, keyed by base currency and date."),
            ("fx_file", "a", "The conversion code is in src/ledgerline/fx.py."),
            ("pref_httpx", "u", "Use httpx for HTTP calls, not requests. I want the async client everywhere."),
            ("", "a", "Using httpx.AsyncClient with a 5 second timeout."),
            ("fx_round", "u", "Converted amounts round half to even, banker's rounding, on the cent."),
            ("", "a", "Implemented with Decimal and ROUND_HALF_EVEN before converting back to int cents."),
            ("redis_added", "a", "Redis 7 added to docker-compose.yml for the cache."),
        ],
    ),
    (
        "2026-03-13T15:30:00Z",
        [
            ("split_modes", "u", "Let's build expense splitting. Three modes: equal, by percentage, and exact amounts."),
            ("split_file", "a", "The split logic goes in src/ledgerline/split.py, as pure functions without database access."),
            ("remainder_payer", "u", "When cents don't divide evenly, give the leftover cents to the person who paid."),
            ("", "a", "Okay, remainder to the payer."),
            ("cent_bug", "u", "Bug: 10.00 split three ways by percentage at 33.33% each loses a cent, shares sum to 9.99."),
            ("cent_fix", "a", "Fixed with the largest remainder method: floor every share, then hand out the missing cents by the largest fractional parts."),
            ("", "u", "And the tie-breaking?"),
            ("cent_tie", "a", "Ties go to the payer first, then by member id, so results are deterministic."),
            ("hypothesis", "a", "Added Hypothesis property tests checking that shares always sum exactly to the total."),
        ],
    ),
    (
        "2026-03-16T10:00:00Z",
        [
            ("ci_start", "u", "Priya is setting up CI on GitHub Actions. Can you write the workflow with her?"),
            ("people_priya", "a", "Sure. Priya handles devops and the frontend, right?"),
            ("", "u", "Yes."),
            ("ci_file", "a", "Workflow in .github/workflows/ci.yml: ruff check, ruff format --check, mypy, then pytest against a postgres service container."),
            ("mypy_strict", "u", "Run mypy in strict mode on src/. Tests can stay non-strict for now."),
            ("", "a", "mypy --strict on src/ledgerline, plain mypy on tests."),
            ("rule_green", "u", "New rule: CI must be green before anything is merged, no exceptions, even for docs."),
            ("ruff_rules", "a", "Ruff configured in pyproject.toml with the E, F, I, B and UP rule sets and a line length of 100."),
            ("ci_matrix", "u", "Test on Python 3.11 and 3.12 both."),
            ("", "a", "Added a matrix for 3.11 and 3.12."),
        ],
    ),
    (
        "2026-03-18T13:00:00Z",
        [
            ("structlog", "u", "Logging: I want structured JSON logs. Use structlog."),
            ("", "a", "structlog configured in src/ledgerline/logging.py with JSON rendering in production and a console renderer locally."),
            ("no_bodies", "u", "Don't log request bodies at all. They contain names and amounts; privacy matters here."),
            ("", "a", "The request middleware logs only method, path, status and duration."),
            ("rule_email", "u", "And a hard rule: never log email addresses, anywhere, not even in debug logs."),
            ("email_filter", "a", "Added a structlog processor that masks anything shaped like an email address before rendering, as a safety net."),
            ("request_id", "a", "Every request gets an X-Request-ID header, bound into the log context."),
            ("", "u", "Nice."),
        ],
    ),
    (
        "2026-03-20T09:45:00Z",
        [
            ("poetry_slow", "u", "Poetry lock takes four minutes on CI now. This is painful."),
            ("", "a", "The resolver is slow with our dependency set. Options: cache harder, or switch tools."),
            ("uv_switch", "u", "Let's drop Poetry and move to uv. Jonas agreed this morning."),
            ("uv_done", "a", "Migrated: pyproject.toml now uses PEP 621 metadata, uv.lock is committed, and poetry.lock is deleted."),
            ("uv_ci", "a", "CI installs with uv sync --frozen; the dependency step went from about four minutes to twelve seconds."),
            ("dockerfile", "u", "Update the Dockerfile too."),
            ("dockerfile_done", "a", "Dockerfile now copies the uv binary from the ghcr.io/astral-sh/uv image and runs uv sync --frozen --no-dev."),
        ],
    ),
    (
        "2026-03-23T16:00:00Z",
        [
            ("settle_500", "u", "Sentry shows a 500 on POST /groups/{id}/settle. The group had no members left."),
            ("settle_cause", "a", "It's a ZeroDivisionError in split.py: the equal split divides by the member count, which is zero."),
            ("settle_fix", "a", "Fixed: split_equal now rejects an empty member list, and the endpoint returns 422 with the message 'group has no members'."),
            ("", "u", "Add a regression test."),
            ("settle_test", "a", "Added test_settle_empty_group_returns_422 in tests/test_settle.py."),
            ("sentry", "u", "By the way, Sentry is our error tracker, set up last week by Priya, the DSN is in the fly secrets."),
            ("", "a", "Thanks, I'll keep that in mind."),
        ],
    ),
    (
        "2026-03-25T11:30:00Z",
        [
            ("email_need", "u", "Users should get an email when someone settles up with them."),
            ("postmark", "a", "I suggest Postmark for transactional email; it has a simple HTTP API and good deliverability."),
            ("", "u", "Go with Postmark."),
            ("email_template", "a", "The settlement email template is templates/emails/settlement.html, rendered with Jinja2."),
            ("email_async", "a", "Sending happens after the response via FastAPI BackgroundTasks, so the endpoint stays fast."),
            ("pref_plain", "u", "Keep emails plain and short, no images and no marketing footers. I hate bloated emails."),
            ("", "a", "Plain layout, one paragraph, one link."),
        ],
    ),
    (
        "2026-03-27T14:15:00Z",
        [
            ("slow_list", "u", "GET /groups/{id}/expenses is slow, p95 840 ms for a group with 300 expenses."),
            ("n_plus_1", "a", "It's an N+1: each expense lazily loads its shares and its payer, one query per row."),
            ("selectinload", "a", "Fixed with selectinload for shares and joinedload for the payer in src/ledgerline/repos/expenses.py."),
            ("p95_after", "a", "p95 is now 95 ms on the same group."),
            ("lazy_raise", "u", "Can we make lazy loading fail loudly so this never sneaks back in?"),
            ("", "a", "Set lazy='raise' on the relationships, so any accidental lazy load raises in tests."),
            ("pagination", "u", "Also paginate that endpoint, 50 per page, cursor based."),
            ("", "a", "Added cursor pagination keyed on (created_at, id), default page size 50."),
        ],
    ),
    (
        "2026-03-30T10:00:00Z",
        [
            ("camel_ask", "u", "Priya is building the web client and wants camelCase field names in the JSON."),
            ("camel_decision", "a", "Proposal: keep snake_case in Python and use a pydantic alias_generator that emits camelCase, with populate_by_name on."),
            ("", "u", "Do it."),
            ("schemas_file", "a", "Base schema class with the camelCase config is in src/ledgerline/schemas/base.py; every API schema inherits it."),
            ("openapi_ts", "a", "Priya generates the TypeScript client from /openapi.json with openapi-typescript."),
            ("pref_errors", "u", "For errors I want RFC 7807 problem+json responses, consistent everywhere."),
            ("", "a", "Added an exception handler that renders problem details with type, title, status and detail."),
        ],
    ),
    (
        "2026-04-01T08:30:00Z",
        [
            ("stale_rates", "u", "Users in Asia see yesterday's exchange rates right after midnight UTC. Complaints came in."),
            ("stale_cause", "a", "The one hour Redis cache keeps the previous day's rate for up to an hour after the date changes."),
            ("ttl15", "u", "Cut the cache TTL to 15 minutes."),
            ("ttl_done", "a", "TTL is now 15 minutes, and the cache key includes the date, so a new day always misses the cache."),
            ("fx_fallback", "a", "If exchangerate.host is down, fx.py falls back to the most recent cached rate and marks the expense rate_is_estimate."),
            ("", "u", "Good, that flag should show in the UI."),
            ("fx_flag_api", "a", "It's exposed as rateIsEstimate in the API response."),
        ],
    ),
    (
        "2026-04-03T13:00:00Z",
        [
            ("deploy_where", "u", "Where do we deploy? Heroku or Fly.io?"),
            ("fly", "a", "Fly.io: cheaper for our size, Postgres and Redis nearby, and machines in Amsterdam close to our users."),
            ("fly_chosen", "u", "Fly.io it is, region ams."),
            ("fly_toml", "a", "Added fly.toml with two machines, a health check on /healthz, and a release command that runs alembic upgrade head."),
            ("rule_secrets", "u", "Rule: no secrets in the repo. No committed .env files. Secrets go in fly secrets only."),
            ("", "a", "Added .env to .gitignore and a .env.example with placeholder values."),
            ("gitleaks", "a", "Also added a gitleaks step to ci.yml that fails the build if a secret is committed."),
        ],
    ),
    (
        "2026-04-06T09:00:00Z",
        [
            ("tz_bug", "u", "Bug report: an expense entered at 23:30 in Berlin shows up on the next day in the list."),
            ("tz_cause", "a", "We store naive datetimes and the server treats them as UTC, while the client sent local time."),
            ("utc_decision", "u", "Decision: store every timestamp as timestamptz in UTC, the API speaks ISO 8601 with offsets, and the client converts for display."),
            ("tz_migration", "a", "Alembic migration 0007 converts the columns to timestamptz, assuming existing values were UTC."),
            ("tz_date", "a", "Expenses also get a separate spent_on date column in the user's local calendar, so day grouping is stable."),
            ("", "u", "Good, that's cleaner."),
            ("pref_iso", "u", "And always ISO 8601 strings in the API, never unix timestamps. I find them unreadable."),
        ],
    ),
    (
        "2026-04-08T15:00:00Z",
        [
            ("postmark_cost", "u", "Postmark costs us 15 dollars a month for a few hundred emails. Too much for a side project."),
            ("ses_switch", "u", "Let's move email to AWS SES instead."),
            ("ses_lib", "a", "I'll use aiobotocore for async SES calls, keeping the same send_email interface."),
            ("notify_file", "a", "Email sending now lives in src/ledgerline/notify.py; the Postmark client is removed."),
            ("ses_sandbox", "a", "SES starts in sandbox mode; we need to request production access before real users get emails."),
            ("", "u", "I'll file the request today."),
            ("ses_region", "a", "SES is configured in eu-central-1, with DKIM records for ledgerline.app."),
        ],
    ),
    (
        "2026-04-10T10:30:00Z",
        [
            ("mobile_logout", "u", "Mobile users keep getting logged out. The 15 minute access token is too short with flaky connections."),
            ("", "a", "The refresh flow fails when the app is backgrounded and the refresh request is dropped."),
            ("expiry30", "u", "Raise the access token lifetime to 30 minutes. Refresh tokens stay at 14 days. Jonas signed off."),
            ("expiry_done", "a", "Done: ACCESS_TOKEN_MINUTES is now 30 in src/ledgerline/auth.py."),
            ("refresh_rotate", "a", "I also made refresh tokens rotate on every use, and reuse of an old one revokes the whole family."),
            ("", "u", "Good call."),
        ],
    ),
    (
        "2026-04-13T11:00:00Z",
        [
            ("recurring", "u", "Feature: recurring expenses, like rent every month on the 1st."),
            ("apscheduler", "a", "Option one is APScheduler inside the web process; option two is a separate worker."),
            ("arq_decision", "u", "No scheduler inside the web process. Use arq with Redis as a separate worker."),
            ("worker_file", "a", "The arq worker is in src/ledgerline/worker.py with a cron job create_recurring_expenses running at 00:10 UTC."),
            ("recurring_model", "a", "New table recurring_templates with rule (monthly or weekly), day, amount_cents and the next due date."),
            ("", "u", "Deploy the worker as its own Fly process group."),
            ("fly_worker", "a", "fly.toml now has two process groups: app and worker."),
        ],
    ),
    (
        "2026-04-15T09:30:00Z",
        [
            ("dup_recurring", "u", "Rent got created twice this month for a couple of groups."),
            ("dup_cause", "a", "Two worker machines both ran the cron job at 00:10 and both inserted the expense."),
            ("dup_fix", "a", "Fix: a unique constraint on (template_id, period) and an INSERT ... ON CONFLICT DO NOTHING, so a second run is harmless."),
            ("advisory", "a", "Plus a Postgres advisory lock around the job, so only one worker does the work at a time."),
            ("", "u", "Clean up the duplicates in production too."),
            ("dup_cleanup", "a", "Wrote scripts/dedupe_recurring.py; it removed 14 duplicate expenses in prod after a dry run."),
        ],
    ),
    (
        "2026-04-17T14:00:00Z",
        [
            ("release", "u", "Let's cut the first public release, v0.4.0."),
            ("changelog", "a", "CHANGELOG.md written in Keep a Changelog format with Added, Changed and Fixed sections."),
            ("rule_semver", "u", "Rule for releases: semantic versioning, tags named vX.Y.Z, and Maya approves every release."),
            ("", "a", "Tagged v0.4.0 after Maya's approval."),
            ("rule_migrations", "u", "Another rule: migrations must be backwards compatible. Expand first, deploy, then contract in a later release."),
            ("", "a", "Added that to CONTRIBUTING.md under database changes."),
            ("release_workflow", "a", "A release workflow in .github/workflows/release.yml deploys to Fly when a v* tag is pushed."),
        ],
    ),
    (
        "2026-04-20T10:00:00Z",
        [
            ("retro", "u", "Retro notes from today's call with Maya, Jonas and Priya."),
            ("drop311", "u", "We're dropping Python 3.11 support, 3.12 only, so we can use the new generic syntax."),
            ("", "a", "Removed 3.11 from the CI matrix and set requires-python >= 3.12."),
            ("mypy_tests", "u", "Also mypy strict now applies to tests/ too, not just src/."),
            ("mypy_tests_done", "a", "Fixed 63 type errors in tests; mypy --strict now covers tests as well."),
            ("owner_release", "u", "Jonas takes over as release manager from next month; Maya stays reviewer."),
            ("", "a", "Noted: Jonas manages releases, Maya still reviews PRs."),
        ],
    ),
    (
        "2026-04-22T13:30:00Z",
        [
            ("csv_export", "u", "Add CSV export of a group's expenses."),
            ("export_file", "a", "Endpoint GET /groups/{id}/export.csv in src/ledgerline/export.py, built as a StreamingResponse so big groups don't sit in memory."),
            ("mojibake", "u", "Excel shows garbage for umlauts and the euro sign in the export."),
            ("bom_fix", "a", "Excel guesses the encoding without a byte order mark; the export now starts with a UTF-8 BOM."),
            ("csv_semicolon", "u", "German Excel also wants semicolons as separators."),
            ("", "a", "Added a ?delimiter= parameter, comma by default, semicolon allowed."),
            ("csv_amounts", "a", "Amounts in the CSV are written as decimal strings from the integer cents, never floats."),
        ],
    ),
    (
        "2026-04-24T09:00:00Z",
        [
            ("ratelimit", "u", "We're getting scraped. Add rate limiting."),
            ("slowapi", "a", "I'll use slowapi with the Redis backend: 60 requests per minute per user, and per IP when not logged in."),
            ("", "u", "Return the right headers."),
            ("ratelimit_headers", "a", "429 responses carry Retry-After, and every response carries the X-RateLimit-Remaining header."),
            ("camel_revert", "u", "Also, Priya changed her mind: the new client library handles snake_case fine. Drop the camelCase aliases."),
            ("camel_revert_done", "a", "Removed the alias_generator from schemas/base.py; the API is snake_case again. Priya regenerated the TypeScript client."),
            ("ratelimit_login", "a", "The login endpoint has a stricter limit of 5 attempts per minute per IP to slow password guessing."),
        ],
    ),
]

# (category, question, evidence labels)
QUESTIONS: list[tuple[str, str, list[str]]] = [
    ("decision", "Which web framework did we pick for the API and why?", ["fastapi"]),
    ("decision", "What database and ORM setup does the project use?", ["postgres"]),
    ("decision", "How are monetary amounts stored?", ["cents"]),
    ("decision", "How do we sign the JWT access tokens?", ["pyjwt"]),
    ("decision", "Which password hashing algorithm was chosen?", ["argon2"]),
    ("decision", "Which service provides exchange rates?", ["fx_api"]),
    ("decision", "How are converted currency amounts rounded?", ["fx_round"]),
    ("decision", "What are the three ways an expense can be split?", ["split_modes"]),
    ("decision", "Who gets the leftover cents when a split doesn't divide evenly?", ["remainder_payer"]),
    ("decision", "What library do we use for logging?", ["structlog"]),
    ("decision", "Which hosting platform did we choose for deployment and in which region?", ["fly", "fly_chosen"]),
    ("decision", "How do we store timestamps in the database?", ["utc_decision"]),
    ("decision", "What do we use to run recurring background jobs?", ["arq_decision"]),
    ("decision", "Which library implements rate limiting?", ["slowapi"]),
    ("decision", "How many requests per minute is a user allowed?", ["slowapi"]),
    ("decision", "How does the expenses list endpoint paginate?", ["pagination"]),
    ("decision", "What format do error responses use?", ["pref_errors"]),
    ("decision", "How is the settlement email sent without slowing the endpoint?", ["email_async"]),
    ("decision", "Why is the CSV export a streaming response?", ["export_file"]),
    ("decision", "What happens when the exchange rate API is unavailable?", ["fx_fallback"]),
    ("decision", "How do refresh tokens behave when they are used?", ["refresh_rotate"]),
    ("decision", "Is there a stricter limit on the login endpoint?", ["ratelimit_login"]),
    ("decision", "Which migration tool manages the database schema?", ["alembic"]),
    ("decision", "Where does the JWT signing secret come from?", ["pyjwt"]),
    ("decision", "How long do refresh tokens last?", ["expiry15", "expiry30"]),
    ("decision", "Which ruff rule sets are enabled and what line length?", ["ruff_rules"]),
    ("decision", "How do we keep lazy loading from causing N+1 queries again?", ["lazy_raise"]),
    ("decision", "Which Python version does the project target?", ["pyver", "drop311"]),
    ("decision", "Where does the project deploy the background worker?", ["fly_worker"]),
    ("decision", "How was expense day grouping made stable across time zones?", ["tz_date"]),
    ("decision", "What delimiter options does the CSV export support?", ["csv_semicolon"]),
    ("temporal", "What package manager did the project start with, and what replaced it?", ["poetry", "uv_switch"]),
    ("temporal", "Why did we move away from Poetry?", ["poetry_slow"]),
    ("temporal", "What is the current access token lifetime, and what was it before?", ["expiry15", "expiry30"]),
    ("temporal", "Why was the access token expiry changed?", ["mobile_logout"]),
    ("temporal", "Which email provider did we use first, and which do we use now?", ["postmark", "ses_switch"]),
    ("temporal", "Why did we stop using Postmark?", ["postmark_cost"]),
    ("temporal", "How long are exchange rates cached now, and what was the original TTL?", ["fx_cache1h", "ttl15"]),
    ("temporal", "Does the API still use camelCase field names?", ["camel_decision", "camel_revert"]),
    ("temporal", "Why were the camelCase aliases removed?", ["camel_revert"]),
    ("temporal", "Which Python versions did CI test originally, and which now?", ["ci_matrix", "drop311"]),
    ("temporal", "Was mypy strict always applied to the tests?", ["mypy_strict", "mypy_tests"]),
    ("temporal", "When was the first public release tagged and what version was it?", ["release", "rule_semver"]),
    ("temporal", "What did we decide about the scheduler after considering APScheduler?", ["apscheduler", "arq_decision"]),
    ("temporal", "How much faster did CI dependency installation get after the switch to uv?", ["uv_ci"]),
    ("temporal", "What was the p95 latency of the expenses list before and after the fix?", ["slow_list", "p95_after"]),
    ("temporal", "Who will manage releases from next month?", ["owner_release"]),
    ("temporal", "What did the first database migration create?", ["alembic"]),
    ("bug", "Why was the test suite flaky?", ["flaky", "flaky_cause"]),
    ("bug", "How was the flaky test problem fixed?", ["flaky_fix", "flaky_nested"]),
    ("bug", "What caused the 500 error on the settle endpoint?", ["settle_500", "settle_cause"]),
    ("bug", "What does the settle endpoint return now for a group with no members?", ["settle_fix"]),
    ("bug", "Why did a three-way percentage split lose a cent?", ["cent_bug"]),
    ("bug", "Which method fixed the lost cent in splits?", ["cent_fix"]),
    ("bug", "How are ties broken when distributing remainder cents?", ["cent_tie"]),
    ("bug", "Why was the group expenses endpoint slow?", ["slow_list", "n_plus_1"]),
    ("bug", "How was the N+1 query fixed?", ["selectinload"]),
    ("bug", "Why did users in Asia see yesterday's exchange rates?", ["stale_rates", "stale_cause"]),
    ("bug", "Why did an expense entered late in the evening in Berlin show on the next day?", ["tz_bug", "tz_cause"]),
    ("bug", "Which migration converted the timestamp columns?", ["tz_migration"]),
    ("bug", "Why were recurring rent expenses created twice?", ["dup_recurring", "dup_cause"]),
    ("bug", "How did we prevent duplicate recurring expenses?", ["dup_fix", "advisory"]),
    ("bug", "How many duplicate expenses were removed in production?", ["dup_cleanup"]),
    ("bug", "Why did Excel show garbage characters in the CSV export?", ["mojibake", "bom_fix"]),
    ("bug", "Why were mobile users getting logged out?", ["mobile_logout"]),
    ("bug", "How many type errors did we fix when strict mypy was turned on for tests?", ["mypy_tests_done"]),
    ("bug", "Which regression test covers settling an empty group?", ["settle_test"]),
    ("bug", "Is there a property test for the split sums?", ["hypothesis"]),
    ("preference", "How does the user like functions to be written?", ["pref_types"]),
    ("preference", "What HTTP client library does the user prefer?", ["pref_httpx"]),
    ("preference", "What style of tests does the user prefer?", ["pref_pytest"]),
    ("preference", "What does the user want the emails to look like?", ["pref_plain"]),
    ("preference", "How should dates and times appear in the API?", ["pref_iso"]),
    ("preference", "Does the user want unix timestamps in API responses?", ["pref_iso"]),
    ("preference", "Should the notification emails contain images?", ["pref_plain"]),
    ("preference", "Is requests or httpx used for outgoing calls?", ["pref_httpx"]),
    ("preference", "Which password hasher did the user explicitly reject?", ["argon2"]),
    ("preference", "Should the project use unittest TestCase classes?", ["pref_pytest"]),
    ("preference", "Did the user want Flask?", ["fastapi"]),
    ("preference", "Should the scheduler run inside the web process?", ["arq_decision"]),
    ("preference", "What timeout does the HTTP client use?", ["pref_httpx"]),
    ("preference", "What's the user's view on floats for money?", ["cents"]),
    ("rule", "Can anyone push directly to main?", ["rule_main"]),
    ("rule", "Who must review pull requests?", ["rule_main", "people_maya"]),
    ("rule", "What must be true before merging?", ["rule_green"]),
    ("rule", "Can a documentation change be merged with failing CI?", ["rule_green"]),
    ("rule", "Is it ok to log email addresses in debug logs?", ["rule_email"]),
    ("rule", "What safety net masks email addresses in logs?", ["email_filter"]),
    ("rule", "Are request bodies logged?", ["no_bodies"]),
    ("rule", "What does the request middleware log?", ["no_bodies"]),
    ("rule", "Where do secrets go, and may we commit a .env file?", ["rule_secrets"]),
    ("rule", "What stops a secret from being committed by accident?", ["gitleaks"]),
    ("rule", "How are release tags named?", ["rule_semver"]),
    ("rule", "Who approves releases?", ["rule_semver"]),
    ("rule", "What is the rule for database migrations?", ["rule_migrations"]),
    ("rule", "Where is the migration rule documented?", ["rule_migrations"]),
    ("rule", "What changelog format do we use?", ["changelog"]),
    ("rule", "Can the API return floats for amounts in the CSV export?", ["csv_amounts", "cents"]),
    ("file", "Where is the FastAPI app factory?", ["fastapi"]),
    ("file", "Which file holds the async database session factory?", ["postgres"]),
    ("file", "Where are the ORM models defined?", ["models_file"]),
    ("file", "Where is the token code and where are the login endpoints?", ["auth_file"]),
    ("file", "Which file contains the per-test transaction fixture?", ["flaky_fix"]),
    ("file", "Where is the currency conversion code?", ["fx_file"]),
    ("file", "Which module contains the split logic?", ["split_file"]),
    ("file", "What is the path of the CI workflow?", ["ci_file"]),
    ("file", "What does the CI workflow run?", ["ci_file"]),
    ("file", "Where is structlog configured?", ["structlog"]),
    ("file", "Which lock file is committed now?", ["uv_done"]),
    ("file", "How does the Dockerfile install dependencies?", ["dockerfile_done"]),
    ("file", "Where is the settlement email template?", ["email_template"]),
    ("file", "Which file has the expenses repository with the eager loading?", ["selectinload"]),
    ("file", "Where is the base schema class?", ["schemas_file"]),
    ("file", "What is configured in fly.toml?", ["fly_toml", "fly_worker"]),
    ("file", "Which file sends email now?", ["notify_file"]),
    ("file", "Where is the arq worker and when does its cron job run?", ["worker_file"]),
    ("file", "Which script cleaned up duplicate recurring expenses?", ["dup_cleanup"]),
    ("file", "Which workflow deploys a release?", ["release_workflow"]),
    ("file", "Where is the CSV export endpoint implemented?", ["export_file"]),
    ("file", "What port does the local Postgres container use and why?", ["docker_compose"]),
    ("file", "Which file defines the regression test for the settle bug?", ["settle_test"]),
    ("file", "What file holds the recurring expense templates?", ["recurring_model"]),
    ("file", "Where did the ACCESS_TOKEN_MINUTES change land?", ["expiry_done"]),
    ("people", "Who is the tech lead?", ["people_maya"]),
    ("people", "Who owns authentication?", ["auth_start", "people_jonas"]),
    ("people", "Who should be asked about security questions?", ["people_jonas"]),
    ("people", "Who set up CI?", ["ci_start", "people_priya"]),
    ("people", "What does Priya work on?", ["people_priya", "camel_ask"]),
    ("people", "Who agreed to the switch to uv?", ["uv_switch"]),
    ("people", "Who approved the longer access token lifetime?", ["expiry30"]),
    ("people", "Who set up Sentry?", ["sentry"]),
    ("people", "Who was in the retro on April 20?", ["retro"]),
    ("people", "Who generates the TypeScript client?", ["openapi_ts", "camel_revert_done"]),
    ("people", "Who knew Poetry from a previous job?", ["poetry"]),
    ("library", "Which library hashes passwords?", ["argon2"]),
    ("library", "Which driver connects SQLAlchemy to Postgres?", ["postgres"]),
    ("library", "What renders the email templates?", ["email_template"]),
    ("library", "Which library do we use for async SES calls?", ["ses_lib"]),
    ("library", "Which library generates the TypeScript client?", ["openapi_ts"]),
    ("library", "Which tool is used for property-based tests?", ["hypothesis"]),
    ("library", "What is our error tracker?", ["sentry"]),
    ("library", "What scans commits for leaked secrets?", ["gitleaks"]),
    ("library", "Which Redis version runs locally?", ["redis_added"]),
    ("library", "Which Postgres image does docker compose use?", ["docker_compose"]),
    ("multi-hop", "The person who owns auth also signed off on which token change?", ["people_jonas", "expiry30"]),
    ("multi-hop", "Which file changed when the bug caused by an empty member list was fixed?", ["settle_cause", "settle_fix"]),
    ("multi-hop", "The cache we added for exchange rates runs on which service, and what is its TTL today?", ["redis_added", "fx_cache1h", "ttl15"]),
    ("multi-hop", "Which Redis-backed pieces does the project have?", ["fx_cache1h", "arq_decision", "slowapi"]),
    ("multi-hop", "The email provider we switched to runs in which AWS region and what mode does it start in?", ["ses_switch", "ses_region", "ses_sandbox"]),
    ("multi-hop", "Which two decisions made the worker deploy as its own process?", ["arq_decision", "fly_worker"]),
    ("multi-hop", "How do exact money amounts survive from the database to the CSV export?", ["cents", "csv_amounts"]),
    ("multi-hop", "Which rules govern how code gets into main?", ["rule_main", "rule_green"]),
    ("multi-hop", "What privacy rules apply to logging?", ["no_bodies", "rule_email"]),
    ("multi-hop", "What does the release command run and which rule keeps it safe?", ["fly_toml", "rule_migrations"]),
    ("multi-hop", "Which of Priya's requests was later reversed, and what replaced it?", ["camel_ask", "camel_revert"]),
    ("multi-hop", "Which changes did the retro bring to CI?", ["drop311", "mypy_tests"]),
    ("multi-hop", "How is the currency of an expense stored and how is it converted?", ["currency_col", "fx_need"]),
    ("multi-hop", "What guards against two workers running the recurring job at the same time?", ["advisory", "dup_fix"]),
    ("multi-hop", "Which endpoints use Redis-backed limits and what are they?", ["slowapi", "ratelimit_login"]),
    ("multi-hop", "Where does the rate estimate flag appear and when is it set?", ["fx_fallback", "fx_flag_api"]),
    ("multi-hop", "How is uv used in CI and in the Docker image?", ["uv_ci", "dockerfile_done"]),
    ("multi-hop", "What headers does the API add for request tracing and rate limits?", ["request_id", "ratelimit_headers"]),
    ("multi-hop", "Which bug led to property tests for the split code, and what do those tests check?", ["cent_bug", "hypothesis"]),
]
# fmt: on


def turn_ids() -> dict[str, str]:
    """Label → turn id, checking that labels are unique."""
    ids: dict[str, str] = {}
    for number, (_, turns) in enumerate(SESSIONS, start=1):
        for position, (label, _, _) in enumerate(turns, start=1):
            if not label:
                continue
            if label in ids:
                raise ValueError(f"label {label!r} is used twice")
            ids[label] = f"{CONVERSATION}:s{number}:t{position}"
    return ids


def sessions() -> list[dict[str, object]]:
    """The sessions in the dataset format."""
    return [
        {
            "id": f"s{number}",
            "started_at": started_at,
            "turns": [
                {
                    "id": f"{CONVERSATION}:s{number}:t{position}",
                    "speaker": SPEAKERS[speaker],
                    "text": text,
                }
                for position, (_, speaker, text) in enumerate(turns, start=1)
            ],
        }
        for number, (started_at, turns) in enumerate(SESSIONS, start=1)
    ]


def questions(ids: dict[str, str]) -> list[dict[str, object]]:
    """The questions in the dataset format, labels resolved to turn ids."""
    return [
        {
            "id": f"q{number}",
            "text": text,
            "evidence": [ids[label] for label in labels],
            "category": category,
        }
        for number, (category, text, labels) in enumerate(QUESTIONS, start=1)
    ]


def build() -> dict[str, object]:
    """The whole dataset."""
    ids = turn_ids()
    return {
        "name": "ledgerline-devlog",
        "conversations": [
            {"id": CONVERSATION, "sessions": sessions(), "questions": questions(ids)}
        ],
    }


def main() -> None:
    """Write the dataset JSON next to this script."""
    OUTPUT.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
