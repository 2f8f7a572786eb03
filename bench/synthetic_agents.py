"""Synthetic agent runs: a seeded generator of healthy and stuck traces, replayed and scored.

For each kind of agent it writes ``--runs`` healthy runs and 12 stuck twins as
trace files (the JSONL format of ``heartbeat replay``: one line per heartbeat,
``--per-heartbeat`` actions each, the progress metric measured after the
heartbeat's last action where the kind has one), replays every file through
heartbeat's own replay (``heartbeat.replay.folder.summarize_trace``, what
``heartbeat replay DIR`` runs) with the default configuration, and prints one
row per kind: healthy runs flagged (any anomaly) and escalated, stuck runs
flagged (an anomaly at or after the stuck stretch began) and escalated; then
every flagged healthy run by file name with its anomalies, and every stuck
run never flagged.

    python bench/synthetic_agents.py [--seed N] [--runs 30] [--per-heartbeat 5] [--out DIR] [--kind NAME]

The runs are written to look like what real agents do (tool names, arguments
and outputs as in the runs of ``../shared/corpus``: tau-bench, SWE-agent,
mini-swe-agent, ReAct), not to pass or fail today's detectors: a healthy run
that is flagged is a finding. Each run draws from its own random generator
(seeded by the seed, the kind, the label and the run's number), so a run is
the same whatever ``--runs`` and ``--per-heartbeat`` are, and two runs of the
command with one seed write the same bytes. A stuck twin starts like the
healthy runs of its kind and turns stuck at its onset (the trace's first line
carries it as the annotation ``_onset``, an action number counted from 1
across the trace, as the replay counts them).

Only the standard library and heartbeat are used.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # the tree's own heartbeat, not another install
    sys.path.insert(0, str(REPO))

from heartbeat.config.file import HeartbeatConfig  # noqa: E402
from heartbeat.replay.folder import TraceSummary, summarize_trace  # noqa: E402

STUCK_TWINS = 12
"""Stuck twins per kind, whatever ``--runs`` says."""

DEFAULT_SEED = 20240611


# --------------------------------------------------------------------------------------------
# A run as it happens


@dataclass
class Action:
    """One tool call of a run."""

    tool: str
    args: dict[str, Any]
    output: str
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": self.args, "output": self.output, "error": self.error}


class Tape:
    """The actions of one run in order, with the progress metric after each (None: the kind has none)."""

    def __init__(self, rng: random.Random, *, metric: bool) -> None:
        self.rng = rng
        self.actions: list[Action] = []
        self.values: list[float] | None = [] if metric else None
        self.value = 0.0
        self.onset: int | None = None

    def __len__(self) -> int:
        return len(self.actions)

    def add(
        self, tool: str, args: dict[str, Any], output: str = "", error: str | None = None, *, gain: float = 0
    ) -> None:
        """Record one call; ``gain`` is what it added to the metric."""
        self.value += gain
        self.actions.append(Action(tool, args, output, error))
        if self.values is not None:
            self.values.append(self.value)

    def stuck_from_here(self) -> None:
        """The next action is the first of the stuck stretch."""
        if self.onset is None:
            self.onset = len(self.actions) + 1


@dataclass(frozen=True)
class Kind:
    """A kind of agent: how to write one run of it, healthy or as a stuck twin."""

    name: str
    about: str
    metric: str | None
    build: Callable[[Tape, str | None], None]
    """Writes one run onto the tape: healthy when the pattern is None, else that stuck twin."""
    stuck: tuple[str, ...]
    """The stuck patterns; the twins take them in turn."""
    single: bool = False
    """One action a heartbeat, whatever ``--per-heartbeat`` says."""


@dataclass
class Run:
    kind: Kind
    name: str
    pattern: str
    tape: Tape

    @property
    def healthy(self) -> bool:
        return self.pattern == "healthy"

    def lines(self, per_heartbeat: int) -> Iterator[dict[str, Any]]:
        """The trace's lines: ``per_heartbeat`` actions each, progress measured after the last."""
        per = 1 if self.kind.single else per_heartbeat
        actions, values = self.tape.actions, self.tape.values
        for start in range(0, len(actions), per):
            chunk = actions[start : start + per]
            line: dict[str, Any] = {}
            if start == 0:
                line.update(_run=self.name, _kind=self.kind.name, _pattern=self.pattern)
                if self.tape.onset is not None:
                    line["_onset"] = self.tape.onset
            line["progress"] = None if values is None else values[start + len(chunk) - 1]
            line["actions"] = [a.to_json() for a in chunk]
            yield line


def generate(kind: Kind, seed: int, pattern: str, index: int) -> Run:
    """One run of ``kind``: ``pattern`` is "healthy" or one of the kind's stuck patterns."""
    rng = random.Random(f"{seed}/{kind.name}/{pattern}/{index}")
    tape = Tape(rng, metric=kind.metric is not None)
    kind.build(tape, None if pattern == "healthy" else pattern)
    if (pattern == "healthy") != (tape.onset is None):
        raise AssertionError(f"{kind.name} {pattern} {index}: a stuck twin has an onset, a healthy run none")
    label = "healthy" if pattern == "healthy" else f"stuck_{pattern}"
    return Run(kind, f"{kind.name}__{label}_{index:02d}", pattern, tape)


# --------------------------------------------------------------------------------------------
# Words


FIRST = [
    "Liam", "Olivia", "Noah", "Emma", "Mei", "Aarav", "Fatima", "Yusuf", "Sofia", "Mason", "Chen",
    "Amelia", "Ivan", "Lucas", "Nia", "Omar", "Priya", "Mateo", "Yara", "Ethan", "Harper", "Raj",
    "Lena", "Daiki", "Chloe", "Anya", "Kofi", "Isabella",
]  # fmt: skip
LAST = [
    "Khan", "Lee", "Silva", "Rossi", "Garcia", "Ito", "Kim", "Lopez", "Nguyen", "Patel", "Brown",
    "Moore", "Novak", "Sato", "Hernandez", "Davis", "Wilson", "Ahmed", "Johansson", "Okafor", "Muller",
    "Dubois", "Kowalski", "Santos",
]  # fmt: skip
CITIES = [
    "Lyon", "Rotterdam", "Austin", "Pune", "Gdansk", "Monterrey", "Osaka", "Leeds", "Porto", "Tallinn",
    "Graz", "Cebu", "Denver", "Bristol", "Aarhus", "Valencia",
]  # fmt: skip
_SUBJECTS = [
    "Revenue", "Operating margin", "Headcount", "Capital expenditure", "Customer churn", "Energy use",
    "Median response time", "Water consumption", "Net debt", "Order volume", "Warranty claims",
    "Gross margin", "Inventory turnover", "Scope 2 emissions", "Average basket size", "Support backlog",
    "Freight cost", "Recurring revenue", "Staff turnover", "Days sales outstanding",
]  # fmt: skip
_REGIONS = [
    "EMEA", "North America", "the Nordics", "Southeast Asia", "Latin America", "the DACH region",
    "Japan", "the UK", "Australia", "Central Europe", "the Benelux", "India",
]  # fmt: skip
_CHANGES = ["rose", "fell", "grew", "declined", "increased", "decreased", "recovered", "slipped"]
_REASONS = [
    "driven by the new pricing model",
    "after the plant in {city} came online",
    "reflecting lower input costs",
    "as the migration to the new platform completed",
    "owing to a one-off write-down",
    "in line with guidance",
    "despite supply constraints in the second half",
    "following the restructuring announced in March",
    "as demand for the premium tier weakened",
    "helped by currency effects",
    "after two large contracts in {city} were renewed",
    "as the {city} warehouse was consolidated",
]
_PERIODS = ["Q1", "Q2", "Q3", "Q4", "the first half", "the second half", "the fiscal year"]
_HEADINGS = [
    "Regional performance", "Outlook", "Risk factors", "Segment results", "Liquidity and capital",
    "Sustainability", "Operations review", "Governance", "Workforce", "Product portfolio",
    "Supply chain", "Market conditions", "Research and development", "Notes to the accounts",
]  # fmt: skip


def person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(FIRST), rng.choice(LAST)


def report_sentence(rng: random.Random) -> str:
    reason = rng.choice(_REASONS).format(city=rng.choice(CITIES))
    amount = f"{rng.randint(2, 980)}.{rng.randint(0, 9)} million"
    return (
        f"{rng.choice(_SUBJECTS)} in {rng.choice(_REGIONS)} {rng.choice(_CHANGES)} "
        f"{rng.randint(1, 38)}.{rng.randint(0, 9)}% to {amount} in {rng.choice(_PERIODS)}, {reason}."
    )


def hexid(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def code(rng: random.Random, n: int, alphabet: str = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def dumps(value: Any) -> str:
    """JSON as tool-calling harnesses print it (tau-bench: ``json.dumps`` with its default spacing)."""
    return json.dumps(value)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------
# Pager: reads a long document page after page, notes now and then. Metric: pages read.

_DOCUMENTS = [
    ("annual-report-2023", "Annual Report 2023"),
    ("sre-review-q3", "Site Reliability Review Q3"),
    ("csp-2291", "Clinical Study Protocol CSP-2291"),
    ("eia-harbour-ext", "Environmental Impact Assessment: Harbour Extension"),
    ("budget-fy2025", "Municipal Budget FY2025"),
    ("vendor-audit-2024", "Vendor Security Audit 2024"),
]


def _page(rng: random.Random, number: int, total: int) -> str:
    heading = f"{rng.randint(1, 12)}.{rng.randint(1, 9)} {rng.choice(_HEADINGS)}"
    body = " ".join(report_sentence(rng) for _ in range(rng.randint(3, 5)))
    following = f"next_cursor: {number + 1}" if number < total else "next_cursor: null (end of document)"
    return f"[page {number}/{total}]\n{heading}\n{body}\n{following}"


def pager(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    doc_id, title = rng.choice(_DOCUMENTS)
    total = rng.randint(45, 90)
    t.add("open_document", {"doc_id": doc_id}, dumps({"doc_id": doc_id, "title": title, "pages": total}))
    length = rng.randint(15, 60)
    prefix = rng.randint(6, 16)
    pages: dict[int, str] = {}
    cursor, since_notes, notes_every = 1, 0, rng.randint(3, 6)

    def read(number: int) -> None:
        first = number not in pages
        if first:
            pages[number] = _page(rng, number, total)
        t.add("read_page", {"cursor": number}, pages[number], gain=1 if first else 0)

    def notes(text: str) -> None:
        t.add("append_notes", {"doc_id": doc_id, "text": text}, "ok")

    while len(t) < (prefix if stuck else length) and cursor <= total:
        read(cursor)
        cursor += 1
        since_notes += 1
        if since_notes >= notes_every:
            notes(f"p{cursor - since_notes}-{cursor - 1}: {report_sentence(rng)}")
            since_notes, notes_every = 0, rng.randint(3, 6)
    if stuck is None:
        notes(f"Read pages 1-{cursor - 1} of {total}; summary drafted.")
        return
    t.stuck_from_here()
    stretch = rng.randint(20, 40)
    last = cursor - 1
    if stuck == "back_and_forth":  # re-reading pages already seen, never a new one
        at = last
        for _ in range(stretch):
            at = min(last, max(max(1, last - 5), at + rng.choice([-2, -1, 1, 2])))
            if rng.random() < 0.15:
                notes(f"Re-checking the figures on page {at} against page {at - 1 if at > 1 else at + 1}.")
            read(at)
    else:  # flat_identical: the service ignores the cursor and answers the last page again
        for _ in range(stretch):
            t.add("read_page", {"cursor": cursor}, pages[last])
            cursor += 1
            if rng.random() < 0.15:
                notes(f"p{cursor - 1}: {report_sentence(rng)}")


# --------------------------------------------------------------------------------------------
# Crawler: fetches numbered URLs and stores each page; the odd 503 retried. Metric: pages stored.

_SITES = [
    ("https://docs.acme-cloud.io/kb/articles/{n}", "kb", "KB"),
    ("https://forum.opentrail.org/t/{n}", "forum", "Thread"),
    ("https://records.riverton.gov/permits/{n}", "permit", "Permit"),
    ("https://www.shopnorth.com/p/{n}", "product", "Product"),
]
_KB_TASKS = [
    "rotate the API keys of a service account", "restore a deleted bucket", "enable audit logging",
    "move a project to another billing account", "set up SSO with Okta", "raise a quota",
    "configure a private endpoint", "export usage reports", "reset two-factor authentication",
    "schedule database snapshots", "pin a runtime version", "migrate to the v3 API",
]  # fmt: skip
_FORUM_TOPICS = [
    "Trail conditions on the north ridge", "Best boots for wet scree", "Permit lottery results",
    "Lost GPS unit near the lake", "Winter route via the saddle", "Bear canister rules changed?",
    "Shuttle times from the trailhead", "Campsite 14 closed for repairs",
]  # fmt: skip
_PRODUCTS = [
    "insulated water bottle", "trail running shoe", "down jacket", "camp stove", "trekking pole",
    "headlamp", "merino base layer", "dry bag", "sleeping pad", "rain shell",
]  # fmt: skip


def _site_page(rng: random.Random, kind: str, n: int, host: str) -> tuple[str, str]:
    if kind == "kb":
        title = f"How to {rng.choice(_KB_TASKS)} (KB-{n})"
        body = (
            f"Applies to: {rng.choice(['Standard', 'Business', 'Enterprise'])} plans. "
            f"Open the console, select {rng.choice(['IAM', 'Storage', 'Billing', 'Networking'])} and "
            f"choose {rng.choice(['Settings', 'Policies', 'Keys', 'Endpoints'])}. "
            f"Changes take effect within {rng.randint(1, 30)} minutes. Last updated {rng.randint(1, 28)} "
            f"{rng.choice(['Jan', 'Mar', 'May', 'Aug', 'Oct'])} 2024."
        )
    elif kind == "forum":
        title = f"{rng.choice(_FORUM_TOPICS)} - OpenTrail Forum"
        who = person(rng)
        body = (
            f"{who[0]}{rng.randint(1, 99)} wrote: {report_sentence(rng)} "
            f"{rng.randint(1, 40)} replies, {rng.randint(10, 3000)} views."
        )
    elif kind == "permit":
        title = f"Permit {n}: {rng.choice(['Demolition', 'New build', 'Extension', 'Change of use'])}"
        body = (
            f"Applicant: {' '.join(person(rng))}. Site: {rng.randint(1, 400)} "
            f"{rng.choice(['Mill Road', 'Harbour St', 'Elm Ave', 'Station Rd'])}. "
            f"Status: {rng.choice(['granted', 'refused', 'pending', 'withdrawn'])}. "
            f"Decision date: 2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}."
        )
    else:
        title = f"{rng.choice(['Alpine', 'Ridge', 'Summit', 'Trail'])} {rng.choice(_PRODUCTS)} {n}"
        body = (
            f"Price: ${rng.randint(9, 420)}.{rng.choice(['00', '49', '95', '99'])}. "
            f"Rating {rng.randint(30, 50) / 10} ({rng.randint(3, 900)} reviews). "
            f"In stock: {rng.choice(['yes', 'no', 'ships in 2 weeks'])}."
        )
    page = (
        f"HTTP 200 OK\ncontent-type: text/html; charset=utf-8\n\n<title>{title}</title>\n"
        f'{body}\n<a href="https://{host}/">Home</a>'
    )
    return title, page


def crawler(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    pattern, kind, _ = rng.choice(_SITES)
    host = pattern.split("/")[2]
    n = rng.randint(1000, 90000)
    length = rng.randint(15, 60)
    prefix = rng.randint(8, 20)
    while len(t) < (prefix if stuck else length):
        url = pattern.format(n=n)
        roll = rng.random()
        if roll < 0.12:  # a transient 503, retried once or twice
            for _ in range(1 if rng.random() < 0.7 else 2):
                t.add(
                    "fetch_url",
                    {"url": url},
                    "503 Service Unavailable\nRetry-After: 5\nupstream connect error or disconnect/reset "
                    "before headers. reset reason: overflow",
                    "HTTP 503",
                )
        elif roll < 0.15:  # a deleted page
            t.add("fetch_url", {"url": url}, "404 Not Found", "HTTP 404")
            n += 1
            continue
        title, page = _site_page(rng, kind, n, host)
        t.add("fetch_url", {"url": url}, page)
        t.add(
            "store_document",
            {"id": f"{kind}-{n}", "url": url, "title": title},
            f"stored {kind}-{n} ({rng.randint(2000, 60000):,} bytes)",
            gain=1,
        )
        n += 1
    if stuck is None:
        return
    t.stuck_from_here()
    ray = hexid(rng, 16)
    challenge = (
        "HTTP 200 OK\ncontent-type: text/html; charset=UTF-8\n\n<title>Just a moment...</title>\n"
        f"Checking if the site connection is secure. {host} needs to review the security of your "
        f"connection before proceeding.\nRay ID: {ray}"
    )
    for _ in range(rng.randint(20, 40)):  # flat_identical: every page is the same bot challenge
        t.add("fetch_url", {"url": pattern.format(n=n)}, challenge)
        n += 1


# --------------------------------------------------------------------------------------------
# Feed reader: polls since=<timestamp>, new items each time, marks them read. Metric: items ingested.

_FEEDS = [
    ("https://status.nimbus-cloud.com/history.atom", "status"),
    ("https://blog.tidewater.dev/feed.xml", "blog"),
    ("https://news.harborline.org/rss/world", "news"),
    ("https://github.com/pallas-labs/pallas/releases.atom", "releases"),
]
_STATUS = ["Elevated error rates", "Degraded performance", "Scheduled maintenance", "Resolved: latency"]
_SERVICES = ["Object Storage", "DNS", "Compute API", "Load Balancers", "Managed Postgres", "CDN"]
_BLOG = ["Profiling async Python", "Why we moved off cron", "Zero-downtime migrations", "Tuning GC pauses"]
_NEWS = ["Flooding closes ports", "Central bank holds rates", "Election results contested", "Heatwave"]


def _item_title(rng: random.Random, kind: str, number: int) -> str:
    if kind == "status":
        return f"{rng.choice(_STATUS)} - {rng.choice(_SERVICES)} ({rng.choice(['eu-west-1', 'us-east-2'])})"
    if kind == "blog":
        return f"{rng.choice(_BLOG)}, part {rng.randint(1, 5)}"
    if kind == "news":
        return f"{rng.choice(_NEWS)} in {rng.choice(CITIES)}"
    return f"pallas v2.{number // 10}.{number % 10}"


def feed(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    url, kind = rng.choice(_FEEDS)
    clock = datetime(2024, 6, 11, 6, 0, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 600))
    since = clock
    number = rng.randint(100, 900)
    length = rng.randint(15, 60)
    prefix = rng.randint(6, 15)
    batch: list[dict[str, Any]] = []
    while len(t) < (prefix if stuck else length):
        batch = []
        for _ in range(rng.randint(1, 6)):
            clock += timedelta(minutes=rng.randint(3, 40), seconds=rng.randint(0, 59))
            number += 1
            batch.append(
                {
                    "id": f"tag:{url.split('/')[2]},2024:entry-{number}",
                    "title": _item_title(rng, kind, number),
                    "published": stamp(clock),
                }
            )
        t.add("fetch_feed", {"url": url, "since": stamp(since)}, dumps(batch), gain=len(batch))
        if rng.random() < 0.5:
            t.add(
                "post_digest",
                {"channel": "#feeds", "text": "; ".join(item["title"] for item in batch)},
                f"posted to #feeds ({len(batch)} items)",
            )
        t.add("mark_all_read", {"url": url}, "ok")
        since = clock
    if stuck is None:
        return
    t.stuck_from_here()
    for _ in range(rng.randint(10, 20)):  # flat_identical: a stale cache answers the last batch again
        clock += timedelta(minutes=rng.randint(20, 40))
        t.add("fetch_feed", {"url": url, "since": stamp(clock)}, dumps(batch))
        t.add("mark_all_read", {"url": url}, "ok")


# --------------------------------------------------------------------------------------------
# Queue worker: claims tickets, answers, closes them by id. Metric: tickets closed.

_TICKETS = [
    ("Refund not received", "I returned the order on {d} and still have no refund."),
    ("Cannot log in", "Password reset mail never arrives, tried {n} times."),
    ("Wrong item shipped", "Ordered size M, got XL. Order {o}."),
    ("Invoice address wrong", "Please change the company name on invoice {o}."),
    ("Cancel subscription", "Please cancel my plan before the renewal on {d}."),
    ("Double charge", "Card charged twice for order {o}."),
    ("Delivery late", "Tracking has not moved since {d}."),
    ("Export data", "Need a CSV of all our records for the audit."),
]
_RESOLUTIONS = [
    "refund issued",
    "password reset link resent",
    "replacement shipped",
    "invoice reissued",
    "subscription cancelled",
    "duplicate charge reversed",
    "carrier claim opened",
    "export sent",
]


def _ticket(rng: random.Random, number: int, queue: str) -> tuple[int, dict[str, Any]]:
    index = rng.randrange(len(_TICKETS))
    subject, body = _TICKETS[index]
    first, last = person(rng)
    return index, {
        "id": f"TCK-{number}",
        "queue": queue,
        "subject": subject,
        "customer_id": f"cus_{code(rng, 8, 'abcdefghijklmnopqrstuvwxyz0123456789')}",
        "from": f"{first.lower()}.{last.lower()}@example.com",
        "body": body.format(
            d=f"2024-05-{rng.randint(1, 28):02d}", n=rng.randint(2, 6), o=f"#{rng.randint(100000, 999999)}"
        ),
        "created_at": f"2024-06-{rng.randint(1, 10):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}Z",
    }


def queue_worker(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    queue = rng.choice(["billing", "support-l1", "returns", "accounts"])
    number = rng.randint(10000, 90000)
    length = rng.randint(15, 60)
    prefix = rng.randint(8, 20)
    ticket: dict[str, Any] = {}
    index = 0

    def work(ticket: dict[str, Any], index: int, gain: int) -> None:
        if rng.random() < 0.5:
            t.add(
                "lookup_account",
                {"customer_id": ticket["customer_id"]},
                dumps(
                    {
                        "customer_id": ticket["customer_id"],
                        "plan": rng.choice(["free", "pro", "team"]),
                        "orders": rng.randint(0, 40),
                        "open_tickets": rng.randint(1, 3),
                    }
                ),
            )
        if rng.random() < 0.85:
            t.add(
                "reply_to_customer",
                {
                    "ticket_id": ticket["id"],
                    "message": f"Hi, thanks for reaching out: {_RESOLUTIONS[index]}.",
                },
                "sent",
            )
            t.add(
                "close_ticket",
                {"ticket_id": ticket["id"], "resolution": _RESOLUTIONS[index]},
                "ok",
                gain=gain,
            )
        else:
            t.add("reassign_ticket", {"ticket_id": ticket["id"], "team": "tier-2"}, "ok")

    while len(t) < (prefix if stuck else length):
        number += rng.randint(1, 30)
        index, ticket = _ticket(rng, number, queue)
        t.add("claim_next_ticket", {"queue": queue}, dumps(ticket))
        work(ticket, index, 1)
    if stuck is None:
        return
    t.stuck_from_here()
    for _ in range(rng.randint(6, 12)):  # flat_identical: the claim is never released: the same ticket
        t.add("claim_next_ticket", {"queue": queue}, dumps(ticket))
        work(ticket, index, 0)


# --------------------------------------------------------------------------------------------
# Writer: writes the numbered sections of a document, answered "ok". Metric: sections written.

_GUIDES = [
    ("onboarding-data-platform", "Onboarding guide for the data platform"),
    ("runbook-payments", "Payments service runbook"),
    ("handbook-field-ops", "Field operations handbook"),
    ("grant-proposal-2025", "Grant proposal: coastal sensor network"),
]
_TOPICS = [
    "Access and accounts", "Architecture overview", "Local setup", "Deploying a change", "On-call",
    "Alerts and dashboards", "Data retention", "Incident response", "Costs", "Security reviews",
    "Glossary", "Budget", "Timeline", "Risks", "Evaluation", "Stakeholders", "Training", "Backups",
]  # fmt: skip


def _prose(rng: random.Random, topic: str) -> str:
    return (
        f"{topic}. "
        + " ".join(report_sentence(rng) for _ in range(rng.randint(2, 4)))
        + f" See also section {rng.randint(1, 30)}."
    )


def writer(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    doc_id, title = rng.choice(_GUIDES)
    sections = rng.randint(14, 40)
    outline = [f"{i}. {rng.choice(_TOPICS)}" for i in range(1, sections + 1)]
    t.add("read_outline", {"doc_id": doc_id}, f"{title}\n" + "\n".join(outline))
    length = rng.randint(15, 60)
    prefix = rng.randint(6, 16)
    written: dict[int, str] = {}
    number = 1
    while len(t) < (prefix if stuck else length) and number <= sections:
        topic = outline[number - 1].split(". ", 1)[1]
        if rng.random() < 0.35:
            t.add(
                "search_notes",
                {"query": topic.lower()},
                "\n".join(f"- {report_sentence(rng)}" for _ in range(rng.randint(1, 3))),
            )
        if written and rng.random() < 0.15:
            t.add("read_section", {"doc_id": doc_id, "number": number - 1}, written[number - 1])
        written[number] = _prose(rng, topic)
        t.add(
            "write_section",
            {"doc_id": doc_id, "number": number, "title": topic, "text": written[number]},
            "ok",
            gain=1,
        )
        number += 1
    if stuck is None:
        return
    t.stuck_from_here()
    again = rng.random() < 0.5  # rewriting one section, or writes that land nowhere
    for _ in range(rng.randint(15, 30)):
        at = max(1, number - 1) if again else number
        topic = outline[min(at, sections) - 1].split(". ", 1)[1]
        if rng.random() < 0.25:
            t.add(
                "search_notes",
                {"query": f"{topic.lower()} {rng.choice(_HEADINGS).lower()}"},
                f"- {report_sentence(rng)}",
            )
        t.add(
            "write_section",
            {"doc_id": doc_id, "number": at, "title": topic, "text": _prose(rng, topic)},
            "ok",
        )
        if not again:
            number += 1


# --------------------------------------------------------------------------------------------
# Research agent: searches, fetches across sites; some refuse (403) or time out and it moves on.
# Metric: sources saved.

_RESEARCH = [
    ("heat pump adoption in the Nordics", [
        "heat pump installations Norway 2023", "Sweden share of households with heat pumps",
        "Finland air-to-water heat pump subsidy", "EHPA heat pump sales statistics Nordic countries",
        "Denmark district heating vs heat pumps", "heat pump performance at -20C field study",
        "Nordic electricity prices effect on heat pump sales"]),
    ("lithium-ion battery recycling in the EU", [
        "EU battery regulation recycling targets 2030", "lithium recovery rate hydrometallurgy",
        "black mass exports Europe 2023", "battery recycling plant capacity Germany",
        "Northvolt Revolt recycling output", "cost of recycled lithium vs mined"]),
    ("microplastics in drinking water", [
        "microplastics tap water study 2023", "WHO microplastics drinking water report",
        "bottled water nanoplastics Raman microscopy", "microplastic removal water treatment plants",
        "microplastics health effects review", "EU drinking water directive microplastics watch list"]),
    ("remote work and urban office vacancy", [
        "office vacancy rate San Francisco 2024", "hybrid work days per week survey",
        "office to residential conversion costs", "London office occupancy 2023",
        "commercial real estate loan defaults offices", "remote work productivity meta-analysis"]),
]  # fmt: skip
_OPEN = [
    "en.wikipedia.org", "www.iea.org", "ec.europa.eu", "ourworldindata.org", "www.reuters.com",
    "arxiv.org", "www.nature.com", "www.bbc.com", "www.theguardian.com", "www.oecd.org",
    "www.sciencedaily.com", "www.mdpi.com", "www.eea.europa.eu", "www.nrel.gov",
]  # fmt: skip
_REFUSE = ["www.statista.com", "www.ft.com", "www.bloomberg.com", "www.wsj.com", "www.researchgate.net"]
_SLOW = ["www.ssb.no", "data.europa.eu", "www.stat.fi", "www.destatis.de"]


@dataclass
class _Result:
    title: str
    url: str
    snippet: str
    host: str


def _results(rng: random.Random, query: str) -> list[_Result]:
    words = [w for w in query.lower().split() if w.isalpha() or w.isalnum()]
    found = []
    hosts = rng.sample(_OPEN, 3) + rng.sample(_REFUSE, 1) + rng.sample(_SLOW, 1)
    rng.shuffle(hosts)
    for host in hosts:
        slug = "-".join(rng.sample(words, min(len(words), rng.randint(2, 4))))
        section = rng.choice(["article", "reports", "news", "data", "abs"])
        url = f"https://{host}/{section}/{slug}-{rng.randint(100, 99999)}"
        title = f"{query.title()} - {host.removeprefix('www.').split('.')[0].upper()}"
        found.append(_Result(title, url, report_sentence(rng), host))
    return found


def _listing(results: list[_Result]) -> str:
    return "\n".join(f"{i}. {r.title}\n   {r.url}\n   {r.snippet}" for i, r in enumerate(results, 1))


def research(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    topic, queries = rng.choice(_RESEARCH)
    queries = rng.sample(queries, len(queries))
    pages: dict[str, str] = {}
    length = rng.randint(15, 60)
    prefix = rng.randint(8, 20)

    def fetch(result: _Result) -> bool:
        """Fetch one result; True when its page came back."""
        if result.host in _REFUSE:
            t.add(
                "fetch",
                {"url": result.url},
                "403 Forbidden\nAccess to this page has been denied.",
                "HTTP 403",
            )
            return False
        if result.host in _SLOW:
            t.add(
                "fetch",
                {"url": result.url},
                f"ReadTimeout: HTTPSConnectionPool(host='{result.host}', port=443): "
                "Read timed out. (read timeout=30)",
                "timeout",
            )
            return False
        if result.url not in pages:
            pages[result.url] = f"{result.title}\n" + " ".join(report_sentence(rng) for _ in range(4))
        t.add("fetch", {"url": result.url}, pages[result.url])
        return True

    searches = 0
    while len(t) < (prefix if stuck else length):
        query = queries[searches % len(queries)]
        if searches >= len(queries):  # every sub-question asked: narrower ones
            query = f"{query} {rng.choice(['2024', 'report', 'pdf', 'statistics', 'review'])}"
        searches += 1
        results = _results(rng, query)
        t.add("web_search", {"query": query}, _listing(results))
        saved, wanted = 0, rng.randint(1, 3)
        for result in results:
            if saved >= wanted or len(t) >= (prefix if stuck else length):
                break
            if fetch(result) and rng.random() < 0.8:
                note = f"{topic}: {report_sentence(rng)}"
                t.add("save_source", {"url": result.url, "note": note}, "ok", gain=1)
                saved += 1
    if stuck is None:
        return
    t.stuck_from_here()
    base = rng.choice(queries)
    same = _results(rng, base)
    endings = [
        "",
        " statistics",
        " data 2023",
        " official figures",
        " latest numbers",
        " report",
        " pdf",
        " study",
        " survey results",
        " by year",
        " table",
    ]
    stretch = len(t) + rng.randint(20, 35)
    while len(t) < stretch:  # wandering: reworded searches, the same few pages, nothing saved
        listing = same[:]
        rng.shuffle(listing)
        t.add("web_search", {"query": f"{base}{rng.choice(endings)}"}, _listing(listing))
        for result in listing[: rng.randint(1, 3)]:
            fetch(result)


# --------------------------------------------------------------------------------------------
# Airline customer service (tau-bench-like): user details, flight searches over several dates
# (some empty), the customer changes their mind once, booking. No metric.

_AIRPORTS = {
    "JFK": "New York", "LAX": "Los Angeles", "SFO": "San Francisco", "SEA": "Seattle", "ORD": "Chicago",
    "ATL": "Atlanta", "DFW": "Dallas", "DEN": "Denver", "BOS": "Boston", "MIA": "Miami",
    "PHX": "Phoenix", "LAS": "Las Vegas", "IAH": "Houston", "EWR": "Newark", "DTW": "Detroit",
    "MSP": "Minneapolis", "CLT": "Charlotte", "PHL": "Philadelphia",
}  # fmt: skip


def _user_id(first: str, last: str, rng: random.Random) -> str:
    return f"{first.lower()}_{last.lower()}_{rng.randint(1000, 9999)}"


class _Flights:
    """The flight database of one run: the same search answers the same."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.answers: dict[tuple[str, str, str, str], Any] = {}

    def _flight(self, origin: str, destination: str, date: str | None = None) -> dict[str, Any]:
        rng = self.rng
        dep = rng.randint(0, 23)
        arr = dep + rng.randint(2, 6)
        flight: dict[str, Any] = {
            "flight_number": f"HAT{rng.randint(1, 299):03d}",
            "origin": origin,
            "destination": destination,
            "scheduled_departure_time_est": f"{dep:02d}:00:00",
            "scheduled_arrival_time_est": f"{arr % 24:02d}:00:00" + ("+1" if arr >= 24 else ""),
            "status": "available",
            "available_seats": {c: rng.randint(0, 20) for c in ("basic_economy", "economy", "business")},
            "prices": {
                "basic_economy": rng.randint(50, 100),
                "economy": rng.randint(100, 200),
                "business": rng.randint(200, 500),
            },
        }
        if date is not None:
            flight["date"] = date
        return flight

    def direct(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        key = ("direct", origin, destination, date)
        if key not in self.answers:
            count = 0 if self.rng.random() < 0.35 else self.rng.randint(1, 3)
            self.answers[key] = [self._flight(origin, destination) for _ in range(count)]
        return list(self.answers[key])

    def onestop(self, origin: str, destination: str, date: str) -> list[list[dict[str, Any]]]:
        key = ("onestop", origin, destination, date)
        if key not in self.answers:
            pairs = []
            for _ in range(self.rng.randint(1, 3)):
                via = self.rng.choice([a for a in _AIRPORTS if a not in (origin, destination)])
                pairs.append([self._flight(origin, via, date), self._flight(via, destination, date)])
            self.answers[key] = pairs
        return list(self.answers[key])


def _search(t: Tape, flights: _Flights, tool: str, origin: str, destination: str, date: str) -> Any:
    args = {"origin": origin, "destination": destination, "date": date}
    found: Any = (
        flights.direct(origin, destination, date)
        if tool == "search_direct_flight"
        else flights.onestop(origin, destination, date)
    )
    t.add(tool, args, dumps(found))
    return found


def airline(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    first, last = person(rng)
    uid = _user_id(first, last, rng)
    origin, dest = rng.sample(sorted(_AIRPORTS), 2)
    day = rng.randint(10, 24)
    cabin = rng.choice(["economy", "economy", "business", "basic_economy"])
    travellers = rng.randint(1, 3)
    gift = f"gift_card_{rng.randint(1000000, 9999999)}"
    card = f"credit_card_{rng.randint(1000000, 9999999)}"
    cert = f"certificate_{rng.randint(1000000, 9999999)}"
    gift_amount, cert_amount = rng.randint(30, 300), rng.choice([100, 250, 500])
    reservations = [code(rng, 6) for _ in range(rng.randint(1, 5))]
    companions = [
        {
            "first_name": rng.choice(FIRST),
            "last_name": rng.choice(LAST),
            "dob": f"19{rng.randint(50, 99)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        }
        for _ in range(travellers - 1)
    ]
    dob = f"19{rng.randint(50, 99)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    user = {
        "name": {"first_name": first, "last_name": last},
        "address": {
            "address1": f"{rng.randint(10, 999)} {rng.choice(['Willow Lane', 'Oak St', 'Pine Ave'])}",
            "city": _AIRPORTS[origin],
            "country": "USA",
            "zip": f"{rng.randint(10000, 99999)}",
        },
        "email": f"{first.lower()}.{last.lower()}{rng.randint(1, 9999)}@example.com",
        "dob": dob,
        "payment_methods": {
            gift: {"source": "gift_card", "amount": gift_amount, "id": gift},
            card: {
                "source": "credit_card",
                "brand": rng.choice(["visa", "mastercard"]),
                "last_four": f"{rng.randint(0, 9999):04d}",
                "id": card,
            },
            cert: {"source": "certificate", "amount": cert_amount, "id": cert},
        },
        "saved_passengers": companions,
        "membership": rng.choice(["regular", "silver", "gold"]),
        "reservations": reservations,
    }
    trip = rng.choice(["one-way", "round-trip"])
    t.add(
        "respond",
        {"content": "Hello! How can I help you today?"},
        f"Hi, I'd like to book a {trip} trip from {_AIRPORTS[origin]} to {_AIRPORTS[dest]} around May "
        f"{day}, {cabin.replace('_', ' ')}, for {travellers} passenger{'s' if travellers > 1 else ''}. "
        f"My user id is {uid}.",
    )
    t.add("get_user_details", {"user_id": uid}, dumps(user))
    if rng.random() < 0.4:  # the customer first asks about a booking they have
        rid = rng.choice(reservations)
        t.add(
            "respond",
            {"content": "Sure. Before we search, is there anything about your existing reservations?"},
            f"Yes, actually, can you check whether reservation {rid} includes insurance?",
        )
        t.add(
            "get_reservation_details",
            {"reservation_id": rid},
            dumps(
                {
                    "reservation_id": rid,
                    "user_id": uid,
                    "origin": dest,
                    "destination": origin,
                    "flight_type": "one_way",
                    "cabin": "economy",
                    "insurance": rng.choice(["yes", "no"]),
                    "created_at": f"2024-05-0{rng.randint(1, 9)}T{rng.randint(10, 23)}:00:00",
                }
            ),
        )
        t.add(
            "respond",
            {"content": f"Reservation {rid} is on record; I've checked its insurance for you."},
            "Great, thanks. Now the new trip please.",
        )
    flights = _Flights(rng)
    chosen: dict[str, Any] | None = None
    chosen_date = ""
    searches: list[tuple[str, str, str, str]] = []
    offsets = [0, 1, -1, 2, -2][: rng.randint(2, 5)]
    for k, offset in enumerate(offsets):
        date = f"2024-05-{day + offset:02d}"
        found = _search(t, flights, "search_direct_flight", origin, dest, date)
        searches.append(("search_direct_flight", origin, dest, date))
        if found and chosen is None:
            chosen, chosen_date = rng.choice(found), date
        if k == 0 and not found:
            t.add(
                "respond",
                {
                    "content": f"There are no direct flights from {origin} to {dest} on {date}. "
                    "Would you like me to check nearby dates or flights with a stop?"
                },
                "Please check the days around it, and a one-stop option too.",
            )
            onestop = _search(t, flights, "search_onestop_flight", origin, dest, date)
            searches.append(("search_onestop_flight", origin, dest, date))
            if chosen is None and rng.random() < 0.3:
                chosen, chosen_date = onestop[0][0], date
    if chosen is None:
        date = f"2024-05-{day:02d}"
        chosen, chosen_date = _search(t, flights, "search_onestop_flight", origin, dest, date)[0][0], date
    t.add(
        "respond",
        {
            "content": f"I found flight {chosen['flight_number']} on {chosen_date} departing "
            f"{chosen['scheduled_departure_time_est']} for ${chosen['prices'][cabin]} per passenger "
            f"in {cabin.replace('_', ' ')}. Would you like this one?"
        },
        rng.choice(
            [
                "Hmm, can you show me the other dates again?",
                "Wait, what was on the first day you checked?",
                "Actually, let me think. Could you look at the other option again?",
            ]
        )
        if (mind := rng.random() < 0.8)
        else "Yes, that one works.",
    )
    if mind:  # the customer changes their mind: one route searched again
        again = rng.choice(searches)
        _search(t, flights, again[0], again[1], again[2], again[3])
        t.add(
            "respond",
            {"content": f"On {again[3]} the results are as I listed before. Which would you prefer?"},
            f"OK, let's go with {chosen['flight_number']} after all.",
        )
    flights_booked = [{"flight_number": chosen["flight_number"], "date": chosen_date}]
    price = chosen["prices"][cabin]
    if trip == "round-trip":
        back_day = min(day + rng.randint(3, 6), 30)
        back: dict[str, Any] | None = None
        for offset in (0, 1, 2)[: rng.randint(1, 3)]:
            date = f"2024-05-{min(back_day + offset, 31):02d}"
            found = _search(t, flights, "search_direct_flight", dest, origin, date)
            if found and back is None:
                back = found[0]
                flights_booked.append({"flight_number": back["flight_number"], "date": date})
        if back is not None:
            price += back["prices"][cabin]
    total = price * travellers
    t.add(
        "think",
        {
            "thought": f"The customer wants {len(flights_booked)} flight(s) in {cabin} for "
            f"{travellers} passenger(s). I need the total before asking for payment."
        },
        "",
    )
    t.add("calculate", {"expression": f"{price} * {travellers}"}, f"{float(total)}")
    t.add(
        "respond",
        {
            "content": f"The total is ${total}. How would you like to pay? You have a gift card with "
            f"${gift_amount}, a certificate of ${cert_amount} and a credit card on file."
        },
        "Use the whole gift card and put the rest on my credit card, please.",
    )
    passengers = [{"first_name": first, "last_name": last, "dob": dob}, *companions]
    booking: dict[str, Any] = {
        "user_id": uid,
        "origin": origin,
        "destination": dest,
        "flight_type": "round_trip" if trip == "round-trip" else "one_way",
        "cabin": cabin,
        "flights": flights_booked,
        "passengers": passengers,
        "total_baggages": rng.randint(0, travellers),
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    if stuck is None:
        rest = total - min(gift_amount, total)
        t.add("calculate", {"expression": f"{total} - {min(gift_amount, total)}"}, f"{float(rest)}")
        payment = [{"payment_id": gift, "amount": min(gift_amount, total)}]
        if rest:
            payment.append({"payment_id": card, "amount": rest})
        rid = code(rng, 6)
        t.add(
            "book_reservation",
            {**booking, "payment_methods": payment},
            dumps(
                {
                    "reservation_id": rid,
                    **booking,
                    "payment_history": payment,
                    "created_at": f"2024-05-{rng.randint(1, 9):02d}T{rng.randint(10, 23)}:00:00",
                }
            ),
        )
        extras = rng.sample(["bags", "cancel", "insurance"], rng.randint(0, 2))
        answer = {
            "bags": "Yes, can I add a checked bag to the new booking?",
            "cancel": "Yes, please also cancel one of my old reservations, I won't travel then.",
            "insurance": "Does the new booking include travel insurance?",
        }
        t.add(
            "respond",
            {"content": f"Your reservation {rid} is confirmed. Is there anything else I can help with?"},
            answer[extras[0]] if extras else "No, that's all. Thank you! ###STOP###",
        )
        for number, extra in enumerate(extras):
            following = (
                answer[extras[number + 1]]
                if number + 1 < len(extras)
                else "No, that's all. Thanks! ###STOP###"
            )
            if extra == "bags":
                bags = booking["total_baggages"] + 1
                t.add(
                    "update_reservation_baggages",
                    {
                        "reservation_id": rid,
                        "total_baggages": bags,
                        "nonfree_baggages": 1,
                        "payment_id": card,
                    },
                    dumps(
                        {
                            "reservation_id": rid,
                            **booking,
                            "total_baggages": bags,
                            "nonfree_baggages": 1,
                            "payment_history": [*payment, {"payment_id": card, "amount": 50}],
                        }
                    ),
                )
                t.add(
                    "respond", {"content": "I added one checked bag for $50 on your credit card."}, following
                )
            elif extra == "cancel":
                old = rng.choice(reservations)
                t.add(
                    "get_reservation_details",
                    {"reservation_id": old},
                    dumps(
                        {
                            "reservation_id": old,
                            "user_id": uid,
                            "origin": dest,
                            "destination": origin,
                            "flight_type": "one_way",
                            "cabin": "economy",
                            "insurance": "yes",
                            "created_at": f"2024-05-0{rng.randint(1, 9)}T{rng.randint(10, 23)}:00:00",
                        }
                    ),
                )
                t.add(
                    "respond",
                    {
                        "content": f"Reservation {old} has travel insurance, so it can be cancelled for a "
                        "full refund. Shall I cancel it?"
                    },
                    "Yes, please.",
                )
                t.add(
                    "cancel_reservation",
                    {"reservation_id": old},
                    dumps(
                        {
                            "reservation_id": old,
                            "user_id": uid,
                            "status": "cancelled",
                            "payment_history": [{"payment_id": card, "amount": -rng.randint(100, 600)}],
                        }
                    ),
                )
                t.add(
                    "respond",
                    {"content": f"Reservation {old} is cancelled; the refund takes 5 to 7 business days."},
                    following,
                )
            else:
                t.add(
                    "respond",
                    {"content": "No, the new booking has no travel insurance; it was booked without it."},
                    following,
                )
        return
    # payment_retry: the amounts do not add up; reshuffled between the methods, the sum never changes
    paid = total - rng.randint(40, max(41, total // 2))
    t.add(
        "calculate",
        {"expression": f"{paid} - {min(gift_amount, paid)}"},
        f"{float(paid - min(gift_amount, paid))}",
    )
    error = f"Error: payment amount does not add up, total price is {total}, but paid {paid}"
    methods = [gift, card, cert]

    def attempt() -> None:
        cuts = sorted(rng.sample(range(1, paid), 2)) if paid > 3 else [1, 2]
        parts = [cuts[0], cuts[1] - cuts[0], paid - cuts[1]]
        rng.shuffle(methods)
        payment = [{"payment_id": m, "amount": a} for m, a in zip(methods, parts, strict=True)]
        t.add("book_reservation", {**booking, "payment_methods": payment}, error, "tool_error")

    attempt()
    t.stuck_from_here()
    for _ in range(rng.randint(4, 7)):
        t.add(
            "think",
            {
                "thought": rng.choice(
                    [
                        f"I need to adjust the payment amounts so they add up to ${paid}.",
                        f"The payment methods must cover ${paid}. I will rebalance the gift card and card.",
                        f"I will use the certificate and the gift card, the credit card covers ${paid}.",
                        "The amounts must match the total. Let me redistribute them between the methods.",
                    ]
                )
            },
            "",
        )
        attempt()
    t.add(
        "respond",
        {"content": "I'm sorry, I'm having trouble processing the payment. Let me try once more."},
        "OK, please hurry, I need this booked today.",
    )


# --------------------------------------------------------------------------------------------
# Retail customer service (tau-bench retail): users, orders by id, products, modify / return /
# exchange / cancel. No metric.

_CATALOGUE: dict[str, dict[str, list[str]]] = {
    "T-Shirt": {"color": ["black", "white", "blue", "red"], "size": ["S", "M", "L", "XL"],
                "material": ["cotton", "polyester"]},
    "Water Bottle": {"capacity": ["500ml", "750ml", "1000ml"], "material": ["stainless steel", "glass"],
                     "color": ["green", "black", "red"]},
    "Desk Lamp": {"color": ["white", "black", "silver"], "brightness": ["low", "medium", "high"],
                  "power source": ["USB", "AC adapter"]},
    "Bluetooth Speaker": {"color": ["blue", "black", "red"], "battery life": ["10 hours", "20 hours"],
                          "water resistance": ["yes", "no"]},
    "Running Shoes": {"size": ["8", "9", "10", "11"], "color": ["black", "white", "yellow"],
                      "material": ["mesh", "leather"]},
    "Mechanical Keyboard": {"switch type": ["linear", "tactile", "clicky"], "backlight": ["RGB", "none"],
                            "size": ["full size", "80%"]},
    "Backpack": {"color": ["grey", "navy", "black"], "size": ["small", "medium", "large"],
                 "compartment": ["laptop", "hydration"]},
    "Coffee Maker": {"color": ["black", "stainless steel"], "capacity": ["4 cups", "8 cups", "12 cups"],
                     "type": ["drip", "espresso"]},
}  # fmt: skip


def _item(rng: random.Random, name: str, product_id: str) -> dict[str, Any]:
    options = {k: rng.choice(v) for k, v in _CATALOGUE[name].items()}
    return {
        "name": name,
        "product_id": product_id,
        "item_id": str(rng.randint(10**9, 10**10 - 1)),
        "price": round(rng.uniform(15, 400), 2),
        "options": options,
    }


def _exchange_again(
    t: Tape, order_id: str, item_id: str, others: list[str], new_id: str, methods: list[str]
) -> None:
    """One more exchange with the items reshuffled: their counts never match, the error never changes."""
    rng = t.rng
    olds = [item_id, *rng.sample(others, min(len(others), rng.randint(1, 2)))]
    if len(olds) == 1:
        olds.append(item_id)
    rng.shuffle(olds)
    news = [new_id] if rng.random() < 0.7 else [new_id] * (len(olds) + 1)
    t.add(
        "exchange_delivered_order_items",
        {
            "order_id": order_id,
            "item_ids": olds,
            "new_item_ids": news,
            "payment_method_id": rng.choice(methods),
        },
        "Error: the number of items to be exchanged should match",
        "tool_error",
    )


def retail(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    first, last = person(rng)
    uid = _user_id(first, last, rng)
    email = f"{first.lower()}.{last.lower()}{rng.randint(1, 9999)}@example.com"
    zipcode = f"{rng.randint(10000, 99999)}"
    card = f"credit_card_{rng.randint(1000000, 9999999)}"
    paypal = f"paypal_{rng.randint(1000000, 9999999)}"
    gift = f"gift_card_{rng.randint(1000000, 9999999)}"
    products = {name: str(rng.randint(10**9, 10**10 - 1)) for name in _CATALOGUE}
    address = {
        "address1": f"{rng.randint(10, 999)} {rng.choice(['Elm St', 'Hillcrest Dr', 'Lake Rd'])}",
        "address2": f"Suite {rng.randint(100, 999)}",
        "city": rng.choice(CITIES),
        "country": "USA",
        "state": rng.choice(["CA", "TX", "NY", "WA", "IL"]),
        "zip": zipcode,
    }
    orders: dict[str, dict[str, Any]] = {}
    for _ in range(rng.randint(2, 4)):
        oid = f"#W{rng.randint(1000000, 9999999)}"
        items = [
            _item(rng, name, products[name]) for name in rng.sample(sorted(_CATALOGUE), rng.randint(1, 4))
        ]
        status = rng.choice(["delivered", "delivered", "pending", "processed"])
        pay = rng.choice([card, paypal, gift])
        orders[oid] = {
            "order_id": oid,
            "user_id": uid,
            "address": address,
            "items": items,
            "status": status,
            "payment_history": [
                {
                    "transaction_type": "payment",
                    "amount": round(sum(i["price"] for i in items), 2),
                    "payment_method_id": pay,
                }
            ],
        }
    user = {
        "name": {"first_name": first, "last_name": last},
        "address": address,
        "email": email,
        "payment_methods": {
            card: {
                "source": "credit_card",
                "brand": "visa",
                "last_four": f"{rng.randint(0, 9999):04d}",
                "id": card,
            },
            paypal: {"source": "paypal", "id": paypal},
            gift: {"source": "gift_card", "balance": rng.randint(0, 200), "id": gift},
        },
        "orders": sorted(orders),
    }
    if stuck and not any(o["status"] == "delivered" for o in orders.values()):  # the twin needs one
        orders[sorted(orders)[0]]["status"] = "delivered"
    goals = rng.sample(["return", "exchange", "modify", "cancel", "address"], rng.randint(1, 4))
    if stuck:  # a request or two handled well, then the exchange that goes wrong
        goals = [*[g for g in goals if g not in ("return", "exchange")][: rng.randint(0, 1)], "exchange"]
    wishes = {
        "return": "return something I bought",
        "exchange": "exchange an item for another option",
        "modify": "change an item in an order that hasn't shipped",
        "cancel": "cancel an order",
        "address": "change the shipping address of my order",
    }
    t.add("respond", {"content": "Hi! How can I help you today?"}, f"Hi, I'd like to {wishes[goals[0]]}.")
    if rng.random() < 0.3:
        t.add(
            "respond",
            {"content": "Could you give me your name and zip code to find your account?"},
            f"Sure, {first} {last}, zip {rng.randint(10000, 99999)}.",
        )
        t.add(
            "find_user_id_by_name_zip",
            {"first_name": first, "last_name": last, "zip": zipcode[:3] + "00"},
            "Error: user not found",
            "tool_error",
        )
        t.add(
            "respond",
            {"content": "I couldn't find you with that zip code. Could you share your email?"},
            f"Oh, sorry, it's {email}.",
        )
    else:
        t.add("respond", {"content": "Could you please provide your email address?"}, f"It's {email}.")
    t.add("find_user_id_by_email", {"email": email}, uid)
    t.add("get_user_details", {"user_id": uid}, dumps(user))
    looked: set[str] = set()

    def product(name: str) -> dict[str, str]:
        variants = {}
        for _ in range(rng.randint(3, 6)):
            v = _item(rng, name, products[name])
            variants[v["item_id"]] = {
                "item_id": v["item_id"],
                "options": v["options"],
                "available": rng.random() < 0.8,
                "price": v["price"],
            }
        t.add(
            "get_product_details",
            {"product_id": products[name]},
            dumps({"name": name, "product_id": products[name], "variants": variants}),
        )
        choice = rng.choice([v for v in variants.values() if v["available"]] or list(variants.values()))
        return {"item_id": choice["item_id"], "options": ", ".join(choice["options"].values())}

    for number, goal in enumerate(goals):
        wanted = ("delivered",) if goal in ("return", "exchange") else ("pending",)
        fits = [o for o in orders.values() if o["status"] in wanted]
        if number:
            t.add(
                "respond",
                {"content": "Is there anything else I can help you with?"},
                f"Yes, I'd also like to {wishes[goal]}.",
            )
        if not fits:  # none of the orders allows it: looked through, the customer told why
            for oid in sorted(orders):
                if oid not in looked:
                    looked.add(oid)
                    t.add("get_order_details", {"order_id": oid}, dumps(orders[oid]))
            doing = {
                "return": "returned",
                "exchange": "exchanged",
                "modify": "modified",
                "cancel": "cancelled",
                "address": "given a new address",
            }[goal]
            t.add(
                "respond",
                {
                    "content": f"I'm sorry, none of your orders can be {doing}: they are "
                    f"{', '.join(sorted({o['status'] for o in orders.values()}))}."
                },
                rng.choice(["Oh, I see. Never mind then.", "OK, that's a pity.", "Alright, understood."]),
            )
            continue
        order = rng.choice(fits)
        others = [o for o in rng.sample(sorted(orders), len(orders)) if o != order["order_id"]]
        for oid in [*others[: rng.randint(0, 2)], order["order_id"]]:
            if oid not in looked:
                looked.add(oid)
                t.add("get_order_details", {"order_id": oid}, dumps(orders[oid]))
        item = rng.choice(order["items"])
        pay = order["payment_history"][0]["payment_method_id"]
        if goal == "return":
            t.add(
                "respond",
                {
                    "content": f"I can return the {item['name']} (${item['price']}) to your original "
                    "payment method. Shall I proceed?"
                },
                "Yes, please.",
            )
            t.add(
                "return_delivered_order_items",
                {"order_id": order["order_id"], "item_ids": [item["item_id"]], "payment_method_id": pay},
                dumps(
                    {
                        **order,
                        "status": "return requested",
                        "return_items": [item["item_id"]],
                        "return_payment_method_id": pay,
                    }
                ),
            )
            order["status"] = "return requested"
        elif goal in ("exchange", "modify"):
            new = product(item["name"])
            t.add(
                "respond",
                {"content": f"The {item['name']} is available with {new['options']}. Would you like that?"},
                "Yes, that one.",
            )
            t.add(
                "calculate",
                {"expression": f"{item['price']} - {round(rng.uniform(15, 400), 2)}"},
                f"{round(rng.uniform(-80, 80), 2)}",
            )
            if goal == "exchange" and stuck:
                # reshuffle_error: item lists of different lengths, reshuffled, into the same error
                others = [i["item_id"] for i in order["items"] if i is not item]
                methods = [pay, gift]

                _exchange_again(t, order["order_id"], item["item_id"], others, new["item_id"], methods)
                t.stuck_from_here()
                for _ in range(rng.randint(4, 7)):
                    t.add(
                        "think",
                        {
                            "thought": rng.choice(
                                [
                                    "The exchange failed. I should pass the items again with the new item.",
                                    "Maybe the order of the item ids matters. Let me try again.",
                                    "I will include the other items of the order in the exchange as well.",
                                    "Let me retry the exchange with the gift card as the payment method.",
                                ]
                            )
                        },
                        "",
                    )
                    _exchange_again(t, order["order_id"], item["item_id"], others, new["item_id"], methods)
                t.add(
                    "respond",
                    {"content": "I'm sorry, the exchange is not going through. Let me try again."},
                    "Please do, I really need the other one.",
                )
                return
            tool = "exchange_delivered_order_items" if goal == "exchange" else "modify_pending_order_items"
            status = "exchange requested" if goal == "exchange" else "pending (item modified)"
            t.add(
                tool,
                {
                    "order_id": order["order_id"],
                    "item_ids": [item["item_id"]],
                    "new_item_ids": [new["item_id"]],
                    "payment_method_id": pay,
                },
                dumps({**order, "status": status}),
            )
            order["status"] = status
        elif goal == "cancel":
            t.add(
                "respond",
                {"content": f"Order {order['order_id']} can be cancelled. What is the reason?"},
                "I no longer need it.",
            )
            t.add(
                "cancel_pending_order",
                {"order_id": order["order_id"], "reason": "no longer needed"},
                dumps(
                    {
                        **order,
                        "status": "cancelled",
                        "payment_history": [
                            *order["payment_history"],
                            {**order["payment_history"][0], "transaction_type": "refund"},
                        ],
                    }
                ),
            )
            order["status"] = "cancelled"
        else:  # address
            street = f"{rng.randint(10, 999)} {rng.choice(['Maple Ave', 'Cedar Ct', 'Bay St'])}"
            t.add("respond", {"content": "What is the new address?"}, f"{street}, same city and zip.")
            t.add(
                "modify_pending_order_address",
                {
                    "order_id": order["order_id"],
                    "address1": street,
                    "address2": "",
                    "city": address["city"],
                    "state": address["state"],
                    "country": "USA",
                    "zip": zipcode,
                },
                dumps({**order, "address": {**address, "address1": street, "address2": ""}}),
            )
    t.add(
        "respond",
        {"content": "All done. Is there anything else I can help you with?"},
        rng.choice(["No, that's everything, thanks! ###STOP###", "That's all. ###STOP###"]),
    )


# --------------------------------------------------------------------------------------------
# Telecom customer service (tau2-bench telecom): account lookups, the customer runs checks on the
# phone and reports them, backend fixes (roaming, data refuel, payment and line resume). No metric.


@dataclass
class _Phone:
    airplane: bool = False
    sim: str = "active"
    data: bool = True
    roaming: bool = False
    mode: str = "4g_5g_preferred"
    signal: str = "good"
    apn_ok: bool = True

    def connection(self) -> str:
        if self.airplane or self.sim != "active":
            return "no_service"
        return "connected"

    def status(self) -> str:
        network = {"4g_5g_preferred": "5G", "4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}[self.mode]
        connected = self.connection() == "connected"
        return (
            f"Airplane Mode: {'ON' if self.airplane else 'OFF'}\nSIM Card Status: {self.sim}\n"
            f"Cellular Connection: {self.connection()}\n"
            f"Cellular Signal: {self.signal if connected else 'none'}\n"
            f"Cellular Network Type: {network if connected else 'none'}\n"
            f"Mobile Data Enabled: {'Yes' if self.data else 'No'}\n"
            f"Data Roaming Enabled: {'Yes' if self.roaming else 'No'}"
        )


def _device(action: str, result: str, comment: str, args: str = "{}") -> str:
    return f"[user] {action}({args}) -> {result}\n{comment}"


def telecom(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    first, last = person(rng)
    phone_number = f"555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
    cid, lid, pid, did = (f"{p}{rng.randint(1000, 9999)}" for p in "CLPD")
    kinds = ["data_off", "airplane", "roaming", "exceeded", "suspended", "apn", "mode", "sim"]
    issues = rng.sample(kinds, rng.randint(1, 3))
    if stuck:  # maybe one issue solved first, then No Service from a SIM never looked at
        issues = [*[k for k in issues if k not in ("sim", "airplane")][: rng.randint(0, 1)], "sim"]
    phone = _Phone(signal=rng.choice(["excellent", "good", "fair"]))
    limit = rng.choice([5.0, 10.0, 15.0])
    used = limit + 0.1 if "exceeded" in issues else round(rng.uniform(0.5, limit - 1), 1)
    complaint = {
        "data_off": "my mobile data isn't working",
        "airplane": "I have no service at all",
        "roaming": "I'm abroad and my data doesn't work",
        "exceeded": "my data stopped working",
        "suspended": "my line seems to be suspended",
        "apn": "I can't send picture messages",
        "mode": "my internet is extremely slow",
        "sim": "my phone says No Service",
    }
    t.add(
        "respond",
        {"content": "Hi! How can I help you today?"},
        f"Hi, {complaint[issues[0]]}. My number is {phone_number}.",
    )
    t.add(
        "get_customer_by_phone",
        {"phone_number": phone_number},
        dumps(
            {
                "customer_id": cid,
                "full_name": f"{first} {last}",
                "date_of_birth": f"19{rng.randint(50, 99)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                "email": f"{first.lower()}.{last.lower()}@example.com",
                "phone_number": phone_number,
                "account_status": "Active",
                "line_ids": [lid],
                "bill_ids": [f"B{rng.randint(1000, 9999)}"],
            }
        ),
    )
    line = {
        "line_id": lid,
        "phone_number": phone_number,
        "status": "Suspended" if "suspended" in issues else "Active",
        "plan_id": pid,
        "device_id": did,
        "data_used_gb": used,
        "data_refueling_gb": 0.0,
        "roaming_enabled": False,
        "contract_end_date": f"2026-{rng.randint(1, 12):02d}-01",
    }
    t.add("get_details_by_id", {"id": lid}, dumps(line))
    if rng.random() < 0.7 or "exceeded" in issues:
        t.add(
            "get_details_by_id",
            {"id": pid},
            dumps(
                {
                    "plan_id": pid,
                    "name": rng.choice(["Basic Plan", "Premium Plan", "Travel Plan"]),
                    "data_limit_gb": limit,
                    "price_per_month": rng.choice([30.0, 40.0, 65.0]),
                    "data_refueling_price_per_gb": 5.0,
                }
            ),
        )
    if rng.random() < 0.4:
        t.add(
            "get_details_by_id",
            {"id": did},
            dumps(
                {
                    "device_id": did,
                    "device_type": "phone",
                    "model": rng.choice(["Smartphone X", "Pixel 7"]),
                    "is_esim_capable": rng.random() < 0.5,
                    "activated": True,
                }
            ),
        )
    if "exceeded" in issues or rng.random() < 0.3:
        t.add(
            "get_data_usage",
            {"customer_id": cid, "line_id": lid},
            dumps(
                {
                    "line_id": lid,
                    "data_used_gb": str(used),
                    "data_limit_gb": str(limit),
                    "cycle_end_date": "2025-02-28",
                }
            ),
        )
    ok = ["Here is what I see.", "I've done that.", "Done, here's the result.", "OK, this is what it shows."]

    def ask(content: str, action: str, result: str, args: str = "{}") -> None:
        t.add("respond", {"content": content}, _device(action, result, rng.choice(ok), args))

    for number, issue in enumerate(issues):
        if issue == "data_off":
            phone.data = False
        elif issue == "airplane":
            phone.airplane = True
        elif issue == "sim":
            phone.sim = "missing"
        elif issue == "mode":
            phone.mode = "2g_only"
        if number:
            t.add(
                "respond",
                {"content": "Is there anything else I can help you with?"},
                f"Yes, one more thing: {complaint[issue]}.",
            )
        ask(
            rng.choice(
                [
                    "Let's check your phone. Please run check_network_status and tell me what it shows.",
                    "Could you run check_network_status on your phone and tell me the result?",
                ]
            ),
            "check_network_status",
            phone.status(),
        )
        if issue == "data_off":
            phone.data = True
            ask(
                "Mobile data is off. Please turn it on with toggle_data.",
                "toggle_data",
                "Mobile Data is now ON.",
            )
        elif issue == "airplane":
            phone.airplane = False
            ask(
                "Airplane mode is on. Please turn it off.",
                "toggle_airplane_mode",
                "Airplane Mode is now OFF.",
            )
        elif issue == "mode":
            ask(
                "Please check your network mode preference.",
                "check_network_mode_preference",
                "Network Mode Preference: 2g_only",
            )
            phone.mode = "4g_5g_preferred"
            ask(
                "Please set it to 4g_5g_preferred.",
                "set_network_mode_preference",
                "Network mode preference set to 4g_5g_preferred.",
                '{"mode": "4g_5g_preferred"}',
            )
        elif issue == "roaming":
            t.add(
                "enable_roaming",
                {"customer_id": cid, "line_id": lid},
                f"Roaming enabled successfully for line {lid}",
            )
            phone.roaming = True
            ask(
                "Roaming is now enabled on your line. Please also turn on data roaming on the phone.",
                "toggle_roaming",
                "Data Roaming is now ON.",
            )
        elif issue == "exceeded":
            gb = rng.choice([1.0, 2.0, 3.0])
            t.add(
                "respond",
                {"content": f"You've used {used} GB of {limit} GB. I can add data at $5/GB. How much?"},
                f"{gb:g} GB please.",
            )
            t.add(
                "refuel_data",
                {"customer_id": cid, "line_id": lid, "gb_amount": gb},
                dumps(
                    {
                        "message": f"Successfully added {gb} GB of data for line {lid} for ${5 * gb:.2f}",
                        "new_data_refueling_gb": gb,
                        "charge": 5 * gb,
                    }
                ),
            )
        elif issue == "suspended":
            bill = f"B{rng.randint(1000, 9999)}"
            amount = round(rng.uniform(40, 180), 2)
            t.add(
                "get_bills_for_customer",
                {"customer_id": cid},
                dumps(
                    [{"bill_id": bill, "amount_due": amount, "status": "Overdue", "due_date": "2025-01-15"}]
                ),
            )
            t.add(
                "send_payment_request",
                {"customer_id": cid, "bill_id": bill},
                f"Payment request sent to the customer for bill {bill}",
            )
            ask(
                "I've sent a payment request. Please check it and make the payment.",
                "make_payment",
                f"Payment of ${amount} for bill {bill} completed.",
                f'{{"bill_id": "{bill}"}}',
            )
            t.add("resume_line", {"customer_id": cid, "line_id": lid}, f"Line {lid} resumed successfully")
            ask("Your line is resumed. Please restart your phone.", "reboot_device", "Device restarted.")
        elif issue == "apn":
            ask("Please check your APN settings.", "check_apn_settings", "APN: internet\nMMSC URL: (not set)")
            ask(
                "The MMS settings are missing. Please reset your APN settings.",
                "reset_apn_settings",
                "APN settings reset to default.",
            )
            ask("Please restart your phone.", "reboot_device", "Device restarted.")
            ask("Please try sending a picture message.", "can_send_mms", "MMS sent successfully.")
        elif stuck is None:  # sim
            ask(
                "Please check your SIM card status.",
                "check_sim_status",
                "SIM Card Status: missing (not detected)",
            )
            phone.sim = "active"
            ask(
                "Please remove and reinsert your SIM card.",
                "reseat_sim_card",
                "SIM card reseated. SIM detected.",
            )
        else:
            # device_cycle: the SIM is never looked at; restarts and toggles, the same No Service every time
            t.stuck_from_here()
            stretch = len(t) + rng.randint(12, 24)
            while len(t) < stretch:
                step = rng.choice(["reboot", "airplane", "status", "mode", "status"])
                if step == "reboot":
                    ask(
                        rng.choice(
                            [
                                "Let's try restarting your phone.",
                                "Please restart the phone once more.",
                                "Could you reboot the device?",
                            ]
                        ),
                        "reboot_device",
                        "Device restarted.",
                    )
                elif step == "airplane":
                    ask(
                        "Please turn airplane mode on and off again.",
                        "toggle_airplane_mode",
                        "Airplane Mode is now ON.",
                    )
                    ask("And now turn it off.", "toggle_airplane_mode", "Airplane Mode is now OFF.")
                elif step == "mode":
                    ask(
                        "Please set your network mode to 4g_5g_preferred.",
                        "set_network_mode_preference",
                        "Network mode preference set to 4g_5g_preferred.",
                        '{"mode": "4g_5g_preferred"}',
                    )
                else:
                    ask(
                        rng.choice(
                            [
                                "Please check your network status again.",
                                "What does check_network_status show now?",
                                "Let's check the network status once more.",
                            ]
                        ),
                        "check_network_status",
                        phone.status(),
                    )
            return
        ask("Let's verify. Please run check_network_status again.", "check_network_status", phone.status())
        if issue != "apn":
            ask(
                "Now please run a speed test.",
                "run_speed_test",
                f"Speed Test Result: {rng.uniform(40, 300):.2f} Mbps (Excellent). Connection is very fast.",
            )
    t.add(
        "respond",
        {"content": "Everything looks good now. Is there anything else?"},
        "No, it works now, thank you! ###STOP###",
    )


# --------------------------------------------------------------------------------------------
# SWE coding agent (mini-swe-agent style: the tool is the program, a failure is `returncode 1`
# with the traceback in the output). It debugs: each re-run after an edit fails differently
# until it passes; probes fail differently; greps find nothing for different symbols; a
# pre-existing unrelated test failure is seen twice. No metric.

_SWE: list[dict[str, Any]] = [
    {"pkg": "django", "module": "django/db/models/query.py", "func": "bulk_update", "cls": "QuerySet",
     "test": "tests/queries/test_bulk_update.py", "test_name": "test_update_returns_rows",
     "other": "tests/utils_tests/test_timezone.py", "other_name": "test_localdate_uses_system_tz",
     "symbols": ["_batched_insert", "rows_updated", "update_fields", "requires_casting", "batch_size",
                 "bulk_update_rows", "_prepare_for_bulk_update"]},
    {"pkg": "sympy", "module": "sympy/printing/latex.py", "func": "_print_Pow", "cls": "LatexPrinter",
     "test": "sympy/printing/tests/test_latex.py", "test_name": "test_latex_pow_fraction",
     "other": "sympy/utilities/tests/test_pickling.py", "other_name": "test_pickling_printers",
     "symbols": ["_print_Mul", "parenthesize", "fold_frac_powers", "_helper_print_standard_power",
                 "_print_Rational", "latex_fraction", "convert_pow"]},
    {"pkg": "astropy", "module": "astropy/io/ascii/qdp.py", "func": "_line_type", "cls": "QDPSplitter",
     "test": "astropy/io/ascii/tests/test_qdp.py", "test_name": "test_roundtrip_lowercase",
     "other": "astropy/io/ascii/tests/test_connect.py", "other_name": "test_read_generic_remote",
     "symbols": ["_command_re", "_new_re", "_get_type_from_list_of_lines", "read_serr", "_data_re",
                 "_interpret_err_lines", "table_id"]},
    {"pkg": "requests", "module": "requests/sessions.py", "func": "resolve_redirects", "cls": "Session",
     "test": "tests/test_requests.py", "test_name": "test_redirect_keeps_method",
     "other": "tests/test_lowlevel.py", "other_name": "test_chunked_upload_uses_port",
     "symbols": ["rebuild_method", "should_strip_auth", "get_redirect_target", "rebuild_auth",
                 "merge_environment_settings", "prepared_request", "redirect_cache"]},
    {"pkg": "xarray", "module": "xarray/core/dataset.py", "func": "to_stacked_array", "cls": "Dataset",
     "test": "xarray/tests/test_dataset.py", "test_name": "test_to_stacked_array_single_dim",
     "other": "xarray/tests/test_backends.py", "other_name": "test_open_mfdataset_remote",
     "symbols": ["_stack_once", "ensure_stackable", "variable_dim", "sample_dims", "to_unstacked_dataset",
                 "stacking_dims", "_unstack_full_reindex"]},
    {"pkg": "pylint", "module": "pylint/lint/expand_modules.py", "func": "expand_modules", "cls": "PyLinter",
     "test": "tests/lint/unittest_expand_modules.py", "test_name": "test_expand_modules_ignore_paths",
     "other": "tests/test_self.py", "other_name": "test_version_uses_installed_metadata",
     "symbols": ["_is_in_ignore_list_re", "ignore_list_paths_re", "get_python_path", "modutils",
                 "_is_ignored_file", "is_namespace", "discover_package_path"]},
]  # fmt: skip
_EXCEPTIONS = [
    ("TypeError", "unsupported operand type(s) for +: 'NoneType' and 'int'"),
    ("AttributeError", "'{cls}' object has no attribute '{sym}'"),
    ("KeyError", "'{sym}'"),
    ("ValueError", "too many values to unpack (expected 2)"),
    ("IndexError", "list index out of range"),
    ("NameError", "name '{sym}' is not defined"),
    ("AssertionError", "expected 3 items, got 2"),
    ("TypeError", "{func}() got an unexpected keyword argument '{sym}'"),
    ("RecursionError", "maximum recursion depth exceeded while calling a Python object"),
    ("UnboundLocalError", "cannot access local variable '{sym}' where it is not associated with a value"),
    ("ZeroDivisionError", "division by zero"),
    ("TypeError", "'NoneType' object is not iterable"),
]
_CODE = [
    "if objs is None:", "    return []", "fields = [self._meta.get_field(name) for name in fields]",
    "for batch in batches:", "    result = self._execute(batch)", "rows += result", "return rows",
    "key = tuple(sorted(kwargs))", "value = getattr(obj, attr, None)",
    "if not isinstance(value, (list, tuple)):",
    "    value = [value]", "self._cache[key] = value", "raise ValueError(\"invalid value: %r\" % value)",
    "args = self._prepare(args)", "return self.__class__(*args)", "try:", "except KeyError:", "    pass",
    "parts = line.strip().split()", "exp = self._print(expr.exp)", "else:", "    continue",
    "base = self.parenthesize(expr.base, PRECEDENCE['Pow'])", "return r'%s^{%s}' % (base, exp)",
    "dims = [d for d in self.dims if d not in sample_dims]", "url = resp.headers['location']",
    "method = rebuild_method(prepared_request, resp)", "mod_path = modutils.modpath_from_file(path)",
]  # fmt: skip
_EDITS = [
    ("is None", "is not None"), ("len(objs)", "len(objs or [])"), ("return rows", "return rows or 0"),
    ("self._fields", "self.fields"), ("batch_size", "batch_size or 1"), ("+ 1", "+ 0"),
    ("if not value", "if value is None"), ("except KeyError", "except (KeyError, IndexError)"),
    ("[0]", "[-1]"), ("strip()", "strip().lower()"), ("= None", "= []"), ("dims[0]", "dims[-1]"),
    ("parts\\[1:\\]", "parts"), ("PRECEDENCE\\['Pow'\\]", "PRECEDENCE['Mul']"), ("elif", "if"),
]  # fmt: skip
_DARK_ERRORS = [
    ("OCI runtime exec failed: exec failed: unable to start container process: chdir to cwd "
     '("/testbed") set in config.json failed: no such file or directory: unknown', "returncode 126"),
    ("bash: fork: retry: Resource temporarily unavailable\nbash: fork: Resource temporarily unavailable",
     "returncode 254"),
    ("/bin/sh: 1: cannot create /tmp/sh-thd.XXXX: No space left on device", "returncode 2"),
]  # fmt: skip


def _traceback(rng: random.Random, p: dict[str, Any], exc: tuple[str, str], script: str, sym: str) -> str:
    kind, message = exc
    message = message.format(cls=p["cls"], sym=sym, func=p["func"])
    prints = "".join(
        f"DEBUG: {rng.choice(['objs', 'rows', 'value', 'args'])}={rng.randint(0, 40)}\n"
        for _ in range(rng.randint(0, 2))
    )
    return (
        f"{prints}Traceback (most recent call last):\n"
        f'  File "/testbed/{script}", line {rng.randint(5, 60)}, in <module>\n'
        f"    {rng.choice(['main()', 'result = run()', 'check()', 'print(obj.' + p['func'] + '())'])}\n"
        f'  File "/testbed/{p["module"]}", line {rng.randint(80, 2400)}, in {p["func"]}\n'
        f"    {rng.choice(_CODE).strip()}\n{kind}: {message}"
    )


def _pytest(p: dict[str, Any], rng: random.Random, files: list[str], failing: str | None, line: int) -> str:
    count = {f: rng.randint(3, 60) for f in files}
    body = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.9.19, pytest-7.4.4, pluggy-1.5.0",
        "rootdir: /testbed",
        f"collected {sum(count.values())} items",
        "",
    ]
    for f in files:
        dots = "." * count[f]
        if failing and f == p["other"]:
            dots = dots[:2] + "F" + dots[3:]
        body.append(f"{f} {dots}")
    seconds = f"{rng.uniform(0.3, 20):.2f}s"
    if failing is None:
        return "\n".join(
            [
                *body,
                f"============================== {sum(count.values())} passed in {seconds} "
                "==============================",
            ]
        )
    body += [
        "",
        "=================================== FAILURES ===================================",
        f"___________________________ {failing} ___________________________",
        "",
        f"    def {failing}():",
        ">       assert local_setting() == 'UTC'",
        "E       AssertionError: assert 'Europe/Berlin' == 'UTC'",
        "",
        f"{p['other']}:{line}: AssertionError",
        "=========================== short test summary info ============================",
        f"FAILED {p['other']}::{failing} - AssertionError: assert 'Europe/Berlin' == 'UTC'",
        f"========================= 1 failed, {sum(count.values()) - 1} passed in {seconds} "
        "=========================",
    ]
    return "\n".join(body)


def swe(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    p = rng.choice(_SWE)
    pkg, module, func = p["pkg"], p["module"], p["func"]
    style = rng.choice(["sed", "str_replace"])
    symbols = rng.sample(p["symbols"], len(p["symbols"]))
    missing = [f"{s}{rng.choice(['_cache', '_compat', '_legacy', '_v2', 's'])}" for s in symbols]
    errors = rng.sample(_EXCEPTIONS, len(_EXCEPTIONS))
    edits = rng.sample(_EDITS, len(_EDITS))
    where = rng.randint(300, 2000)

    def sh(cmd: str, output: str = "", error: str | None = None) -> None:
        tool = cmd.split()[0]
        t.add(tool, {"cmd": cmd}, output, error)

    def view() -> None:
        start = where + rng.randint(-60, 60)
        size = rng.randint(8, 30)
        lines = "\n".join(f"{n:6d}\t{rng.choice(_CODE)}" for n in range(start, start + size))
        sh(f"nl -ba {module} | sed -n '{start},{start + size - 1}p'", lines)

    def edit() -> None:
        old, new = edits.pop() if edits else (rng.choice(_CODE).strip(), rng.choice(_CODE).strip())
        line = where + rng.randint(-40, 40)
        if style == "sed":
            sh(f"sed -i '{line}s/{old}/{new}/' {module}")
        else:
            t.add(
                "str_replace_editor",
                {
                    "cmd": f"str_replace_editor str_replace /testbed/{module} "
                    f"--old_str '{old.replace(chr(92), '')}' --new_str '{new.replace(chr(92), '')}'"
                },
                "ok",
            )

    def fail(cmd: str, script: str) -> None:
        sh(cmd, _traceback(rng, p, errors.pop(), script, rng.choice(symbols)), "returncode 1")

    sh(
        "ls -la",
        "\n".join(
            [
                "total 192",
                "drwxrwxrwx 1 root root 4096 Jan  4  2025 .",
                f"drwxr-xr-x 1 root root 4096 Jan  4  2025 {pkg}",
                "-rw-r--r-- 1 root root 1532 Jan  4  2025 setup.py",
                "drwxr-xr-x 1 root root 4096 Jan  4  2025 tests",
            ]
        ),
    )
    sh(f'grep -rn "def {func}" {pkg}/', f"{module}:{where}:    def {func}(self, *args, **kwargs):")
    misses = rng.randint(1, 3)
    for _ in range(rng.randint(2, 8) if stuck else rng.randint(4, 18)):
        roll = rng.random()
        if roll < 0.35:
            view()
        elif roll < 0.6 and symbols:
            sym = symbols[0]
            symbols.append(symbols.pop(0))
            sh(
                f'grep -rn "{sym}" {pkg}/',
                "\n".join(
                    f"{module}:{rng.randint(50, 2400)}:        {rng.choice(_CODE).strip()}  # {sym}"
                    for _ in range(rng.randint(1, 5))
                ),
            )
        elif roll < 0.85 and misses and missing:
            misses -= 1
            sh(f'grep -rn "{missing.pop()}" {pkg}/', "", "returncode 1")  # a symbol that is not there
        else:
            sh(f"head -n 40 {p['test']}", "\n".join(rng.choice(_CODE) for _ in range(12)))
    sh(
        "cat <<'EOF' > reproduce_issue.py\n"
        f"from {module[:-3].replace('/', '.')} import *\n\ndef main():\n    obj = make_example()\n"
        f"    print(obj.{func}())\n\nmain()\nEOF"
    )
    fail("python reproduce_issue.py", "reproduce_issue.py")
    for _ in range(rng.randint(0, 2)):  # probes, each failing its own way
        name = module[:-3].replace("/", ".")
        probe = f"from {name} import {rng.choice(symbols)}; print({rng.choice(symbols)}({rng.randint(0, 9)}))"
        sh(
            f'python -c "{probe}"',
            _traceback(rng, p, errors.pop(), "<string>", rng.choice(symbols)).replace(
                'File "/testbed/<string>"', 'File "<string>"'
            ),
            "returncode 1",
        )
    if stuck in ("dark_empty", "dark_error"):
        t.stuck_from_here()
        text, label = rng.choice(_DARK_ERRORS) if stuck == "dark_error" else ("", None)
        commands = [
            f"ls -la {pkg}/",
            f'grep -rn "{rng.choice(symbols)}" {pkg}/',
            f"cat {module} | head -50",
            "python reproduce_issue.py",
            "git status",
            f"nl -ba {module} | sed -n '{where},{where + 20}p'",
            f'find . -name "*.py" -path "*{pkg}*" | head',
            f'python -c "import {pkg}; print({pkg}.__version__)"',
            "pwd",
            "which python",
            f"pip show {pkg}",
            "ls /tmp",
            "echo hello",
            f"wc -l {module}",
            f"git log --oneline -3 -- {module}",
            f"python -m pytest {p['test']} -q -x",
        ]
        rng.shuffle(commands)
        for cmd in commands[: rng.randint(12, len(commands))]:
            sh(cmd, text, label)
        return
    cycles = rng.randint(1, 6)
    for cycle in range(cycles):
        if rng.random() < 0.5:
            view()
        edit()
        if cycle < cycles - 1 or stuck == "same_failure":
            fail("python reproduce_issue.py", "reproduce_issue.py")
        else:
            sh("python reproduce_issue.py", f"{func} returned {rng.randint(2, 9)} items\nAll checks passed.")
    if stuck == "same_failure":  # the same test fails the same way after every edit
        cmd = f"python -m pytest {p['test']}::{p['test_name']} -q"
        line = rng.randint(40, 900)
        assertion = f"E       AssertionError: assert {rng.randint(0, 4)} == {rng.randint(5, 9)}"
        seconds = rng.uniform(0.2, 3)

        def run() -> None:
            sh(
                cmd,
                "\n".join(
                    [
                        "F                                                                        [100%]",
                        "=================================== FAILURES ===================================",
                        f"____________________ {p['test_name']} ____________________",
                        "",
                        ">       assert len(result) == expected",
                        assertion,
                        "",
                        f"{p['test']}:{line}: AssertionError",
                        "=========================== short test summary info ============================",
                        f"FAILED {p['test']}::{p['test_name']} - {assertion[8:]}",
                        f"1 failed in {seconds * rng.uniform(0.8, 1.2):.2f}s",
                    ]
                ),
                "returncode 1",
            )

        run()
        t.stuck_from_here()
        for _ in range(rng.randint(6, 12)):
            if rng.random() < 0.3:
                view()
            edit()
            run()
        return
    if rng.random() < 0.75:  # a failure that was there before the change, seen twice
        line = rng.randint(40, 900)
        sh(
            f"python -m pytest {p['test']} {p['other']} -q",
            _pytest(p, rng, [p["test"], p["other"]], p["other_name"], line),
            "returncode 1",
        )
        sh(
            f"git stash && python -m pytest {p['other']} -q; git stash pop",
            "Saved working directory and index state WIP on main\n"
            + _pytest(p, rng, [p["other"]], p["other_name"], line),
            "returncode 1",
        )
    else:
        sh(f"python -m pytest {p['test']} -q", _pytest(p, rng, [p["test"]], None, 0))
    diff = (
        f"diff --git a/{module} b/{module}\n--- a/{module}\n+++ b/{module}\n@@ -{where},7 +{where},7 @@\n"
        f"-    {rng.choice(_CODE).strip()}\n+    {rng.choice(_CODE).strip()}"
    )
    sh("git diff", diff)
    sh("rm reproduce_issue.py")
    sh("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", diff)


# --------------------------------------------------------------------------------------------
# SQL agent (LangChain's SQL toolkit): queries fail with `sql_error` and SQLAlchemy's message in
# the output (no such column, then an ambiguous column, then a misused aggregate), each fixed
# until the query answers. No metric.

_SCHEMA = {
    "customers": "CREATE TABLE customers (\n\tcustomer_id INTEGER NOT NULL, \n\tname TEXT, "
                 "\n\tregion_id INTEGER, "
                 "\n\tsignup_date DATE, \n\tPRIMARY KEY (customer_id)\n)",
    "orders": "CREATE TABLE orders (\n\torder_id INTEGER NOT NULL, \n\tcust_id INTEGER, \n\torder_date DATE, "
              "\n\tstatus TEXT, \n\ttotal NUMERIC(10, 2), \n\tPRIMARY KEY (order_id)\n)",
    "order_items": "CREATE TABLE order_items (\n\torder_id INTEGER, \n\tproduct_id INTEGER, "
                   "\n\tquantity INTEGER, "
                   "\n\tunit_price NUMERIC(10, 2)\n)",
    "products": "CREATE TABLE products (\n\tproduct_id INTEGER NOT NULL, \n\tname TEXT, \n\tcategory TEXT, "
                "\n\tprice NUMERIC(10, 2), \n\tPRIMARY KEY (product_id)\n)",
    "regions": "CREATE TABLE regions (\n\tregion_id INTEGER NOT NULL, \n\tname TEXT, "
               "\n\tPRIMARY KEY (region_id)\n)",
}  # fmt: skip
_REGION_NAMES = ["EMEA", "North America", "LATAM", "APAC", "Nordics", "DACH"]
_CATEGORIES = ["Outdoor", "Kitchen", "Electronics", "Garden", "Toys", "Office", "Apparel"]
# Each question: the tables it needs, its failing drafts in order, the query that works, a row maker.
_QUESTIONS: list[tuple[str, list[str], list[tuple[str, str]], str, str]] = [
    ("revenue by region in 2023", ["orders", "customers", "regions"], [
        ("SELECT c.region, SUM(o.total) FROM orders o JOIN customers c ON o.cust_id = c.customer_id "
         "WHERE o.order_date LIKE '2023%' GROUP BY c.region", "no such column: c.region"),
        ("SELECT name, SUM(o.total) FROM orders o JOIN customers c ON o.cust_id = c.customer_id "
         "JOIN regions r ON c.region_id = r.region_id WHERE o.order_date LIKE '2023%' GROUP BY name",
         "ambiguous column name: name"),
        ("SELECT r.name, SUM(o.total) FROM orders o JOIN customers c ON o.cust_id = c.customer_id "
         "JOIN regions r ON c.region_id = r.region_id WHERE SUM(o.total) > 0 GROUP BY r.name",
         "misuse of aggregate: SUM()")],
     "SELECT r.name, ROUND(SUM(o.total), 2) AS revenue FROM orders o JOIN customers c ON o.cust_id = "
     "c.customer_id JOIN regions r ON c.region_id = r.region_id WHERE o.order_date LIKE '2023%' "
     "GROUP BY r.name ORDER BY revenue DESC", "region"),
    ("top 5 products by units sold", ["order_items", "products"], [
        ("SELECT p.product_name, SUM(oi.quantity) FROM order_items oi JOIN products p ON oi.product_id = "
         "p.product_id GROUP BY p.product_name ORDER BY 2 DESC LIMIT 5", "no such column: p.product_name"),
        ("SELECT name, SUM(quantity) AS units FROM order_items oi JOIN products p ON oi.product_id = "
         "p.product_id GROUP BY product_id ORDER BY units DESC LIMIT 5", "ambiguous column name: product_id"),
        ("SELECT p.name, SUM(oi.quantity) AS units FROM order_items oi JOIN products p ON oi.product_id = "
         "p.product_id WHERE SUM(oi.quantity) > 10 GROUP BY p.name ORDER BY units DESC LIMIT 5",
         "misuse of aggregate: SUM()")],
     "SELECT p.name, SUM(oi.quantity) AS units FROM order_items oi JOIN products p ON oi.product_id = "
     "p.product_id GROUP BY p.product_id, p.name ORDER BY units DESC LIMIT 5", "product"),
    ("average order value per category", ["orders", "order_items", "products"], [
        ("SELECT p.category, AVG(o.order_total) FROM orders o "
         "JOIN order_items oi ON o.order_id = oi.order_id "
         "JOIN products p ON oi.product_id = p.product_id GROUP BY p.category",
         "no such column: o.order_total"),
        ("SELECT category, AVG(total) FROM orders o JOIN order_items oi ON o.order_id = oi.order_id "
         "JOIN products p ON oi.product_id = p.product_id GROUP BY order_id",
         "ambiguous column name: order_id"),
        ("SELECT p.category, AVG(SUM(oi.quantity * oi.unit_price)) FROM order_items oi JOIN products p ON "
         "oi.product_id = p.product_id GROUP BY p.category", "misuse of aggregate function SUM()")],
     "SELECT p.category, ROUND(AVG(oi.quantity * oi.unit_price), 2) AS avg_value FROM order_items oi "
     "JOIN products p ON oi.product_id = p.product_id GROUP BY p.category ORDER BY avg_value DESC",
     "category"),
    ("customers who signed up in 2024 and ordered more than twice", ["customers", "orders"], [
        ("SELECT c.name, COUNT(*) FROM customers c JOIN orders o ON o.customer_id = c.customer_id "
         "WHERE c.signup_date >= '2024-01-01' GROUP BY c.name HAVING COUNT(*) > 2",
         "no such column: o.customer_id"),
        ("SELECT name, COUNT(order_id) FROM customers c JOIN orders o ON o.cust_id = c.customer_id "
         "JOIN regions r ON c.region_id = r.region_id WHERE signup_date >= '2024-01-01' GROUP BY name",
         "ambiguous column name: name"),
        ("SELECT c.name, COUNT(o.order_id) AS n FROM customers c JOIN orders o ON o.cust_id = c.customer_id "
         "WHERE c.signup_date >= '2024-01-01' AND COUNT(o.order_id) > 2 GROUP BY c.name",
         "misuse of aggregate: COUNT()")],
     "SELECT c.name, COUNT(o.order_id) AS n FROM customers c JOIN orders o ON o.cust_id = c.customer_id "
     "WHERE c.signup_date >= '2024-01-01' GROUP BY c.customer_id, c.name HAVING n > 2 ORDER BY n DESC",
     "customer"),
    ("monthly order count for the last quarter", ["orders"], [
        ("SELECT strftime('%Y-%m', created_at), COUNT(*) FROM orders WHERE created_at >= '2024-04-01' "
         "GROUP BY 1", "no such column: created_at")],
     "SELECT strftime('%Y-%m', order_date) AS month, COUNT(*) FROM orders WHERE order_date >= '2024-04-01' "
     "GROUP BY month ORDER BY month", "month"),
    ("share of cancelled orders by region", ["orders", "customers", "regions"], [
        ("SELECT r.name, AVG(o.cancelled) FROM orders o JOIN customers c ON o.cust_id = c.customer_id "
         "JOIN regions r ON c.region_id = r.region_id GROUP BY r.name", "no such column: o.cancelled"),
        ("SELECT name, AVG(status = 'cancelled') FROM orders o JOIN customers c ON o.cust_id = c.customer_id "
         "JOIN regions r ON c.region_id = r.region_id GROUP BY name", "ambiguous column name: name")],
     "SELECT r.name, ROUND(AVG(o.status = 'cancelled'), 3) AS share FROM orders o JOIN customers c ON "
     "o.cust_id = c.customer_id JOIN regions r ON c.region_id = r.region_id GROUP BY r.name", "share"),
]  # fmt: skip


def _sql_error(query: str, message: str) -> str:
    return (
        f"Error: (sqlite3.OperationalError) {message}\n[SQL: {query}]\n"
        "(Background on this error at: https://sqlalche.me/e/20/e3q8)"
    )


def _rows(rng: random.Random, kind: str) -> str:
    if kind == "region":
        rows = [(name, round(rng.uniform(1e4, 9e5), 2)) for name in rng.sample(_REGION_NAMES, 4)]
    elif kind == "share":
        rows = [(name, round(rng.uniform(0.01, 0.2), 3)) for name in rng.sample(_REGION_NAMES, 4)]
    elif kind == "product":
        rows = [
            (f"{rng.choice(['Alpine', 'Urban', 'Classic'])} {rng.choice(_PRODUCTS)}", rng.randint(40, 900))
            for _ in range(5)
        ]
    elif kind == "category":
        rows = [(c, round(rng.uniform(10, 300), 2)) for c in rng.sample(_CATEGORIES, 5)]
    elif kind == "customer":
        rows = [(" ".join(person(rng)), rng.randint(3, 12)) for _ in range(rng.randint(2, 8))]
    else:
        rows = [(f"2024-{m:02d}", rng.randint(200, 4000)) for m in (4, 5, 6)]
    return repr(rows)


def _sample_rows(rng: random.Random, table: str, count: int, *, tuples: bool = False) -> str:
    columns = [c.split()[0] for c in _SCHEMA[table].split("\n")[1:] if c.strip()[:1].islower()]
    rows = []
    for n in range(count):
        row: list[Any] = []
        for column in columns:
            if column.endswith("_id"):
                row.append(rng.randint(1, 5000))
            elif column.endswith("date"):
                row.append(f"202{rng.randint(2, 4)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
            elif column in ("total", "price", "unit_price"):
                row.append(round(rng.uniform(3, 900), 2))
            elif column == "quantity":
                row.append(rng.randint(1, 12))
            elif column == "status":
                row.append(rng.choice(["shipped", "delivered", "cancelled", "pending"]))
            elif column == "category":
                row.append(rng.choice(_CATEGORIES))
            elif table == "regions":
                row.append(_REGION_NAMES[n % len(_REGION_NAMES)])
            else:
                row.append(
                    " ".join(person(rng)) if table == "customers" else f"Classic {rng.choice(_PRODUCTS)}"
                )
        rows.append(row)
    if tuples:
        return repr([tuple(r) for r in rows])
    return "\t".join(columns) + "\n" + "\n".join("\t".join(str(v) for v in r) for r in rows)


def sql_agent(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    t.add("sql_db_list_tables", {}, ", ".join(sorted(_SCHEMA)))
    known: set[str] = set()
    peeks: dict[str, str] = {}
    questions = rng.sample(_QUESTIONS, len(_QUESTIONS))
    count = rng.randint(1, 2) if stuck else rng.randint(3, 6)
    for number, (_, tables, drafts, good, rows) in enumerate(questions[:count]):
        new = [name for name in tables if name not in known]
        if new and rng.random() < 0.8:
            sample = "\n\n".join(
                f"{_SCHEMA[n]}\n\n/*\n3 rows from {n} table:\n{_sample_rows(rng, n, 3)}\n*/" for n in new
            )
            t.add("sql_db_schema", {"table_names": ", ".join(new)}, sample)
            known.update(new)
        if stuck and number == count - 1:
            break
        if rng.random() < 0.35:  # a look at the data first (the same rows each time)
            table = rng.choice(tables)
            if table not in peeks:
                peeks[table] = _sample_rows(rng, table, 5, tuples=True)
            t.add("sql_db_query", {"query": f"SELECT * FROM {table} LIMIT 5"}, peeks[table])
        for query, message in drafts[: rng.randint(0, len(drafts))]:
            if rng.random() < 0.3:
                t.add("sql_db_query_checker", {"query": query}, query)
            t.add("sql_db_query", {"query": query}, _sql_error(query, message), "sql_error")
        t.add("sql_db_query", {"query": good}, _rows(rng, rows))
    if stuck is None:
        return
    # same_error: the failing column is never looked up; the query is reworded around it
    _, tables, drafts, good, _ = questions[count - 1]
    query, message = drafts[0]
    t.add("sql_db_query", {"query": query}, _sql_error(query, message), "sql_error")
    t.stuck_from_here()
    for _ in range(rng.randint(5, 9)):
        variant = query
        if rng.random() < 0.5:
            variant = variant.replace(" GROUP BY", " AND 1 = 1 GROUP BY") if " WHERE " in variant else variant
        variant += rng.choice(["", " ORDER BY 2 DESC", " ORDER BY 1", " LIMIT 10", " LIMIT 50"])
        if rng.random() < 0.4:
            variant = variant.replace("SELECT ", "SELECT DISTINCT ", 1)
        if rng.random() < 0.3:
            t.add("sql_db_query_checker", {"query": variant}, variant)
        t.add("sql_db_query", {"query": variant}, _sql_error(variant, message), "sql_error")


# --------------------------------------------------------------------------------------------
# WebShop agent (ReAct): search, click items, options (some rejected first), back to the results,
# buy. No metric.

_SHOP: list[tuple[str, list[str], dict[str, list[str]]]] = [
    ("women's loose-fitting tankini swimsuit",
     ["Tankini Swimsuit for Women Tummy Control", "Womens Rhinestone Bikini Set",
     "Two Piece Tankini Top with Boyshorts", "Plus Size Swimdress Slimming"],
     {"size": ["small", "medium", "large", "x-large"], "color": ["black", "pink", "blue", "green-2"]}),
    ("long lasting eau de toilette 3.4 fl oz",
     ["Eau de Toilette Spray for Men", "Citrus Cologne Long Lasting",
     "Travel Size Perfume Set", "Woody Fragrance Mist"],
     {"size": ["1.7 fl oz", "3.4 fl oz (pack of 1)", "6.76 fl oz"], "scent": ["citrus", "woody", "fresh"]}),
    ("gluten free high protein snack bars",
     ["Protein Bars Variety Pack Gluten Free", "Keto Snack Bars Low Sugar",
     "Peanut Butter Protein Bites", "Vegan Energy Bars"],
     {"flavor name": ["chocolate", "peanut butter", "cookie dough"],
      "size": ["12 count (pack of 1)", "24 count"]}),
    ("wireless noise cancelling earbuds", ["Bluetooth 5.3 Earbuds with ANC", "Sport Wireless Earphones",
     "True Wireless Earbuds Charging Case", "Kids Headphones Volume Limited"],
     {"color": ["black", "white", "navy"], "style": ["standard", "pro"]}),
    ("solid wood bedside table with drawer", ["Nightstand with Drawer Solid Wood", "Rattan Bedside Table",
     "Floating Nightstand Set of 2", "Industrial End Table"],
     {"color": ["walnut", "white", "natural"], "size": ["1 drawer", "2 drawers"]}),
]  # fmt: skip


def webshop(t: Tape, stuck: str | None) -> None:
    """A shopping list of one to three things, bought one after another; the twin's last one goes wrong."""
    specs = t.rng.sample(_SHOP, t.rng.randint(1, 3) if stuck is None else t.rng.randint(1, 2))
    for number, spec in enumerate(specs):
        _purchase(t, spec, stuck if number == len(specs) - 1 else None)


def _purchase(t: Tape, spec: tuple[str, list[str], dict[str, list[str]]], stuck: str | None) -> None:
    rng = t.rng
    want, titles, options = spec
    budget = rng.choice([30, 40, 50, 100])
    items = [(f"B0{code(rng, 8)}", title, round(rng.uniform(8, budget * 1.4), 2)) for title in titles * 2]
    rng.shuffle(items)
    results = "[Back to Search] \nPage 1 (Total results: 50) \n[Next >] \n" + "".join(
        f"[{asin}] \n{title} \n${price} \n" for asin, title, price in items[:10]
    )
    pages: dict[str, str] = {}
    offered: dict[str, dict[str, list[str]]] = {}
    for asin, title, price in items:
        offer = {k: rng.sample(v, rng.randint(2, len(v))) for k, v in options.items()}
        if stuck:  # the twin's items lack an option of the first kind the customer asks for
            group, wanted = next(iter(options.items()))
            offer[group] = rng.sample(wanted, len(wanted) - 1)
        offered[asin] = offer
        pages[asin] = (
            "[Back to Search] \n[< Prev] \n"
            + "".join(f"{k} " + "".join(f"[{o}]" for o in opts) + " \n" for k, opts in offer.items())
            + f"{title} \nPrice: ${price} \nRating: N.A. \n[Description] \n[Features] \n[Reviews] \n[Buy Now]"
        )
    t.add("search", {"cmd": f"search[{want}]"}, results)
    if rng.random() < 0.6:
        t.add(
            "think",
            {
                "cmd": f"think[{items[0][0]} and {items[1][0]} look like {want}. I can check "
                f"{items[0][0]} first.]"
            },
            "OK.",
        )
    seen = 0
    for _ in range(rng.randint(0, 3)):  # back to the results a few times
        asin = items[seen][0]
        t.add("click", {"cmd": f"click[{asin}]"}, pages[asin])
        if rng.random() < 0.3:
            t.add(
                "click",
                {"cmd": "click[Description]"},
                f"[Back to Search] \n[< Prev] \n{items[seen][1]}. "
                + " ".join(report_sentence(rng) for _ in range(2)),
            )
            t.add("click", {"cmd": "click[< Prev]"}, pages[asin])
        t.add("click", {"cmd": "click[< Prev]"}, results)
        seen += 1
    asin = items[seen][0]
    t.add("click", {"cmd": f"click[{asin}]"}, pages[asin])
    if rng.random() < 0.5:
        t.add(
            "think",
            {"cmd": f"think[The item has options {', '.join(offered[asin])} and seems good to buy.]"},
            "OK.",
        )
    rejected = False
    for group, opts in offered[asin].items():
        missing = [o for o in options[group] if o not in opts]
        if missing and (stuck or rng.random() < 0.35):  # an option this item does not have
            bad = missing[0]
            t.add("click", {"cmd": f"click[{bad}]"}, "Invalid action!", "invalid_action")
            if stuck and not rejected:
                rejected = True
                t.stuck_from_here()
                stretch = len(t) + rng.randint(10, 20)
                while len(t) < stretch:  # option_loop: the same option, back, the same item, again
                    roll = rng.random()
                    if roll < 0.3:
                        t.add(
                            "think",
                            {
                                "cmd": rng.choice(
                                    [
                                        f"think[I need the {bad} option. Let me click it.]",
                                        f"think[The {bad} option should be available. I will try again.]",
                                        f"think[Maybe I need to go back and select {bad} again.]",
                                    ]
                                )
                            },
                            "OK.",
                        )
                    elif roll < 0.45:
                        t.add("click", {"cmd": "click[< Prev]"}, results)
                        t.add("click", {"cmd": f"click[{asin}]"}, pages[asin])
                    else:
                        t.add("click", {"cmd": f"click[{bad}]"}, "Invalid action!", "invalid_action")
                return
            t.add(
                "think",
                {
                    "cmd": f"think[The '{bad}' option is not available for this item. I will choose "
                    f"'{opts[0]}' instead.]"
                },
                "OK.",
            )
        t.add("click", {"cmd": f"click[{opts[0]}]"}, f"You have clicked {opts[0]}.")
    t.add(
        "click",
        {"cmd": "click[Buy Now]"},
        f"Your score (min 0.0, max 1.0): {rng.choice([0.5, 0.75, 0.83, 1.0])}",
    )


# --------------------------------------------------------------------------------------------
# ALFWorld household agent (ReAct): go to / open / take / put, `think` between, succeeding. No metric.

_RECEPTACLES = (
    [f"cabinet {i}" for i in range(1, 11)] + [f"countertop {i}" for i in range(1, 4)]
    + [f"drawer {i}" for i in range(1, 6)] + [f"shelf {i}" for i in range(1, 4)]
    + ["fridge 1", "microwave 1", "sinkbasin 1", "stoveburner 1", "stoveburner 2", "garbagecan 1",
       "diningtable 1", "coffeemachine 1", "toaster 1"]
)  # fmt: skip
_CLOSED = ("cabinet", "drawer", "fridge", "microwave")
_THINGS = [
    "apple",
    "bread",
    "butterknife",
    "cup",
    "dishsponge",
    "egg",
    "fork",
    "kettle",
    "knife",
    "lettuce",
    "mug",
    "pan",
    "peppershaker",
    "plate",
    "pot",
    "potato",
    "saltshaker",
    "soapbottle",
    "spatula",
    "spoon",
    "tomato",
    "winebottle",
]
_TASKS = {
    "clean": ("sinkbasin 1", "clean"),
    "heat": ("microwave 1", "heat"),
    "cool": ("fridge 1", "cool"),
    "place": (None, None),
}


def _listing_of(things: list[str]) -> str:
    if not things:
        return "nothing"
    named = [f"a {x}" for x in things]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + f", and {named[-1]}"


def alfworld(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    task = rng.choice(sorted(_TASKS))
    target = rng.choice(_THINGS)
    place = rng.choice(["countertop 1", "diningtable 1", "shelf 1", "cabinet 4", "drawer 2", "countertop 3"])
    tool_place, verb = _TASKS[task]
    rooms = rng.sample(_RECEPTACLES, len(_RECEPTACLES))
    contents = {
        r: [f"{x} {rng.randint(1, 3)}" for x in rng.sample(_THINGS, rng.randint(0, 3)) if x != target]
        for r in rooms
    }
    searched = rng.randint(2, 14)
    where_found = rooms[searched]
    obj = f"{target} {rng.randint(1, 3)}"
    contents[where_found].append(obj)
    locs = dict(zip(rooms, rng.sample(range(1, 60), len(rooms)), strict=True))
    opened: set[str] = set()
    holding: str | None = None

    def act(cmd: str, output: str) -> None:
        t.add(cmd.split()[0].rstrip(":"), {"cmd": cmd}, output)

    def go(r: str) -> None:
        if r.startswith(_CLOSED) and r not in opened:
            act(f"go to {r}", f"You arrive at loc {locs[r]}. The {r} is closed.")
            opened.add(r)
            act(f"open {r}", f"You open the {r}. The {r} is open. In it, you see {_listing_of(contents[r])}.")
        else:
            act(f"go to {r}", f"You arrive at loc {locs[r]}. On the {r}, you see {_listing_of(contents[r])}.")

    act(
        "think: "
        + f"To solve the task, I need to find and take a {target}, "
        + (f"then {verb} it with {tool_place}, " if verb else "")
        + f"then put it in/on {place}.",
        "OK.",
    )
    act(
        f"think: First I need to find a {target}. A {target} is more likely to appear in "
        f"{', '.join(rooms[:4])}. I can check one by one.",
        "OK.",
    )
    for r in rooms[:searched]:
        go(r)
        if rng.random() < 0.1:
            act(f"take {target} 1 from {r}", "Nothing happens.")
        if r.startswith(_CLOSED) and rng.random() < 0.3:
            act(f"close {r}", f"You close the {r}.")
    if stuck == "idle":
        t.stuck_from_here()
        here = rooms[searched - 1]
        looks = {
            "look": f"You are facing the {here}. Next to it, you see nothing.",
            "inventory": "You are not carrying anything.",
            f"examine {here}": f"On the {here}, you see {_listing_of(contents[here])}.",
        }
        stretch = len(t) + rng.randint(15, 30)
        while len(t) < stretch:  # idling: the same few observations over and over
            if rng.random() < 0.2:
                act(
                    rng.choice(
                        [
                            f"think: I need to find a {target}.",
                            f"think: Where could the {target} be?",
                            "think: Let me look around again.",
                        ]
                    ),
                    "OK.",
                )
            else:
                cmd = rng.choice(sorted(looks))
                act(cmd, looks[cmd])
        return
    go(where_found)
    act(f"think: Now I find a {target} ({obj}). Next, I need to take it.", "OK.")
    contents[where_found].remove(obj)
    act(f"take {obj} from {where_found}", f"You pick up the {obj} from the {where_found}.")
    holding = obj
    if tool_place is not None:
        act(f"think: Now I take a {target} ({obj}). Next, I need to go to {tool_place} and {verb} it.", "OK.")
        go(tool_place)
        act(f"{verb} {holding} with {tool_place}", f"You {verb} the {holding} using the {tool_place}.")
    act(f"think: Now I {verb or 'take'} a {target}. Next, I need to put it in/on {place}.", "OK.")
    go(place)
    act(f"put {holding} in/on {place}", f"You put the {holding} in/on the {place}.")


# --------------------------------------------------------------------------------------------
# QA agent (ReAct, HotpotQA / FEVER style): searches and lookups over different entities, a few
# failed lookups of different things, one question after another. No metric.

_OCCUPATIONS = [
    "film director",
    "novelist",
    "footballer",
    "composer",
    "physicist",
    "painter",
    "architect",
    "politician",
    "actress",
    "chemist",
]
_NATIONS = [
    "American",
    "Swedish",
    "Brazilian",
    "Nigerian",
    "Japanese",
    "Polish",
    "Canadian",
    "Italian",
    "Indian",
]
_WORKS = [
    "The Silent Harbour",
    "Northern Lights",
    "A Year in Ash",
    "Glass Rivers",
    "The Last Orchard",
    "Paper Moons",
    "Iron Meadow",
    "Salt and Smoke",
    "The Long Winter",
    "Blue Hours",
]


def _entity(rng: random.Random) -> tuple[str, str, list[str]]:
    first, last = person(rng)
    name = f"{first} {last}"
    work = rng.choice(_WORKS)
    year = rng.randint(1900, 1995)
    sentences = [
        f"{name} (born {rng.randint(1, 28)} {rng.choice(['March', 'June', 'October', 'January'])} {year}) "
        f"is a {rng.choice(_NATIONS)} {rng.choice(_OCCUPATIONS)}.",
        f"{name} is best known for {work} ({year + rng.randint(20, 40)}).",
        f"In {year + rng.randint(15, 45)}, {last} moved to {rng.choice(CITIES)}, where {last} worked for "
        f"{rng.randint(2, 20)} years.",
        f"{last} received the {rng.choice(['Golden Bear', 'Nordic Prize', 'Order of Merit', 'Booker'])} in "
        f"{year + rng.randint(30, 60)}.",
    ]
    return name, work, sentences


def qa(t: Tape, stuck: str | None) -> None:
    rng = t.rng
    total = rng.randint(3, 8) if stuck is None else rng.randint(1, 3)
    absent = rng.sample(
        [
            "spouse",
            "married",
            "died",
            "sequel",
            "debut album",
            "siblings",
            "retired",
            "Oscar",
            "education",
            "children",
            "nominated",
            "remake",
            "hometown",
            "box office",
        ],
        14,
    )
    for number in range(1, total + 1):
        hops = [_entity(rng) for _ in range(rng.randint(1, 3))]
        last_one = number == total
        if stuck and last_one:  # reword_search: one failing search asked again in other words, 4-6 times
            name, work, _ = hops[0]
            similar = [
                f"{name.split()[0]} {rng.choice(LAST)}",
                f"{work} (film)",
                f"{work} (novel)",
                f"{name.split()[1]} (surname)",
            ]
            tails = rng.sample(
                [
                    "actress",
                    f"{work}",
                    "born",
                    "biography",
                    "career",
                    "filmography",
                    "awards",
                    f"{rng.choice(_NATIONS)} {rng.choice(_OCCUPATIONS)}",
                    "early life",
                ],
                6,
            )
            t.stuck_from_here()
            for tail in tails[: rng.randint(4, 6)]:
                query = rng.choice([f"{name} {tail}", f"{tail} {name}"])
                t.add(
                    "search",
                    {"cmd": f"Search[{query}]"},
                    f"Could not find [{query}]. Similar: {similar!r}.",
                    "not_found",
                )
            return
        for name, work, sentences in hops:
            if rng.random() < 0.2:  # not found: a similar title, then the right one
                t.add(
                    "search",
                    {"cmd": f"Search[{name} ({rng.choice(_OCCUPATIONS)})]"},
                    f"Could not find [{name}]. Similar: ['{name}', '{work}', '{name.split()[1]} (surname)'].",
                    "not_found",
                )
            t.add("search", {"cmd": f"Search[{name}]"}, " ".join(sentences))
            if rng.random() < 0.5:
                if absent and rng.random() < 0.25:  # something the page does not say
                    t.add("lookup", {"cmd": f"Lookup[{absent.pop()}]"}, "No more results.", "not_found")
                else:  # a detail of the page: the city, the work, the prize
                    sentence = rng.choice(sentences[1:])
                    names = [w.strip(".,()") for w in sentence.split()[1:] if w[:1].isupper()]
                    keyword = rng.choice([w for w in names if w not in ("The", "In", "A")] or [work])
                    hit = [s for s in sentences if keyword in s]
                    t.add("lookup", {"cmd": f"Lookup[{keyword}]"}, f"(Result 1 / {len(hit)}) {hit[0]}")
        answer = rng.choice([hops[-1][1], hops[-1][0], str(rng.randint(1920, 2020)), "yes", "no"])
        t.add("finish", {"cmd": f"Finish[{answer}]"}, f"Episode finished, reward = {rng.choice([0, 1, 1])}")


# --------------------------------------------------------------------------------------------
# The kinds, the replay and the table

KINDS: tuple[Kind, ...] = (
    Kind("pager", "reads a report page after page, notes between", "pages read", pager,
         ("back_and_forth", "flat_identical")),
    Kind("pager_single", "the pager, one action a heartbeat", "pages read", pager,
         ("back_and_forth", "flat_identical"), single=True),
    Kind("crawler", "fetches numbered URLs, stores each, the odd 503 retried", "pages stored", crawler,
         ("flat_identical",)),
    Kind("feed", "polls since=<timestamp>, marks each batch read", "items ingested", feed,
         ("flat_identical",)),
    Kind("queue", "claims tickets, answers and closes them by id", "tickets closed", queue_worker,
         ("flat_identical",)),
    Kind("writer", "writes numbered sections answered ok", "sections written", writer, ("flat_identical",)),
    Kind("research", "searches and fetches across sites, some refuse or time out", "sources saved", research,
         ("wander",)),
    Kind("airline", "tau-bench airline: searches over dates, a change of mind, booking", None, airline,
         ("payment_retry",)),
    Kind("retail", "tau-bench retail: orders by id, modify, return, exchange, cancel", None, retail,
         ("reshuffle_error",)),
    Kind("telecom", "tau2 telecom: account lookups, device checks, backend fixes", None, telecom,
         ("device_cycle",)),
    Kind("swe", "coding agent: different failures while debugging, until it passes", None, swe,
         ("same_failure", "dark_empty", "same_failure", "dark_error")),
    Kind("sql", "SQL agent: queries fixed error after error until they answer", None, sql_agent,
         ("same_error",)),
    Kind("webshop", "ReAct WebShop: search, items, options, back, buy", None, webshop, ("option_loop",)),
    Kind("alfworld", "ReAct ALFWorld: go to, open, take, put, think", None, alfworld, ("idle",)),
    Kind("qa", "ReAct QA: searches and lookups over different entities", None, qa, ("reword_search",)),
)  # fmt: skip


@dataclass
class Outcome:
    run: Run
    summary: TraceSummary
    file: Path
    per_heartbeat: int

    def at(self, anomaly: dict[str, Any]) -> int:
        """The action an anomaly speaks for: its own, or its heartbeat's last (``no_progress``)."""
        if anomaly["action"] is not None:
            return int(anomaly["action"])
        per = 1 if self.run.kind.single else self.per_heartbeat
        return min(int(anomaly["tick"]) * per, len(self.run.tape))

    @property
    def flagged(self) -> bool:
        """Any anomaly (a healthy run), or one at or after the onset (a stuck twin)."""
        onset = self.run.tape.onset or 1
        return any(self.at(a) >= onset for a in self.summary.anomalies)

    @property
    def flagged_early(self) -> bool:
        """A stuck twin flagged on its healthy stretch, before the onset."""
        onset = self.run.tape.onset
        return onset is not None and any(self.at(a) < onset for a in self.summary.anomalies)

    @property
    def escalated(self) -> bool:
        return self.summary.escalated is not None

    @property
    def delay(self) -> int | None:
        """Actions from the onset to the escalation (a stuck twin that escalated)."""
        if self.summary.escalated is None or self.run.tape.onset is None:
            return None
        return int(self.summary.escalated["action"]) - self.run.tape.onset


def write(run: Run, folder: Path, per_heartbeat: int) -> Path:
    path = folder / f"{run.name}.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for line in run.lines(per_heartbeat):
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def replay(path: Path, config: HeartbeatConfig) -> TraceSummary:
    """What ``heartbeat replay`` makes of one file (the folder replay's own summary of it)."""
    summary = summarize_trace(path, config)
    if summary.error:
        raise SystemExit(f"{path}: not a valid trace: {summary.error}")
    return summary


def run_all(
    seed: int, runs: int, per_heartbeat: int, folder: Path, kinds: tuple[Kind, ...] = KINDS
) -> list[Outcome]:
    """Generate, write and replay every run; the outcomes in order (kind by kind, healthy first)."""
    folder.mkdir(parents=True, exist_ok=True)
    ours = re.compile(rf"({'|'.join(k.name for k in KINDS)})__(healthy|stuck)_\d+(_[a-z_]+)?\.jsonl")
    for old in folder.iterdir():  # this script's files of an earlier run, nothing else
        if ours.fullmatch(old.name) and old.is_file():
            old.unlink()
    config = HeartbeatConfig(base_dir=folder)  # the defaults, as `heartbeat replay` without a config
    outcomes = []
    for kind in kinds:
        patterns = ["healthy"] * runs + [kind.stuck[i % len(kind.stuck)] for i in range(STUCK_TWINS)]
        for index, pattern in enumerate(patterns):
            number = index if pattern == "healthy" else index - runs
            run = generate(kind, seed, pattern, number)
            path = write(run, folder, per_heartbeat)
            outcomes.append(Outcome(run, replay(path, config), path, per_heartbeat))
    return outcomes


def _of(part: list[Outcome], test: Callable[[Outcome], bool]) -> str:
    return f"{sum(1 for o in part if test(o))} of {len(part)}"


def _delay(part: list[Outcome]) -> str:
    delays = [d for o in part if (d := o.delay) is not None]
    return f"{statistics.median(delays):g}" if delays else "-"


def report(outcomes: list[Outcome], seed: int, runs: int, per_heartbeat: int, folder: Path) -> list[str]:
    """The printed report: the table, flagged healthy runs, stuck twins never flagged."""
    kinds = list(dict.fromkeys(o.run.kind for o in outcomes))
    lines = [
        f"synthetic agent runs: seed {seed}, {runs} healthy runs and {STUCK_TWINS} stuck twins per kind, "
        f"{per_heartbeat} actions a heartbeat (pager_single: 1), default config",
        f"traces in {folder}",
        "",
    ]
    head = (
        "kind",
        "metric",
        "healthy flagged",
        "healthy escalated",
        "stuck flagged",
        "stuck escalated",
        "stuck flagged early",
        "median delay",
    )
    rows: list[tuple[str, ...]] = []
    for kind in kinds:
        healthy = [o for o in outcomes if o.run.kind is kind and o.run.healthy]
        stuck = [o for o in outcomes if o.run.kind is kind and not o.run.healthy]
        rows.append(
            (
                kind.name,
                kind.metric or "-",
                _of(healthy, lambda o: o.flagged),
                _of(healthy, lambda o: o.escalated),
                _of(stuck, lambda o: o.flagged),
                _of(stuck, lambda o: o.escalated),
                _of(stuck, lambda o: o.flagged_early),
                _delay(stuck),
            )
        )
    healthy = [o for o in outcomes if o.run.healthy]
    stuck = [o for o in outcomes if not o.run.healthy]
    rows.append(
        (
            "all",
            "",
            _of(healthy, lambda o: o.flagged),
            _of(healthy, lambda o: o.escalated),
            _of(stuck, lambda o: o.flagged),
            _of(stuck, lambda o: o.escalated),
            _of(stuck, lambda o: o.flagged_early),
            _delay(stuck),
        )
    )
    lines += _table(head, rows)
    lines += ["", "stuck twins by pattern:"]
    patterns: dict[tuple[str, str], list[Outcome]] = {}
    for o in stuck:
        patterns.setdefault((o.run.kind.name, o.run.pattern), []).append(o)
    lines += _table(
        ("kind", "pattern", "flagged", "escalated", "median delay"),
        [
            (k, p, _of(part, lambda o: o.flagged), _of(part, lambda o: o.escalated), _delay(part))
            for (k, p), part in patterns.items()
        ],
    )
    flagged = [o for o in healthy if o.flagged]
    lines += ["", f"healthy runs flagged: {len(flagged)}"]
    for o in flagged:
        counts = Counter(a["kind"] for a in o.summary.anomalies)
        first = o.summary.anomalies[0]
        lines.append(
            f"  {o.file.name}: {', '.join(f'{k} x{n}' for k, n in counts.items())}"
            f"{'  ESCALATED' if o.escalated else ''}"
        )
        lines.append(f"      first at action {o.at(first)}: {first['kind']}: {_short(first['message'])}")
    missed = [o for o in stuck if not o.flagged]
    lines += ["", f"stuck twins never flagged after their onset: {len(missed)}"]
    lines += [f"  {o.file.name} (onset at action {o.run.tape.onset} of {len(o.run.tape)})" for o in missed]
    return lines


def _short(text: str, width: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*head), fmt.format(*("-" * w for w in widths)), *(fmt.format(*r) for r in rows)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})"
    )
    parser.add_argument("--runs", type=int, default=30, help="healthy runs per kind (default 30)")
    parser.add_argument("--per-heartbeat", type=int, default=5, help="actions a heartbeat (default 5)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the traces (default: <tmp>/heartbeat-synthetic/seed<N>-per<M>)",
    )
    parser.add_argument(
        "--kind", action="append", choices=[k.name for k in KINDS], help="only this kind (repeatable)"
    )
    args = parser.parse_args(argv)
    if args.runs < 0 or args.per_heartbeat < 1:
        parser.error("--runs must be >= 0 and --per-heartbeat >= 1")
    folder = (
        args.out
        or Path(tempfile.gettempdir()) / "heartbeat-synthetic" / f"seed{args.seed}-per{args.per_heartbeat}"
    )
    kinds = tuple(k for k in KINDS if not args.kind or k.name in args.kind)
    outcomes = run_all(args.seed, args.runs, args.per_heartbeat, folder, kinds)
    print("\n".join(report(outcomes, args.seed, args.runs, args.per_heartbeat, folder)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
