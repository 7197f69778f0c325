"""Fake tools for the synthetic agent runs: argument shapes, results, errors, empties.

A :class:`Tool` draws plausible arguments and results from a run's random source. The
shapes differ on purpose (flat strings, nested objects, lists, numbers, booleans, null
and string results) so a detector cannot key on one layout.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._common import Message, Run
from ._words import (
    COMPANIES,
    FIRST_NAMES,
    LAST_NAMES,
    WORDS,
    date,
    file_path,
    hex_id,
    prose_sentence,
)

__all__ = ["DOMAINS", "TOOLS", "Domain", "Tool", "healthy_steps", "intent", "pick_tool"]

Args = dict[str, Any]


@dataclass(frozen=True)
class Tool:
    """A fake tool: how to draw arguments, a result, an error and an empty result."""

    name: str
    args: Callable[[Run], Args]
    ok: Callable[[Run, Args], Any]
    error: Callable[[Run, Args], Any]
    empty: Any = None
    intents: tuple[str, ...] = field(default=())


class _Fmt(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "it"


def intent(run: Run, tool: Tool, args: Args) -> str:
    """A reasoning sentence announcing a call of ``tool`` with ``args``."""
    flat = _Fmt(
        {
            k: (v if isinstance(v, str | int) else json.dumps(v, ensure_ascii=False))
            for k, v in args.items()
        }
    )
    template = run.choice(tool.intents) if tool.intents else "Let me call {name}."
    flat.setdefault("name", tool.name)
    return template.format_map(flat)


def _person(run: Run) -> str:
    return f"{run.choice(FIRST_NAMES)} {run.choice(LAST_NAMES)}"


def _email(run: Run) -> str:
    return f"{run.choice(FIRST_NAMES).lower()}.{run.choice(LAST_NAMES).lower()}@example.com"


def _lines(run: Run, n: int) -> str:
    names = [run.choice(WORDS) for _ in range(n)]
    return "\n".join(
        f"def {a}_{i}(x):\n    return x + {run.randint(1, 99)}" for i, a in enumerate(names)
    )


# --- code ------------------------------------------------------------------------------
def _read_args(run: Run) -> Args:
    return {"path": file_path(run)}


def _read_ok(run: Run, a: Args) -> Any:
    n = run.randint(1, 2)
    return {"path": a["path"], "content": _lines(run, n), "lines": 2 * n}


def _enoent(run: Run, a: Args) -> Any:
    key = "path" if "path" in a else next(iter(a))
    return {"error": f"ENOENT: no such file or directory, open '{a[key]}'"}


def _listdir_args(run: Run) -> Args:
    return {"path": file_path(run).rsplit("/", 1)[0], "recursive": run.chance(0.3)}


def _listdir_ok(run: Run, a: Args) -> Any:
    return {
        "entries": sorted(
            {
                f"{run.choice(WORDS)}.{run.choice(('py', 'ts', 'md'))}"
                for _ in range(run.randint(2, 6))
            }
        )
    }


def _grep_args(run: Run) -> Args:
    return {
        "pattern": f"{run.choice(WORDS)}_{run.choice(WORDS)}",
        "path": run.choice(("src", "lib", ".")),
        "ignore_case": run.chance(0.4),
    }


def _grep_ok(run: Run, a: Args) -> Any:
    return {
        "matches": [
            {"file": file_path(run), "line": run.randint(1, 400), "text": f"{a['pattern']}(ctx)"}
            for _ in range(run.randint(1, 3))
        ]
    }


def _tests_args(run: Run) -> Args:
    args: Args = {"path": f"tests/test_{run.choice(WORDS)}.py"}
    if run.chance(0.5):
        args["k"] = f"test_{run.choice(WORDS)}"
    return args


def _tests_ok(run: Run, a: Args) -> Any:
    passed = run.randint(3, 60)
    return {
        "passed": passed,
        "failed": 0,
        "output": f"{passed} passed in {run.randint(1, 30) / 10}s",
    }


def _tests_err(run: Run, a: Args) -> Any:
    w = run.choice(WORDS)
    return {
        "passed": run.randint(0, 20),
        "failed": run.randint(1, 4),
        "output": f"FAILED tests/test_{w}.py::test_{run.choice(WORDS)} - "
        f"AssertionError: assert {run.randint(1, 9)} == {run.randint(10, 99)}",
    }


def _patch_args(run: Run) -> Args:
    line = run.randint(5, 300)
    w = run.choice(WORDS)
    return {
        "file": file_path(run),
        "patch": f"@@ -{line},3 +{line},4 @@\n-    {w} = load()\n"
        f"+    {w} = load(strict=True)\n+    validate({w})",
    }


def _patch_ok(run: Run, a: Args) -> Any:
    return {"applied": True, "hunks": 1}


def _patch_err(run: Run, a: Args) -> Any:
    return {
        "applied": False,
        "error": f"hunk #1 FAILED at {run.randint(5, 300)}: context does not match",
    }


def _shell_args(run: Run) -> Args:
    cmd = run.choice(
        (
            "npm run build",
            "make test",
            "cargo check",
            "go vet ./...",
            "pytest -q",
            "python manage.py migrate",
            "docker compose ps",
            "git status --short",
            f"ls -la {run.choice(WORDS)}",
            f"cat config/{run.choice(WORDS)}.yaml",
        )
    )
    return {"command": cmd, "timeout": run.choice((30, 60, 120, 300))}


def _shell_ok(run: Run, a: Args) -> Any:
    return {
        "exit_code": 0,
        "stdout": f"{run.choice(WORDS)}: ok ({run.randint(1, 900)} ms)",
        "stderr": "",
    }


def _shell_err(run: Run, a: Args) -> Any:
    return run.choice(
        (
            {"exit_code": 127, "stdout": "", "stderr": "sh: 1: tsc: not found"},
            {"exit_code": 1, "stdout": "", "stderr": "Error: Cannot find module 'dotenv'"},
            {"exit_code": 2, "stdout": "", "stderr": "make: *** [Makefile:12: test] Error 2"},
            {"exit_code": 1, "stdout": "", "stderr": "permission denied: ./scripts/deploy.sh"},
        )
    )


# --- web -------------------------------------------------------------------------------
def _search_args(run: Run) -> Args:
    topic = run.choice(
        ("error", "best practice", "example", "docs", "timeout", "python", "typescript")
    )
    q = f"{run.choice(WORDS)} {run.choice(WORDS)} {topic}"
    args: Args = {"query": q}
    if run.chance(0.6):
        args["num_results"] = run.choice((5, 10, 20))
    return args


def _search_ok(run: Run, a: Args) -> Any:
    return {
        "results": [
            {
                "title": f"{run.choice(WORDS).title()} {run.choice(WORDS)} guide",
                "url": f"https://{run.choice(WORDS)}.example.org/{hex_id(run, 6)}",
                "snippet": prose_sentence(run),
            }
            for _ in range(run.randint(1, 2))
        ]
    }


def _fetch_args(run: Run) -> Args:
    return {
        "url": f"https://docs.{run.choice(WORDS)}.example.com/{run.choice(WORDS)}/{run.choice(WORDS)}"
    }


def _fetch_ok(run: Run, a: Args) -> Any:
    return {
        "status": 200,
        "title": f"{run.choice(WORDS).title()} reference",
        "text": prose_sentence(run),
    }


def _fetch_err(run: Run, a: Args) -> Any:
    return run.choice(
        (
            {"status": 403, "error": "Forbidden"},
            {"status": 404, "error": "Not Found"},
            {"status": 429, "error": "Too Many Requests", "retry_after": 30},
        )
    )


# --- crm / db --------------------------------------------------------------------------
def _sql_args(run: Run) -> Args:
    table = run.choice(("invoices", "customers", "orders", "payments", "subscriptions"))
    col = run.choice(("status", "region", "plan", "currency"))
    val = run.choice(("'open'", "'EU'", "'pro'", "'EUR'", "'overdue'"))
    return {
        "sql": f"SELECT id, {col}, total FROM {table} WHERE {col} = {val} "
        f"LIMIT {run.choice((10, 50, 100))}"
    }


def _sql_ok(run: Run, a: Args) -> Any:
    rows = [
        {"id": run.randint(1000, 9999), "total": round(run.rng.uniform(10, 5000), 2)}
        for _ in range(run.randint(1, 4))
    ]
    return {"rows": rows, "row_count": len(rows)}


def _sql_err(run: Run, a: Args) -> Any:
    return run.choice(
        (
            {"error": 'relation "invoice" does not exist', "code": "42P01"},
            {"error": 'syntax error at or near "LIMIT"', "code": "42601"},
            {"error": "permission denied for table payments", "code": "42501"},
        )
    )


def _customer_args(run: Run) -> Args:
    return {"customer_id": f"C-{run.randint(1000, 99999)}"}


def _customer_ok(run: Run, a: Args) -> Any:
    return {
        "id": a["customer_id"],
        "name": run.choice(COMPANIES),
        "contact": _person(run),
        "email": _email(run),
        "plan": run.choice(("free", "pro", "enterprise")),
    }


def _not_found(run: Run, a: Args) -> Any:
    return {"error": "not found", "code": 404}


def _invoices_args(run: Run) -> Args:
    return {"q": run.choice(COMPANIES), "status": run.choice(("open", "overdue", "paid", "draft"))}


def _invoices_ok(run: Run, a: Args) -> Any:
    return {
        "records": [
            {
                "number": f"INV-{run.randint(10000, 99999)}",
                "amount": run.randint(50, 9000),
                "due": date(run),
            }
            for _ in range(run.randint(1, 3))
        ]
    }


def _update_args(run: Run) -> Args:
    return {
        "table": run.choice(("contacts", "deals", "tickets")),
        "id": run.randint(1, 99999),
        "fields": {"owner": _person(run), "stage": run.choice(("new", "qualified", "won", "lost"))},
    }


def _update_ok(run: Run, a: Args) -> Any:
    return {"ok": True, "updated": 1}


def _update_err(run: Run, a: Args) -> Any:
    return {
        "ok": False,
        "error": f"validation failed: field 'stage' cannot be '{a['fields']['stage']}' "
        "for this record",
    }


# --- devops ----------------------------------------------------------------------------
def _kubectl_args(run: Run) -> Args:
    return {
        "resource": run.choice(("pods", "deployments", "services", "jobs")),
        "namespace": run.choice(("default", "prod", "staging", "batch")),
        "selector": f"app={run.choice(WORDS)}",
    }


def _kubectl_ok(run: Run, a: Args) -> Any:
    return {
        "items": [
            {
                "name": f"{a['selector'][4:]}-{hex_id(run, 5)}",
                "status": run.choice(("Running", "Running", "Pending", "CrashLoopBackOff")),
                "restarts": run.randint(0, 12),
            }
            for _ in range(run.randint(1, 3))
        ]
    }


def _kubectl_err(run: Run, a: Args) -> Any:
    return {
        "error": f'Error from server (Forbidden): {a["resource"]} is forbidden: User "agent" '
        f'cannot list resource "{a["resource"]}" in the namespace "{a["namespace"]}"'
    }


def _logs_args(run: Run) -> Args:
    return {
        "service": run.choice(WORDS),
        "since": run.choice(("5m", "10m", "1h", "24h")),
        "tail": run.choice((20, 50, 100)),
    }


def _logs_ok(run: Run, a: Args) -> Any:
    return {
        "lines": [
            f"{run.choice(('INFO', 'WARN', 'ERROR'))} {a['service']}: {prose_sentence(run)}"
            for _ in range(run.randint(1, 3))
        ]
    }


def _restart_args(run: Run) -> Args:
    return {
        "service": run.choice(WORDS),
        "environment": run.choice(("staging", "production", "dev")),
    }


def _restart_ok(run: Run, a: Args) -> Any:
    return {"restarted": True, "pid": run.randint(1000, 65000)}


def _restart_err(run: Run, a: Args) -> Any:
    return {"restarted": False, "error": f"service '{a['service']}' is locked by a running deploy"}


# --- mail / calendar -------------------------------------------------------------------
def _events_args(run: Run) -> Args:
    d = date(run)
    return {"calendar": run.choice(("primary", "team", "on-call")), "from": d, "to": d}


def _events_ok(run: Run, a: Args) -> Any:
    return {
        "events": [
            {
                "title": f"{run.choice(WORDS).title()} sync",
                "start": f"{a['from']}T{run.randint(8, 17):02d}:00",
                "attendees": run.randint(2, 9),
            }
            for _ in range(run.randint(1, 3))
        ]
    }


def _mail_args(run: Run) -> Args:
    return {
        "to": [_email(run)],
        "subject": f"{run.choice(WORDS).title()} update",
        "body": prose_sentence(run),
    }


def _mail_ok(run: Run, a: Args) -> Any:
    return {"message_id": f"<{hex_id(run, 12)}@mail.example.com>", "queued": True}


def _mail_err(run: Run, a: Args) -> Any:
    return {"queued": False, "error": "SMTP 550: mailbox unavailable"}


def _search_mail_args(run: Run) -> Args:
    return {
        "query": f"from:{run.choice(FIRST_NAMES).lower()} {run.choice(WORDS)}",
        "limit": run.choice((5, 10, 25)),
    }


def _search_mail_ok(run: Run, a: Args) -> Any:
    return {
        "messages": [
            {
                "id": hex_id(run, 10),
                "subject": f"Re: {run.choice(WORDS)} {run.choice(WORDS)}",
                "from": _email(run),
            }
            for _ in range(run.randint(1, 3))
        ]
    }


# --- travel ----------------------------------------------------------------------------
_AIRPORTS = (
    "BER",
    "LIS",
    "CDG",
    "AMS",
    "MAD",
    "FCO",
    "WAW",
    "HEL",
    "OSL",
    "VIE",
    "PRG",
    "DUB",
    "ATH",
    "ZRH",
)


def _flights_args(run: Run) -> Args:
    a, b = run.sample(_AIRPORTS, 2)
    return {"from": a, "to": b, "date": date(run), "passengers": run.randint(1, 4)}


def _flights_ok(run: Run, a: Args) -> Any:
    return {
        "flights": [
            {
                "carrier": run.choice(("LH", "TP", "AF", "KL", "IB")),
                "depart": f"{run.randint(6, 21):02d}:{run.choice(('05', '20', '35', '50'))}",
                "price_eur": run.randint(49, 640),
            }
            for _ in range(run.randint(1, 3))
        ]
    }


def _weather_args(run: Run) -> Args:
    return {
        "city": run.choice(
            ("Berlin", "Lisbon", "Paris", "Oslo", "Vienna", "Prague", "Dublin", "Athens")
        ),
        "units": run.choice(("metric", "imperial")),
    }


def _weather_ok(run: Run, a: Args) -> Any:
    return {
        "temp": run.randint(-5, 33),
        "conditions": run.choice(("clear", "cloudy", "rain", "snow", "fog")),
        "wind_kmh": run.randint(0, 60),
    }


def _service_down(run: Run, a: Args) -> Any:
    return {"error": "upstream timeout after 30s", "retryable": True}


# --- issues ----------------------------------------------------------------------------
def _issues_args(run: Run) -> Args:
    return {
        "repo": f"{run.choice(WORDS)}-org/{run.choice(WORDS)}",
        "query": f"is:open label:{run.choice(('bug', 'p1', 'regression', 'docs'))} "
        f"{run.choice(WORDS)}",
        "per_page": run.choice((10, 20, 50)),
    }


def _issues_ok(run: Run, a: Args) -> Any:
    items = [
        {"number": run.randint(10, 4000), "title": prose_sentence(run)[:60]}
        for _ in range(run.randint(1, 3))
    ]
    return {"total": len(items), "items": items}


def _issue_args(run: Run) -> Args:
    return {"repo": f"{run.choice(WORDS)}-org/{run.choice(WORDS)}", "number": run.randint(10, 4000)}


def _issue_ok(run: Run, a: Args) -> Any:
    return {
        "number": a["number"],
        "state": run.choice(("open", "closed")),
        "title": prose_sentence(run)[:70],
        "comments": run.randint(0, 40),
    }


def _comment_args(run: Run) -> Args:
    return {
        "repo": f"{run.choice(WORDS)}-org/{run.choice(WORDS)}",
        "number": run.randint(10, 4000),
        "body": prose_sentence(run),
    }


def _comment_ok(run: Run, a: Args) -> Any:
    return {"id": run.randint(100000, 999999), "created": True}


# --- data ------------------------------------------------------------------------------
def _csv_args(run: Run) -> Args:
    return {
        "path": f"data/{run.choice(WORDS)}_{run.randint(2019, 2024)}.csv",
        "delimiter": run.choice((",", ";", "\t")),
    }


def _csv_ok(run: Run, a: Args) -> Any:
    return {
        "rows": run.randint(100, 90000),
        "columns": run.sample(
            ("date", "region", "amount", "sku", "customer", "units", "channel"), 4
        ),
    }


def _describe_args(run: Run) -> Args:
    return {
        "table": run.choice(WORDS),
        "column": run.choice(("amount", "units", "price", "latency_ms")),
    }


def _describe_ok(run: Run, a: Args) -> Any:
    lo = run.randint(0, 50)
    return {
        "count": run.randint(100, 90000),
        "min": lo,
        "max": lo + run.randint(100, 5000),
        "mean": round(run.rng.uniform(lo + 10, lo + 90), 3),
    }


def _bad_column(run: Run, a: Args) -> Any:
    return {"error": f"KeyError: '{a.get('column', 'value')}'"}


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool(
            "read_file",
            _read_args,
            _read_ok,
            _enoent,
            None,
            (
                "Let me open {path} and see how it is set up.",
                "I should read {path} first.",
                "The answer is probably in {path}; reading it.",
                "Checking the contents of {path}.",
            ),
        ),
        Tool(
            "list_dir",
            _listdir_args,
            _listdir_ok,
            _enoent,
            {"entries": []},
            ("Let me list {path} to see what is there.", "What files live under {path}?"),
        ),
        Tool(
            "grep",
            _grep_args,
            _grep_ok,
            _enoent,
            {"matches": []},
            ("Searching the code for {pattern}.", "Let me find where {pattern} is used."),
        ),
        Tool(
            "run_tests",
            _tests_args,
            _tests_ok,
            _tests_err,
            None,
            (
                "Let me run {path} to check the change.",
                "Running the tests in {path}.",
                "I will verify with {path}.",
            ),
        ),
        Tool(
            "apply_patch",
            _patch_args,
            _patch_ok,
            _patch_err,
            None,
            (
                "Let me patch {file}.",
                "I'll apply the fix to {file}.",
                "Editing {file} to add validation.",
            ),
        ),
        Tool(
            "run_shell",
            _shell_args,
            _shell_ok,
            _shell_err,
            None,
            (
                "Let me run `{command}`.",
                "I'll execute `{command}` to see the state.",
                "Running `{command}`.",
            ),
        ),
        Tool(
            "web_search",
            _search_args,
            _search_ok,
            _fetch_err,
            {"results": []},
            ("Let me search the web for {query}.", "Searching for '{query}'."),
        ),
        Tool(
            "fetch_url",
            _fetch_args,
            _fetch_ok,
            _fetch_err,
            None,
            ("Let me open {url}.", "Fetching {url} for details."),
        ),
        Tool(
            "sql_query",
            _sql_args,
            _sql_ok,
            _sql_err,
            {"rows": [], "row_count": 0},
            ("Let me query the database.", "I'll run: {sql}", "A quick SQL query should tell me."),
        ),
        Tool(
            "get_customer",
            _customer_args,
            _customer_ok,
            _not_found,
            None,
            ("Let me look up customer {customer_id}.", "Fetching the record of {customer_id}."),
        ),
        Tool(
            "search_invoices",
            _invoices_args,
            _invoices_ok,
            _service_down,
            {"records": []},
            ("Let me search {status} invoices for {q}.", "Looking for {status} invoices of {q}."),
        ),
        Tool(
            "update_record",
            _update_args,
            _update_ok,
            _update_err,
            None,
            ("Updating record {id} in {table}.", "Let me save the change to {table}."),
        ),
        Tool(
            "kubectl_get",
            _kubectl_args,
            _kubectl_ok,
            _kubectl_err,
            {"items": []},
            ("Let me list the {resource} in {namespace}.", "Checking {resource} with {selector}."),
        ),
        Tool(
            "get_logs",
            _logs_args,
            _logs_ok,
            _service_down,
            {"lines": []},
            ("Let me read the logs of {service}.", "The {service} logs should show the cause."),
        ),
        Tool(
            "restart_service",
            _restart_args,
            _restart_ok,
            _restart_err,
            None,
            ("Restarting {service} in {environment}.", "Let me restart {service}."),
        ),
        Tool(
            "list_events",
            _events_args,
            _events_ok,
            _service_down,
            {"events": []},
            ("Let me check the {calendar} calendar for {from}.", "What is on {from}?"),
        ),
        Tool(
            "send_email",
            _mail_args,
            _mail_ok,
            _mail_err,
            None,
            ("Sending the update by email.", "Let me email {to}."),
        ),
        Tool(
            "search_mail",
            _search_mail_args,
            _search_mail_ok,
            _service_down,
            {"messages": []},
            ("Searching the mailbox for {query}.", "Let me find mails matching {query}."),
        ),
        Tool(
            "search_flights",
            _flights_args,
            _flights_ok,
            _service_down,
            {"flights": []},
            (
                "Let me search flights from {from} to {to} on {date}.",
                "Looking up flights {from}-{to}.",
            ),
        ),
        Tool(
            "get_weather",
            _weather_args,
            _weather_ok,
            _service_down,
            None,
            ("Let me check the weather in {city}.", "What is the weather in {city}?"),
        ),
        Tool(
            "search_issues",
            _issues_args,
            _issues_ok,
            _service_down,
            {"total": 0, "items": []},
            ("Let me search {repo} for {query}.", "Searching issues in {repo}."),
        ),
        Tool(
            "get_issue",
            _issue_args,
            _issue_ok,
            _not_found,
            None,
            ("Let me open issue {number} in {repo}.", "Reading {repo}#{number}."),
        ),
        Tool(
            "add_comment",
            _comment_args,
            _comment_ok,
            _not_found,
            None,
            ("Let me leave a comment on {repo}#{number}.", "Posting a comment on #{number}."),
        ),
        Tool(
            "load_csv",
            _csv_args,
            _csv_ok,
            _enoent,
            None,
            ("Let me load {path}.", "Loading {path} to look at the columns."),
        ),
        Tool(
            "describe_column",
            _describe_args,
            _describe_ok,
            _bad_column,
            None,
            ("Let me describe {column} in {table}.", "Summary statistics of {column}, please."),
        ),
    )
}


@dataclass(frozen=True)
class Domain:
    """A kind of task: what the user asks and which tools the agent uses for it."""

    name: str
    tasks: tuple[str, ...]
    tools: tuple[str, ...]


DOMAINS: tuple[Domain, ...] = (
    Domain(
        "code",
        (
            "The {w} tests fail since yesterday's merge. Can you find out why and fix it?",
            "Please add input validation to the {w} module and make sure the tests pass.",
            "Our CI build is red on main. Investigate and fix it, please.",
            "Refactor the {w} loader so it reads the new config format.",
            "Find where {w} tokens are parsed and add a check for expired ones.",
        ),
        ("read_file", "list_dir", "grep", "run_tests", "apply_patch", "run_shell"),
    ),
    Domain(
        "web",
        (
            "Find the official docs for configuring {w} timeouts and summarise them.",
            "What is the recommended way to handle {w} retries? Give me sources.",
            "Research how other projects structure their {w} module and report back.",
        ),
        ("web_search", "fetch_url"),
    ),
    Domain(
        "crm",
        (
            "Find the open invoices for {c} and tell me the total.",
            "Which customers on the pro plan have overdue payments?",
            "Update the owner of the {c} deal to {p} and confirm.",
            "Pull the last orders of {c} and check whether any are unpaid.",
        ),
        ("sql_query", "get_customer", "search_invoices", "update_record"),
    ),
    Domain(
        "devops",
        (
            "The {w} service keeps restarting in production. What is going on?",
            "Check why the {w} pods are pending in staging and fix it if you can.",
            "Roll out the new {w} build to staging and verify it is healthy.",
        ),
        ("kubectl_get", "get_logs", "restart_service", "run_shell"),
    ),
    Domain(
        "mail",
        (
            "Find a free slot next week for a meeting with {p} and send an invite.",
            "Summarise the mails from {p} about the {w} project.",
            "Email the team that the {w} release moves to Friday.",
        ),
        ("list_events", "send_email", "search_mail"),
    ),
    Domain(
        "travel",
        (
            "Find me a cheap flight to Lisbon in May and check the weather there.",
            "I need to be in Vienna on the 12th. What are my flight options?",
            "Compare flights from Berlin to Oslo and Helsinki for two people.",
        ),
        ("search_flights", "get_weather"),
    ),
    Domain(
        "issues",
        (
            "Triage the open {w} bugs and comment on the duplicates.",
            "Is there already an issue about the {w} crash? Link it if so.",
            "Summarise the regression reports for the {w} module.",
        ),
        ("search_issues", "get_issue", "add_comment"),
    ),
    Domain(
        "data",
        (
            "Load the {w} sales data and tell me which region grew fastest.",
            "Check the {w} dataset for outliers in the amount column.",
            "Give me summary statistics of the {w} export.",
        ),
        ("load_csv", "describe_column", "sql_query"),
    ),
)


def pick_tool(run: Run, domain: Domain, exclude: tuple[str, ...] = ()) -> Tool:
    """A tool of ``domain`` (not one of ``exclude`` when another is available)."""
    names = [n for n in domain.tools if n not in exclude] or list(domain.tools)
    return TOOLS[run.choice(names)]


def task_text(run: Run, domain: Domain) -> str:
    """A user request of ``domain`` with its blanks filled in."""
    return run.choice(domain.tasks).format(
        w=run.choice(WORDS), c=run.choice(COMPANIES), p=_person(run)
    )


def signature(name: str, args: Any) -> str:
    """Canonical identity of a call (name + sorted JSON of the arguments)."""
    return name + ":" + json.dumps(args, sort_keys=True, ensure_ascii=False)


def fresh_args(run: Run, tool: Tool, used: set[str]) -> Args:
    """Arguments for ``tool`` whose call signature is not yet in ``used`` (then added)."""
    for _ in range(40):
        args = tool.args(run)
        sig = signature(tool.name, args)
        if sig not in used:
            used.add(sig)
            return args
    args = tool.args(run)
    args["_attempt"] = len(used)
    used.add(signature(tool.name, args))
    return args


def healthy_steps(
    run: Run,
    domain: Domain,
    n: int,
    used: set[str],
    *,
    reasoning_p: float = 0.6,
    narration_p: float = 0.2,
    error_p: float = 0.08,
) -> list[Message]:
    """``n`` steps of a run making progress: distinct calls, distinct results.

    Each step is an optional reasoning message, a request, its response and an
    optional narration. A few steps fail once (with distinct arguments), as real runs do.
    """
    out: list[Message] = []
    last_name = ""
    for _ in range(n):
        tool = pick_tool(run, domain, (last_name,))
        last_name = tool.name
        args = fresh_args(run, tool, used)
        if run.chance(reasoning_p):
            text = intent(run, tool, args)
            if run.chance(0.4):
                text += " " + prose_sentence(run)
            out.append(run.reasoning(text))
        result = tool.error(run, args) if run.chance(error_p) else tool.ok(run, args)
        out.extend(run.call(tool.name, args, result))
        if run.chance(narration_p):
            text = run.choice(_NARRATION).format(name=tool.name, s=prose_sentence(run))
            while "say:" + text in used:  # healthy runs never say the same thing twice
                text = f"{text} {prose_sentence(run)}"
            used.add("say:" + text)
            out.append(run.bot(text))
    return out


_NARRATION = (
    "Done with {name}. {s}",
    "The {name} call worked. Next step.",
    "Got it. {s}",
    "{s} Moving on.",
    "Okay, {name} gave me what I needed.",
    "That confirms it. {s}",
)
