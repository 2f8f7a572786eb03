"""The offline demo research agent: the README quick start's main job.

It collects sources on a topic from a small built-in corpus (no network). Its
story, one heartbeat at a time, shows every part of heartbeat:

1. it finds and reads a first source;
2. it gets stuck like a *repeater*: the search tool returns the same page and
   the agent calls it with the same arguments again and again;
3. it follows the recovery instructions (try an alternative): it searches the
   archive instead and finds new sources;
4. the corpus runs dry and it turns into a *wanderer*: busy (new queries,
   summaries) while its progress metric, the number of sources, stays flat;
5. the reassess-the-goal instructions cannot help (there is nothing left), so
   heartbeat escalates to a human and stops calling it until someone resumes.
"""

from __future__ import annotations

from typing import Any

CORPUS: dict[str, list[str]] = {
    "scheduled agent watchdog": ["doc:cron-agents-in-practice"],
    "archive:scheduled agent watchdog": [
        "doc:loop-detection-survey",
        "doc:progress-metrics-for-agents",
        "doc:escalation-playbooks",
    ],
}
ANGLES = ["costs", "failure modes", "human oversight", "tooling", "case studies", "metrics", "history"]


def search(query: str, page: int) -> list[str]:
    """The offline search tool: a fixed page of results (it ignores ``page``: the bug)."""
    return CORPUS.get(query, [])


def step(ctx: Any) -> None:
    """One heartbeat of research."""
    data = ctx.data
    sources: list[str] = data.setdefault("sources", [])
    topic = "scheduled agent watchdog"
    if ctx.instructions:
        first = ctx.instructions.splitlines()[0]
        print(f"  [agent] following the instructions ({first[:60]}...)")
        data["advice_taken"] = data.get("advice_taken", 0) + 1

    if not sources:  # the first heartbeat: one search, one read
        hits = search(topic, page=1)
        ctx.record("search", {"q": topic, "page": 1}, output=", ".join(hits))
        ctx.record("read", {"url": hits[0]}, output="a long article about cron and agents")
        sources.append(hits[0])
        return

    if not data.get("used_archive"):
        if ctx.instructions:
            # The recovery: a different tool for the same need.
            hits = CORPUS[f"archive:{topic}"]
            ctx.record("search_archive", {"q": topic}, output=", ".join(hits))
            for url in hits:
                ctx.record("read", {"url": url}, output=f"the full text of {url}")
                sources.append(url)
            data["used_archive"] = True
            return
        # The repeater: "next page" does not advance, so the same call comes back each time.
        for _ in range(4):
            hits = search(topic, page=2)
            if ctx.record("search", {"q": topic, "page": 2}, output=", ".join(hits)):
                print("  [agent] the heartbeat flagged my last call; stopping this heartbeat early")
                return
        return

    # The wanderer: always busy, never a new source.
    turn = data.get("turn", 0)
    data["turn"] = turn + 1
    angle = ANGLES[turn % len(ANGLES)]
    ctx.record("search", {"q": f"{topic} {angle}", "page": 1}, output="no new results")
    ctx.record("summarize", {"notes": len(sources), "angle": angle}, output=f"a summary about {angle}")


def progress(ctx: Any) -> float:
    """The domain metric: how many sources the agent has read."""
    return float(len(ctx.data.get("sources", [])))
