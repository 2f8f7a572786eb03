"""What a call does, told by its tool's name and its command (``calls``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.detect.detectors import calls, commands, prints, summarize
from heartbeat.detect.detectors.calls import (
    acts_by_name,
    keeps_record,
    pauses,
    silent_by_design,
    source_named,
    speaks,
    waits,
)
from heartbeat.detect.detectors.words import bare_name

_COMMAND_BITS = ("sed -i", "perl -pi", "rm", "rmdir", "mv", "cp", "mkdir", "touch", "cd", "export")
_COMMAND_BITS += ("chmod", "chown", "ln", "truncate", "git add", "git rm", "pip install", "tee", "RM")
_COMMAND_BITS += ("rsync", "rclone sync", "aws s3 sync", "gsutil -m rsync", "sync")
_COMMAND_BITS += ("aws ", "sqs ", "--region us-east-1 ", "send-message", "get-queue-attributes", "update")
_COMMAND_BITS += ("str_replace_editor create", "<<", ">", ">>", "2>", "-", "=", " ", "x", '"', "_", "/", "\n")


@settings(max_examples=500, deadline=None, print_blob=True)
@given(bits=st.lists(st.sampled_from(_COMMAND_BITS), max_size=8))
def test_the_quick_test_before_the_silent_command_regex_changes_no_answer(bits: list[str]) -> None:
    """A call is silent by design exactly when the regex says so; the substring test only saves time."""
    summary = "bash(" + "".join(bits) + ")"
    regex = commands._SILENT_COMMAND.search(summary) is not None
    assert silent_by_design("bash", summary) is regex


@pytest.mark.parametrize(
    ("args", "waiting"),
    [
        ({"WaitTimeSeconds": 20}, True),
        ({"wait_s": 20}, True),
        ({"max_wait": "30s"}, True),
        ({"waitTime": 5}, True),
        ({"wait_s": 0}, False),  # a short poll
        ({"waitlist_id": 20}, False),
        ({"await": 3}, False),
    ],
)
def test_a_call_whose_argument_says_how_long_it_waits_is_a_long_poll(
    args: dict[str, object], waiting: bool
) -> None:
    """``waits``: a tool named for it, ``sleep N``, or an argument saying how long the call waits."""
    assert waits("receive", summarize("receive", args)) is waiting


@pytest.mark.parametrize(
    ("tool", "args", "pause"),
    [
        ("sleep", {"seconds": 60}, True),
        ("time.sleep", {"s": 5}, True),
        ("wait", {"seconds": 30}, True),
        ("bash", {"cmd": "sleep 180"}, True),
        ("bash", {"cmd": "sleep 1.5m"}, True),
        ("bash", {"cmd": "sleep 20 && gh run list --limit 1"}, False),  # it looks, too
        ("wait_for_job", {"job_id": "j1", "timeout_s": 30}, False),  # a long poll: its answer is news
        ("browser_wait_for", {"text": "Saved"}, False),
    ],
)
def test_a_call_that_only_pauses(tool: str, args: dict[str, object], pause: bool) -> None:
    """``pauses``: a sleep and nothing else, whose answer ("slept 60s") tells of the pause alone."""
    assert pauses(tool, summarize(tool, args)) is pause


@pytest.mark.parametrize(
    ("tool", "args", "search"),
    [
        ("grep", {"cmd": "grep -rn x src"}, True),
        ("find", {"cmd": "find . -name '*.py'"}, True),
        ("bash", {"command": "grep -rn x src"}, True),
        ("bash", {"command": "cd /testbed && git grep needle"}, True),
        ("bash", {"command": "ls src"}, False),
        ("python", {"cmd": "python -c 'print(1)'"}, False),
    ],
)
def test_a_search_is_told_by_its_program(tool: str, args: dict[str, object], search: bool) -> None:
    """``searches``: grep, rg, find and their kin, by the tool's name or the command's first word."""
    assert calls.searches(tool, summarize(tool, args)) is search


def test_a_listing_s_silence_answers_as_a_search_s_does() -> None:
    """``silence_answers``: a search, or an ``ls`` alone, says "nothing" by its silence; ``ls`` piped
    on, or any other command, does not."""
    assert calls.silence_answers("shell", summarize("shell", {"cmd": "ls -1 incoming/"}))
    assert calls.silence_answers("grep", summarize("grep", {"cmd": "grep -rn x src"}))
    assert not calls.silence_answers("bash", summarize("bash", {"command": "ls src | wc -l"}))
    assert not calls.silence_answers("bash", summarize("bash", {"command": "cat notes.txt"}))
    # git asked what is new: no new commits is silence (a release watcher's quiet wake-up)
    assert calls.silence_answers("bash", summarize("bash", {"command": "cd /srv/app && git fetch origin"}))
    git_log = {"command": "git log --oneline HEAD..origin/main"}
    assert calls.silence_answers("bash", summarize("bash", git_log))
    assert calls.silence_answers("git_log", summarize("git_log", {"repo_path": "/srv/app"}))
    assert not calls.silence_answers("fetch", summarize("fetch", {"url": "https://example.com"}))


@pytest.mark.parametrize(
    ("tool", "args", "silent"),
    [
        ("cat", {"cmd": "cat <<EOF > repro.py\nprint(1)\nEOF"}, True),
        ("python", {"cmd": "python gen.py > out.txt"}, True),
        ("bash", {"command": "sed -i 's/a/b/' x.py"}, True),
        ("terminal", {"keystrokes": "echo ok >> log.txt\n"}, True),
        ("bash", {"input": "rm -rf build"}, True),  # a shell's every argument is its command
        # A ">" in a SQL filter, "export" in a search, "<id>" in a placeholder: no command.
        ("qbo.query", {"query": "SELECT Id FROM Invoice WHERE Balance > '0'"}, False),
        ("postgres.query", {"sql": "SELECT * FROM orders WHERE id > $1", "params": [0]}, False),
        ("kb.search", {"query": "csv export timezone"}, False),
        ("get_order_details", {"order_id": "<latest_order_id>"}, False),
        # A `cd` or an `export` before the command is no write: the command after it says.
        ("bash", {"command": "cd /testbed"}, True),
        ("bash", {"command": "cd /workspace/fastcsv && ls -la"}, False),
        ("bash", {"command": "cd /testbed; python -m pytest -q"}, False),
        ("bash", {"command": "export PYTHONPATH=src && python -c 'print(1)'"}, False),
        ("bash", {"command": "cd /testbed && sed -i 's/a/b/' x.py"}, True),
        # A mirror copies: with nothing to copy it says nothing (live round 41's blind batch 40).
        ("shell", {"cmd": "aws s3 sync s3://assets s3://assets-dr --only-show-errors"}, True),
        ("bash", {"command": "rsync -a --delete src/ backup/"}, True),
        ("bash", {"command": "rclone sync gdrive:reports s3:reports"}, True),
        ("bash", {"command": "git log --oneline | grep sync"}, False),
        # git's verbs that change the branch write; fetch and log ask what is new
        ("bash", {"command": "cd /srv/app && git merge --ff-only origin/main"}, True),
        ("bash", {"command": "git rebase origin/main"}, True),
        ("bash", {"command": "git push origin HEAD"}, True),
        ("bash", {"command": "git fetch origin"}, False),
    ],
)
def test_a_command_is_read_where_a_call_carries_one(tool: str, args: dict[str, object], silent: bool) -> None:
    """``silent_by_design`` reads a command in an argument named for one or in a shell tool's call,
    not in a query's text: an invoice query's ``Balance > '0'`` wrote nothing."""
    assert silent_by_design(tool, summarize(tool, args)) is silent


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ("respond", True),
        ("say", True),
        ("tell_user", True),
        ("slack.post", True),
        ("send_message", True),
        ("chat", False),  # a model asked: its answer is what was asked for
        ("get_messages", False),
    ],
)
def test_a_tool_named_for_a_message_speaks_to_a_person(tool: str, message: bool) -> None:
    assert speaks(tool) is message


def test_a_log_line_or_a_touched_time_is_the_agents_own_record() -> None:
    """The agent's own record (a line logged, a poll's time touched) changes nothing it works on; a
    note, a log read, a hand-off or a write of data are not such a record."""
    assert all(keeps_record(t) for t in ["log.info", "log", "log_warn", "worker.log", "state.touch"])
    assert not any(keeps_record(t) for t in ["think", "transfer_to_billing_agent", "state.set", "get_log"])
    # A line appended to a log file is one too, whatever the tool is called; other files hold data.
    logged = summarize("append_file", {"path": "restock.log", "text": "no open POs, nothing low"})
    assert keeps_record("append_file", logged)
    assert not keeps_record("append_file", summarize("append_file", {"path": "orders.csv", "text": "a"}))
    assert not keeps_record("append_file", summarize("append_file", {"path": "catalog.logo.png"}))
    # A write named for the log it adds to (live round 54's drift watcher: escalated by ``loop``).
    assert all(keeps_record(t) for t in ["append_log", "write_log_entry", "add_journal_line"])
    assert not any(keeps_record(t) for t in ["append_row", "write_catalog", "delete_log", "read_logs"])
    # Another act on a log file is work (live round 58: a twin rotating one log every night, answered
    # "ok" under a flat metric, was bookkeeping and never flagged).
    rotated = {"host": "web-1", "path": "/var/log/app/big.log"}
    assert not any(keeps_record(t, summarize(t, rotated)) for t in ["rotate_log", "truncate_file", "gzip"])


@pytest.mark.parametrize(
    ("args", "writes"),
    [
        ({"sql": "UPDATE orders o SET region_id = c.region_id FROM customers c WHERE o.id < 9"}, True),
        ({"query": "INSERT INTO raw (id) VALUES (1)"}, True),
        ({"sql": "  delete from sessions where expired"}, True),
        ({"statement": "CREATE UNIQUE INDEX i ON t (a)"}, True),
        ({"sql": "ALTER TABLE t ADD COLUMN c int"}, True),
        ({"sql": "SELECT count(*) FROM orders WHERE region_id IS NULL"}, False),
        ({"query": "update python packages on debian"}, False),  # a search, not SQL
        ({"query": "create a table of contents"}, False),
        ({"note": "UPDATE t SET a = 1"}, False),  # not an argument named for a statement
    ],
)
def test_a_sql_statement_that_writes_is_a_write_whatever_the_tool(args: dict[str, str], writes: bool) -> None:
    """``run_sql(sql="UPDATE ... SET ...")`` writes, as ``sed -i`` does; a SELECT and words that only
    start like SQL do not."""
    summary = summarize("run_sql", args)
    assert commands.writes_sql(summary) is writes
    assert silent_by_design("run_sql", summary) is writes


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("kubectl -n billing patch configmap env --type merge -p '{}'", True),
        ("kubectl rollout restart deploy/api", True),
        ("kubectl scale deploy/api --replicas=5", True),
        ("kubectl get pods -l app=api", False),
        ("kubectl rollout status deploy/api", False),
        ("helm upgrade api ./chart", True),
        ("terraform apply -auto-approve", True),
        ("terraform plan", False),
        ("systemctl restart nginx", True),
        ("systemctl status nginx", False),
        ("docker compose up -d", True),
        ("docker ps", False),
        # the AWS CLI's verbs that change things (blind batch 56's worker hiding poison messages)
        ("aws sqs change-message-visibility-batch --queue-url https://sqs/q --entries file://e.json", True),
        ("aws --region eu-west-1 ecs update-service --cluster c --service api", True),
        ("aws ec2 delete-snapshot --snapshot-id snap-0df0641ba04ecfc4b", True),
        ("aws sqs receive-message --queue-url https://sqs/q", False),
        ("aws ec2 describe-snapshots --owner-ids self", False),
        ("aws sts get-caller-identity", False),
    ],
)
def test_an_operator_command_that_changes_a_system_is_a_write(command: str, writes: bool) -> None:
    """What changes a cluster, a host or a deployment (patch, scale, restart, apply) writes, as
    ``sed -i`` does: a rollout watched after a patch may answer anew; a read (get, status) does not."""
    assert silent_by_design("bash", summarize("bash", {"cmd": command})) is writes
    assert silent_by_design("kubectl", summarize("kubectl", {"cmd": command})) is writes


@pytest.mark.parametrize(
    ("tool", "args", "writes"),
    [
        ("kubectl", {"args": "-n checkout set image deploy/api api=registry/api:v2"}, True),
        ("kubectl", {"args": "-n checkout rollout status deploy/api --timeout=20s"}, False),
        ("run_kubectl", {"command": "scale deploy/api --replicas=3"}, True),
        ("k8s.kubectl", {"subcommand": "get", "target": "pods"}, False),
        ("helm", {"argv": "upgrade api ./chart"}, True),
        ("git", {"args": "commit -m 'fix'"}, True),
        ("git", {"args": "status --short"}, False),
        ("github_search", {"q": "commit -m"}, False),  # no program named: github is not git
    ],
)
def test_a_tool_named_for_its_program_takes_the_program_s_arguments(
    tool: str, args: dict[str, str], writes: bool
) -> None:
    """``kubectl(args="-n shop set image ...")`` is ``kubectl -n shop set image ...``: a tool named
    for the program it runs writes when the command would, whatever its argument is called."""
    assert silent_by_design(tool, summarize(tool, args)) is writes


@pytest.mark.parametrize(
    ("tool", "taking"),
    [
        ("sqs.receive_message", True),
        ("jobs.claim", True),
        ("queue_pop", True),
        ("kafka_consume", True),
        ("leaseTask", True),
        ("get_receipt", False),
        ("list_messages", False),
        ("claims_search", False),
    ],
)
def test_a_call_named_for_taking_work_from_a_queue(tool: str, taking: bool) -> None:
    """What such a call answers is work come (a message received again is work left undone)."""
    assert calls.takes_work(tool) is taking


def test_a_search_qualifier_is_no_redirect_and_a_queue_says_empty_by_silence() -> None:
    """``merged:>2024-02-05`` in a search asks (blind batch 42's changelog writer was read as
    writing each hour); ``echo x > out.txt`` writes. ``aws sqs receive-message`` and redis-cli's
    ``LPOP`` print nothing for an empty queue, as a grep for no match does; ``cat`` does not."""
    search = summarize("gh", {"cmd": "gh pr list --state merged --search 'merged:>2024-02-05T08:12:40Z'"})
    assert not silent_by_design("gh", search)
    assert silent_by_design("bash", summarize("bash", {"cmd": "echo done > out.txt"}))
    for tool, cmd in (("aws", "aws sqs receive-message --queue-url q"), ("redis-cli", "redis-cli LPOP jobs")):
        assert calls.silence_answers(tool, summarize(tool, {"cmd": cmd}))
    assert not calls.silence_answers("bash", summarize("bash", {"cmd": "cat queue.txt"}))


@pytest.mark.parametrize(
    ("tool", "acts"),
    [
        ("backup.latest_set", False),  # the latest backup set, read (blind batch 51's verifier)
        ("last_update", False),
        ("current_post", False),
        ("cache_set", True),
        ("set_latest", True),
        ("new_post", True),
        ("queue_delete", True),
    ],
)
def test_a_verb_as_often_a_noun_after_a_word_picking_one_is_the_noun(tool: str, acts: bool) -> None:
    """``latest_set`` names the latest set: a read, not a write of it (blind batch 51's backup
    verifier, its idle rounds taken for writes, was escalated when its work was done)."""
    assert acts_by_name(tool) is acts


@pytest.mark.parametrize(
    ("tool", "acts"),
    [
        ("imap.select", False),  # IMAP's SELECT opens a mailbox to read (blind batch 54's poller)
        ("imap_select", False),
        ("mysql.select", False),
        ("browser_select", True),  # an option picked on a page
        ("browser.select", True),
        ("select_option", True),
        ("select_seats", True),
        ("select", True),
        # "open" before a plural names the open ones, listed (live round 50's restocker)
        ("open_orders", False),
        ("open_pull_requests", False),
        ("open_file", True),
        ("open_status", True),
        # a workflow's and a queue's verbs move a thing on (blind batch 54's Jira groomer)
        ("jira.transition_issue", True),
        ("pagerduty.acknowledge", True),
        ("queue.nack", True),
        ("webhooks.redeliver", True),
        # an operator's verbs for a service or a cache (live round 54: a resolver restarted every
        # wake-up, the same answers after, was no act: never flagged)
        ("restart_resolver", True),
        ("flush_cache", True),
        ("cdn.purge_cache", True),
        ("rollback_deployment", True),
        ("get_restart_count", False),
        # a writer's verbs (blind batch 61: a drafter rewriting one section for ever, its drafts
        # taken for a job's page moving, was never flagged)
        ("draft_section", True),
        # git's log reads the history (the MCP git server's git_log was an act, and the agent's
        # own record); its commit writes
        ("git_log", False),
        ("git_commit", True),
        # logs shipped on act (live round 53: a log tailer's ship_lines was a look, push_lines an act)
        ("ship_lines", True),
        ("get_shipment", False),
        ("revise_chapter", True),
        ("rewrite_paragraph", True),
    ],
)
def test_a_store_s_select_reads_and_a_workflow_s_verbs_act(tool: str, acts: bool) -> None:
    """A select on a store reads; on a page, or of an option, it acts (until 2026-12-06 an IMAP
    poller's ``imap.select``, its UIDNEXT moving, was an act whose answer was no news: a loop).
    A ticket moved on (``jira.transition_issue``, each ``204 No Content``) is an act on that ticket
    (until 2026-12-06 a look whose same answer recurred: escalated at the eleventh wake-up)."""
    assert acts_by_name(tool) is acts


@pytest.mark.parametrize(
    ("args", "source"),
    [
        ({"channel": "C04ENG", "oldest": "1764000000"}, ("channel", "C04ENG")),
        ({"feed_url": "https://example.com/rss"}, ("feed_url", "https://example.com/rss")),
        ({"repoId": 7, "state": "open"}, ("repoId", "7")),
        ({"channel_name": "#eng"}, ("channel_name", "#eng")),
        ({"vendor": "twilio"}, ("vendor", "twilio")),  # its status page
        ({"filter": {"state": "open"}}, None),  # what it looks for, not where
        ({"status": "open"}, None),
        ({"channels": "#eng,#ops"}, None),  # several places at once
        ({"channel": "C1", "repo": "api"}, None),  # two: no one place it reads from
        ({"inbox": True}, None),
    ],
)
def test_a_source_is_an_argument_named_for_where_a_call_reads(
    args: dict[str, object], source: tuple[str, str] | None
) -> None:
    """One argument naming where the call looks (a channel, a feed, a repository) is its source."""
    summary = prints("history", args, "", None).summary
    assert source_named("history", summary) == source


@pytest.mark.parametrize(
    ("tool", "args", "writes"),
    [
        ("docker_compose", {"cmd": "up -d"}, True),  # docker compose up -d
        ("git_commit", {"message": "fix the parser"}, True),  # git commit
        ("git_show", {"cmd": "HEAD --stat"}, False),
        ("docker", {"cmd": "ps"}, False),
    ],
)
def test_a_tool_named_for_a_program_and_its_command_reads_as_both(
    tool: str, args: dict[str, str], writes: bool
) -> None:
    """The program and what the tool's name says after it make the command its values run."""
    assert silent_by_design(tool, summarize(tool, args)) is writes


def test_what_a_tools_name_says_is_said_by_its_own_name_not_its_mcp_namespace() -> None:
    """Claude Code names an MCP server's tools ``mcp__<server>__<tool>``: ``think`` is a note and
    ``grep`` a search whatever namespace comes before them, and the namespace names nothing the
    tool acts on."""
    assert bare_name("mcp__alfworld__think") == "think"
    assert bare_name("mcp__github__create_issue") == "create_issue"
    assert bare_name("mcp__odd") == "mcp__odd" and bare_name("read_page") == "read_page"
    assert calls.is_note("mcp__alfworld__think") and calls.is_note("think")
    assert calls.searches("mcp__shell__grep", 'mcp__shell__grep({"pattern":"x"})')
    assert calls.named_things("mcp__tools__look") == calls.named_things("look")
    assert calls.acts_by_name("mcp__github__create_issue")


def test_a_host_resolved_is_looked_up_and_a_ticket_resolved_is_acted_on() -> None:
    """``resolve`` acts on a ticket or an incident, but a host's name resolved in the DNS
    (``resolve(host=...)``, ``dns_resolve``: live round 56's feed puller) is only looked up."""
    assert not calls.silent_by_design("resolve", summarize("resolve", {"host": "feeds.example"}))
    assert not calls.acts_by_name("dns_resolve") and calls.looks_up("resolve_hostname")
    assert calls.silent_by_design("resolve", summarize("resolve", {"ticket_id": 5}))
    assert calls.acts_by_name("resolve_incident")


def test_a_comment_on_a_pull_request_is_a_message_to_its_people() -> None:
    """``gh_pr_comment`` posts (live round 56's plan reviewer): an act, said to people, as
    ``post_comment`` is; a tool reading comments still reads."""
    assert calls.acts_by_name("gh_pr_comment") and calls.speaks("gh_pr_comment")
    assert not calls.acts_by_name("list_comments") and not calls.acts_by_name("comments.get")


@pytest.mark.parametrize(
    ("tool", "args", "acts"),
    [
        # A computer-use tool's action, named in an argument: clicks and typing act, a look does not
        ("computer", {"action": "left_click", "coordinate": [640, 560]}, True),
        ("computer", {"action": "double_click", "coordinate": [96, 210]}, True),
        ("computer", {"action": "type", "text": "hello"}, True),
        ("computer", {"action": "screenshot"}, False),
        ("crm", {"operation": "update_contact", "id": 7}, True),
        ("crm", {"operation": "get_contact", "id": 7}, False),
        # A command's first word, given to a tool that is no shell (blind batch 63's Kafka admin)
        ("kafka_admin", {"cmd": "reassign --group orders --force"}, True),
        ("kafka_admin", {"cmd": "reassign-status ra-7731"}, False),  # one word: the status of it
        ("kafka_admin", {"cmd": "describe-group orders"}, False),
        ("redis", {"command": "SET greeting hello"}, True),
        ("bash", {"cmd": "set -e; ls"}, False),  # a shell's first word is a program
        # An act done again is that act
        ("mail.resend_invoice", {"id": 4}, True),
        ("tickets.reopen", {"id": 4}, True),
        ("report_status", {}, False),
        ("review_diff", {}, False),
        # a query's SELECT given as a command reads; a comparison with a number is no redirect
        ("psql", {"cmd": "SELECT relname FROM pg_stat_user_tables WHERE n_dead_tup > 500000"}, False),
        ("psql", {"cmd": "INSERT INTO audit VALUES (1)"}, True),
        ("bash", {"cmd": "awk '$3 > 100' access.log"}, False),
        ("bash", {"cmd": "python gen.py > 1.txt"}, True),
        # live round 57's twins: an image resized, a meeting's slot proposed, again each wake-up
        ("resize", {"name": "img_0.jpg", "w": 800}, True),
        ("calendar.propose_slot", {"meeting": "q3-review"}, True),
        ("migrate.status", {"database": "orders"}, False),  # a migration tool's look
        ("backfill.logs", {"job": 7}, False),
    ],
)
def test_an_act_named_in_an_argument_or_done_again_is_an_act(
    tool: str, args: dict[str, object], acts: bool
) -> None:
    """A tool of many actions acts when the action its arguments name does; ``re`` before an act's
    verb is that act again."""
    assert silent_by_design(tool, summarize(tool, args)) is acts
