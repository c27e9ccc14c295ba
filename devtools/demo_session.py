"""The scripted coding session the demo, the compaction tests and the notebooks replay.

A developer and an agent add CSV and JSON export to an invoicing service over 44 user turns: a
subagent explores, a test failure gets fixed, a decision (SQLite cache) is reversed (Redis), a
type error stays open, and the session is compacted three times. ``EXPECTED`` says what must
survive each compaction and what must be gone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from plait.adapters.hosts.opencode.replay import SessionReplay

OnCompaction = Callable[[int, list[str], str], Awaitable[None]]


@dataclass(frozen=True, kw_only=True, slots=True)
class Expectation:
    """What the envelope after a compaction must and must not contain (lower-case fragments)."""

    present: tuple[str, ...]
    absent: tuple[str, ...]


EXPECTED: dict[int, Expectation] = {
    1: Expectation(
        present=(
            "sqlite",  # the cache decision, still valid at this point
            "never commit directly to main",
            "add tests for the csv export",
            "app/routes/invoices.py",
        ),
        absent=("test_csv_header",),  # fixed before the compaction
    ),
    2: Expectation(
        present=(
            "redis",
            "never commit directly to main",
            "add json export",
            "app/cache.py",
            "incompatible return value type",
        ),
        absent=("sqlite", "add the csv export endpoint"),
    ),
    3: Expectation(
        present=(
            "redis",
            "never commit directly to main",
            "update the export docs",
            "incompatible return value type",
        ),
        absent=("sqlite", "add json export"),
    ),
}

PYTEST_FAILURE = (
    "============ FAILURES ============\n"
    "FAILED tests/test_export.py::test_csv_header - AssertionError: "
    "expected 'id,amount,currency' got 'id,amount'\n1 failed, 11 passed in 0.42s"
)
MYPY_FAILURE = (
    'app/cache.py:12: error: Incompatible return value type (got "bytes | None", '
    'expected "str")  [return-value]\nFound 1 error in 1 file (checked 9 source files)'
)


async def play(session: SessionReplay, on_compaction: OnCompaction) -> None:
    """Play the whole session; ``on_compaction(n, context, next_envelope)`` after each one."""
    await session.start()
    await opening(session)
    await csv_endpoint(session)
    await compaction(session, 1, on_compaction, CSV_SUMMARY)
    await cache_reversal(session)
    await compaction(session, 2, on_compaction, JSON_SUMMARY)
    await wrap_up(session)
    await compaction(session, 3, on_compaction, WRAP_SUMMARY)
    await session.user("Thanks, that's all for today.")
    await session.idle()


async def opening(s: SessionReplay) -> None:
    """Turns 1-8: the request, rules, a decision, the plan."""
    await s.branch("main")
    await s.user(
        "We're working on the invoicing service in services/invoices. Add a CSV export "
        "endpoint to the FastAPI app at GET /invoices/export.csv."
    )
    await s.tool(
        "read", {"filePath": "app/main.py"}, "from fastapi import FastAPI\napp = FastAPI()"
    )
    await s.tool("read", {"filePath": "app/routes/invoices.py"}, "router = APIRouter()")
    await s.assistant("I read app/main.py and app/routes/invoices.py; the router is in place.")
    await s.user("Rule: never commit directly to main, always open a pull request.")
    await s.user("We decided to use SQLite for the export cache to keep it simple.")
    await s.user("I prefer pytest fixtures over setUp methods in tests.")
    await s.todos(
        ("Add the CSV export endpoint", "in_progress"),
        ("Add tests for the CSV export", "pending"),
        ("Update the export docs", "pending"),
    )
    await s.user("Sounds good, go ahead.")
    await s.tool(
        "glob", {"pattern": "app/**/*.py"}, "app/main.py\napp/routes/invoices.py\napp/money.py"
    )
    await s.user("Use the stdlib csv module, no pandas.")
    await s.user("Keep the column order id, amount, currency.")
    await s.user("yes, do it")


async def csv_endpoint(s: SessionReplay) -> None:
    """Turns 9-20: the endpoint, a failing test, a subagent, the fix."""
    await s.branch("feature/csv-export")
    await s.edit("app/routes/invoices.py", "router = APIRouter()", "...")
    await s.file_edited("app/routes/invoices.py")
    await s.user("Now write the tests for the CSV export.")
    await s.tool(
        "write",
        {"filePath": "tests/test_export.py", "content": "def test_csv_header(): ..."},
        "Wrote file",
    )
    await s.tool(
        "bash", {"command": "pytest -q tests/test_export.py"}, PYTEST_FAILURE, metadata={"exit": 1}
    )
    await s.assistant("The header test fails: the currency column is missing.")
    await s.user("Why is currency missing? Check how money is formatted.")
    child = s.child()
    await child.start()
    await child.user("Find where invoice amounts and currencies are formatted.")
    await child.tool(
        "grep", {"pattern": "quantize"}, "app/money.py:14: amount.quantize(Decimal('0.01'))"
    )
    await child.tool("read", {"filePath": "app/money.py"}, "def format_amount(value): ...")
    await child.assistant(
        "Amounts are formatted in app/money.py with Decimal.quantize; currency is dropped there."
    )
    await child.idle()
    await s.user("OK, fix format_amount so it keeps the currency.")
    await s.edit("app/money.py", "def format_amount", "...")
    await s.tool(
        "bash",
        {"command": "pytest -q tests/test_export.py"},
        "12 passed in 0.40s",
        metadata={"exit": 0},
    )
    await s.todos(
        ("Add the CSV export endpoint", "completed"),
        ("Add tests for the CSV export", "in_progress"),
        ("Update the export docs", "pending"),
    )
    await s.user("Great. Run the whole suite too.")
    await s.tool("bash", {"command": "pytest -q"}, "58 passed in 2.10s", metadata={"exit": 0})
    await s.user("Add a test for an empty invoice list as well.")
    await s.edit("tests/test_export.py", "x", "y")
    await s.user("Looks fine.")
    await s.idle()


async def cache_reversal(s: SessionReplay) -> None:
    """Turns 21-32: the cache decision is reversed, JSON export starts, a type error appears."""
    await s.user(
        "Actually, don't use SQLite for the export cache. Use Redis instead, we already run it."
    )
    await s.tool("write", {"filePath": "app/cache.py", "content": "import redis"}, "Wrote file")
    await s.user("Cache entries should expire after ten minutes.")
    await s.todos(
        ("Add the CSV export endpoint", "completed"),
        ("Add tests for the CSV export", "completed"),
        ("Add JSON export", "in_progress"),
        ("Update the export docs", "pending"),
    )
    await s.user("Next, add JSON export at GET /invoices/export.json.")
    await s.edit("app/routes/invoices.py", "a", "b")
    await s.tool("bash", {"command": "mypy app"}, MYPY_FAILURE, metadata={"exit": 1})
    await s.assistant(
        "mypy reports a return type problem in app/cache.py; I'll look at it after the JSON work."
    )
    await s.user("Leave the mypy error for now, finish JSON first.")
    await s.tool("read", {"filePath": "app/schemas.py"}, "class Invoice(BaseModel): ...")
    await s.user("Use the Invoice pydantic schema for the JSON output.")
    await s.edit("app/routes/invoices.py", "c", "d")
    await s.user("Run the tests.")
    await s.tool("bash", {"command": "pytest -q"}, "61 passed in 2.30s", metadata={"exit": 0})
    await s.user("Good.")
    await s.user("Show me the diff of invoices.py.")
    await s.tool(
        "bash",
        {"command": "git diff app/routes/invoices.py"},
        "+@router.get('/invoices/export.json')",
    )
    await s.user("Fine.")
    await s.idle()


async def wrap_up(s: SessionReplay) -> None:
    """Turns 33-43: JSON export finishes; docs remain; the type error stays open."""
    await s.todos(
        ("Add the CSV export endpoint", "completed"),
        ("Add tests for the CSV export", "completed"),
        ("Add JSON export", "completed"),
        ("Update the export docs", "in_progress"),
    )
    await s.user("JSON export is done. Now update the export docs in docs/export.md.")
    await s.tool("read", {"filePath": "docs/export.md"}, "# Export\n")
    await s.edit("docs/export.md", "# Export", "# Export\n...")
    await s.user("Mention both endpoints and the ten-minute cache.")
    await s.user("Also mention that amounts keep their currency.")
    await s.edit("docs/export.md", "e", "f")
    await s.user("Commit this on the feature branch.")
    await s.tool(
        "bash",
        {"command": "git commit -am 'Add CSV and JSON export'"},
        "[feature/csv-export 1a2b3c4] Add CSV and JSON export",
    )
    await s.user("Open the pull request when the docs are reviewed.")
    await s.user("How many turns have we done? Never mind.")
    await s.user("ok")
    await s.idle()


CSV_SUMMARY = (
    "Summary: added GET /invoices/export.csv in app/routes/invoices.py; fixed currency "
    "formatting in app/money.py; tests pass. Cache uses SQLite. Next: more CSV tests, docs."
)
JSON_SUMMARY = (
    "Summary: the cache moved to Redis (app/cache.py, ten-minute expiry); JSON export in "
    "progress; mypy error in app/cache.py still open."
)
WRAP_SUMMARY = (
    "Summary: CSV and JSON export done and committed on feature/csv-export; docs/export.md "
    "being updated; mypy error in app/cache.py still open; PR after docs review."
)


async def compaction(
    s: SessionReplay, number: int, on_compaction: OnCompaction, summary: str
) -> None:
    """Compact, then make one model call to see the envelope the agent now gets."""
    context = await s.compact(summary)
    after = await s.user(f"Where were we? (after compaction {number})")
    await on_compaction(number, context, after)


__all__ = ["EXPECTED", "Expectation", "play"]
