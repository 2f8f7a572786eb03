"""bench/blind_agents: runs written without reading the detectors, replayed as they were judged."""

from __future__ import annotations

import pytest
from _labelled_runs import BENCH, replayed

from heartbeat.replay.folder import read_labels

BLIND = BENCH / "blind_agents"
LABELS = read_labels(BLIND / "labels.csv")


# Stuck runs the detectors miss (bench/blind_agents/README.md): near-duplicate answers. Busywork that
# only its flat metric shows is caught however the run is grouped: a regrouped trace keeps its samples.
# Jobs frozen while their elapsed counter grows are caught since the eleventh session (the counter
# is no content); an agent asking again what the customer said she had given, and two instructions
# sent in turn while the customer redoes them and reports no change, since the twelfth.
MISSED = {
    "stuck__cs-repeat-reservation-request",
    "stuck__k8s-restart-crashloop",
    "stuck__llm-subagent-refusal",
    "stuck__pager_calendar_reasks_same_person",
}


# Healthy runs with an anomaly, by grouping (bench/blind_agents/README.md, "Left as they are"):
# reworded retries flagged once (a pylint run whose three flags each fail alike, a search reworded
# three times before it lands); metrics
# flat for four measured heartbeats (no_progress by design: setting up, a quiet inbox); a stalled
# rollout's status failing alike at 10 actions a heartbeat (recurring_error); batches answered
# alike ({"inserted": 500}) before the metric's first rise is measured (recurring), escalated only
# at 1 action a heartbeat, where most heartbeats go unmeasured; a job queued for five polls fifteen
# minutes apart and an inbox quiet for nine (loop: a cycle that waits needs R + 2 passes; both
# escalated at 1 action a heartbeat only).
_ALWAYS = {
    "healthy__pylint_recursive_ignore_greps_miss_then_hit": ["recurring_error"],
    "healthy__qa_search_rewording_lands": ["recurring_error"],
    "healthy__go-limiter-clock-inject": ["no_progress"],
}
# The tenth batch's pollers, searchers and waiters (bench/blind_agents/README.md): polls between
# sleeps answering alike for six rounds or more (CI pending: recurring; a status page's 304s no
# longer: "not modified" is an answer of nothing; nor a fine-tune job polled "queued" while its
# events say the queue moves: a poll counts since any call answered something new), a rollout's status timing
# out while its pods come up (recurring_error), an inbox polled into nothing in a tight loop while
# the metric is flat (repeat), two runs whose writer left ten identical calls at the end (repeat,
# loop), logs searched in one shape after another.
_TENTH = {
    "healthy__code_search_token_refresh": ["loop", "cycle", "recurring"],
    "healthy__gh_ci_wait": ["recurring"],
    "healthy__gmail_support_inbox": ["repeat", "no_progress"],
    "healthy__grep_quota_helper": ["repeat", "recurring"],
    "healthy__k8s_rollout_watch_pods": ["recurring_error"],
    "healthy__log_search_checkout_500s": ["near_repeat"],
}
_TENTH_ESCALATED = set(_TENTH) - {"healthy__log_search_checkout_500s"}
# Consumers and watchers polling into nothing three times in a row in a heartbeat whose metric did
# not rise (a rise overrules a repeat only within its N calls), and a stalled rollout's status.
_IDLE = {
    name: ["repeat"]
    for name in ("healthy__airflow_dag_wait", "healthy__es_scroll_export", "healthy__slack_access_requests")
}
# The eleventh batch's (bench/blind_agents/README.md): a portal's "Add another vendor" landing on the
# same blank form after each vendor saved (recurring); a quiet on-call watch whose every wake-up is
# the same three checks finding nothing (loop: without a metric or `exempt`, as a job polled frozen);
# a restore polled while its status reads "creating" for eight heartbeats; suites re-run and passing
# alike at the end; an indexer's quiet heartbeats; metrics flat while one long job runs.
_ELEVENTH = {
    "healthy__browser_vendor_portal_entry": ["recurring"],
    "healthy__data_quality_recheck": ["loop"],
    "healthy__embeddings_indexer_kb": ["loop"],
    "healthy__oncall_triage_watch": ["loop", "cycle"],
    "healthy__restore_drill_rds": ["cycle", "loop", "recurring"],
}
_ELEVENTH_FLAT = {
    name: ["no_progress"]
    for name in (
        "healthy__db_backup_nightly",
        "healthy__monthly_reports_email",
        "healthy__ocr_scanned_contracts",
        "healthy__sitemap_crawler_docs",
        "healthy__writer_design_doc_sections",
    )
}
_ELEVENTH_ESCALATED = set(_ELEVENTH) - {"healthy__embeddings_indexer_kb"}
# The twelfth batch's (bench/blind_agents/README.md): scheduled agents whose wake-ups mostly find
# nothing new (a price watched unchanged, feeds answering 304, a cost check, "nothing due"), their
# metrics flat while no work comes, in rounds that look like loops; and agents in frameworks (none).
# At its own heartbeats the invoice reconciler's quiet wake-ups are idle ones: its queries' ``>`` is
# a comparison, no shell redirect, so they only looked. A flat metric over a watcher's rounds (the
# same looks every wake-up, none twice, whatever they answer) is no ``no_progress``: the Dependabot
# handler's, the support inbox's and the RSS summariser's quiet stretches at their own heartbeats
# (regrouped, a heartbeat holds a round and a half, the same look twice: still flat). An answer of
# nothing is no revisit (a cycle): the meeting summariser's wake-ups finding no meeting ended. The
# issue triager's quiet wake-ups at its own heartbeats save its cursor as the one before did: the
# same bookkeeping is no work, they are idle. So are the flaky-test quarantiner's, whose build query
# asks ``created_from`` the last wake-up (its time moved on: the same source); at its own
# heartbeats it is flagged once, between them, no longer escalated.
_TWELFTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__cloud_cost_watcher": ["recurring"],
        "healthy__document_ingestion": ["no_progress"],
        "healthy__flaky_test_quarantiner": ["no_progress"],
        "healthy__price_drop_watcher": ["loop", "cycle"],
        "healthy__rss_news_summariser": ["no_progress"],
        "healthy__social_media_scheduler": ["recurring", "loop", "cycle"],
        "healthy__uptime_sla_reporter": ["no_progress"],
    },
    1: {
        "healthy__backlog_groomer": ["no_progress"],
        "healthy__cloud_cost_watcher": ["recurring"],
        "healthy__dependabot_alert_handler": ["no_progress"],
        "healthy__document_ingestion": ["no_progress"],
        "healthy__expense_report_checker": ["loop", "recurring"],
        "healthy__flaky_test_quarantiner": ["no_progress"],
        "healthy__github_issue_triager": ["no_progress"],
        "healthy__invoice_reconciliation": ["no_progress"],
        "healthy__meeting_notes_summariser": ["loop"],
        "healthy__price_drop_watcher": ["loop"],
        "healthy__social_media_scheduler": ["loop"],
        "healthy__support_inbox_responder": ["no_progress"],
        "healthy__uptime_sla_reporter": ["no_progress"],
    },
    5: {
        "healthy__cloud_cost_watcher": ["recurring"],
        "healthy__dependabot_alert_handler": ["empty"],
        "healthy__expense_report_checker": ["loop", "recurring"],
        "healthy__github_issue_triager": ["empty"],
        "healthy__invoice_reconciliation": ["no_progress", "loop"],
        "healthy__meeting_notes_summariser": ["loop"],
        "healthy__price_drop_watcher": ["loop", "cycle"],
        "healthy__rss_news_summariser": ["no_progress"],
        "healthy__social_media_scheduler": ["loop", "recurring"],
    },
    10: {
        "healthy__cloud_cost_watcher": ["recurring"],
        "healthy__document_ingestion": ["loop", "recurring", "cycle"],
        "healthy__expense_report_checker": ["loop", "recurring"],
        "healthy__meeting_notes_summariser": ["loop"],
        "healthy__price_drop_watcher": ["loop", "cycle", "recurring"],
        "healthy__rss_news_summariser": ["no_progress"],
        "healthy__social_media_scheduler": ["loop", "recurring"],
    },
}
# Escalated at every grouping (the meeting summariser regrouped 5 or 10 a heartbeat only, and the RSS
# summariser, whose feeds answer "304 Not Modified", at 5 only: its metric flat over regrouped
# rounds; its rounds of 304s are no loop): quiet rounds that answer something each time.
_QUIET_ROUNDS = {
    "healthy__cloud_cost_watcher",
    "healthy__price_drop_watcher",
    "healthy__social_media_scheduler",
}
_REGROUPED_ROUNDS = {"healthy__meeting_notes_summariser", "healthy__rss_news_summariser"}
_TWELFTH_ESCALATED: dict[int | None, set[str]] = {
    None: _QUIET_ROUNDS,
    1: _QUIET_ROUNDS
    | {
        "healthy__meeting_notes_summariser",
        "healthy__backlog_groomer",
        "healthy__expense_report_checker",
        "healthy__flaky_test_quarantiner",
        "healthy__github_issue_triager",
        "healthy__invoice_reconciliation",
    },
    5: _QUIET_ROUNDS
    | _REGROUPED_ROUNDS
    | {"healthy__expense_report_checker", "healthy__invoice_reconciliation"},
    10: _QUIET_ROUNDS | {"healthy__meeting_notes_summariser", "healthy__expense_report_checker"},
}
# The thirteenth batch's (bench/blind_agents/README.md): watchers whose one check a wake-up answers
# the same each time, the metric flat (a price, a queue depth of 0, a BigQuery job RUNNING for 25
# minutes): a repeat, as a job polled while frozen is, and escalated (a changelog's "304 Not
# Modified" no longer: an answer of nothing, its wake-ups idle, nor a support inbox's
# ``{"resultSizeEstimate": 0}``); a CI run polled alike, a rollout's smoke test failing alike, a
# CVE search finding nothing; an ALFWorld agent's subgoal metric flat while it searches; regrouped,
# feeds and a status page too.
_WATCHERS = {
    "healthy__monitoring_price_drop_watch",
    "healthy__ops_rabbitmq_depth_autoscale",
    "healthy__poller_bigquery_extract_then_import",
}
_THIRTEENTH_OWN = {
    **{name: ["repeat"] for name in _WATCHERS},
    "healthy__poller_ci_build_then_release": ["repeat"],
    "healthy__alfworld-pick_clean_then_place-mug-312": ["no_progress"],
    "healthy__monitoring_cve_mention_search": ["empty", "recurring", "no_progress"],
    "healthy__ops_k8s_rollout_and_smoke": ["repeat", "recurring_error", "error_rate"],
}
_THIRTEENTH_REGROUPED = {
    **{name: ["repeat", "recurring"] for name in _WATCHERS},
    "healthy__feed_mastodon_mentions_replies": ["repeat", "empty"],
    "healthy__feed_stripe_events_to_crm": ["repeat", "empty"],
    "healthy__monitoring_cve_mention_search": ["empty", "loop", "recurring"],
    "healthy__monitoring_vendor_statuspage_watch": ["repeat", "empty", "recurring"],
    "healthy__ops_k8s_rollout_and_smoke": ["repeat", "recurring_error", "error_rate"],
}
_THIRTEENTH: dict[int | None, dict[str, list[str]]] = {
    None: _THIRTEENTH_OWN,
    1: {**_THIRTEENTH_OWN, "healthy__queue_sqs_thumbnail_worker": ["no_progress"]},
    5: {**_THIRTEENTH_REGROUPED, "healthy__alfworld-pick_clean_then_place-mug-312": ["no_progress"]},
    10: _THIRTEENTH_REGROUPED,
}
_THIRTEENTH_ESCALATED: dict[int | None, set[str]] = {
    None: _WATCHERS,
    1: _WATCHERS | {"healthy__monitoring_cve_mention_search"},
    5: _WATCHERS | {"healthy__monitoring_cve_mention_search", "healthy__monitoring_vendor_statuspage_watch"},
    10: {"healthy__monitoring_cve_mention_search"},
}
# The fourteenth batch's (bench/blind_agents/README.md): a watcher of one long-running alert whose
# rounds answer the same (loop), a deletion processor parked for hours behind a mailer's 503s and an
# index refresher and issue labeller whose metric sits at its 1.0 while they keep working
# (no_progress); regrouped, syncs whose quiet polls `since` a cursor mix with the writes after them.
_METRIC_AT_ONE = {
    "healthy__github_issue_labeler": ["no_progress"],
    "healthy__search_index_refresher": ["no_progress"],
}
_REGROUPED_SYNCS = {"healthy__stripe_to_sheets_sync": ["repeat", "empty", "recurring"]}
_FOURTEENTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        **_METRIC_AT_ONE,
        "healthy__alert_dedup": ["loop"],
        "healthy__gdpr_deletion_processor": ["no_progress", "cycle"],
        "healthy__xarray_weighted_bool_weights_long": ["no_progress"],
    },
    1: {
        **_METRIC_AT_ONE,
        **{
            name: ["no_progress"]
            for name in (
                "healthy__calendar_assistant",
                "healthy__dep_update_bot",
                "healthy__mailbox_cleanup",
                "healthy__s3_to_warehouse_loader",
                "healthy__translation_pipeline",
                "healthy__xarray_weighted_bool_weights_long",
            )
        },
        "healthy__alert_dedup": ["loop"],
        "healthy__gdpr_deletion_processor": ["recurring", "no_progress", "cycle"],
    },
    5: {
        **_METRIC_AT_ONE,
        **_REGROUPED_SYNCS,
        **{
            name: ["no_progress"]
            for name in ("healthy__db_migration_watcher", "healthy__xarray_weighted_bool_weights_long")
        },
        "healthy__alert_dedup": ["loop", "recurring", "cycle"],
        "healthy__crm_to_helpdesk_sync": ["empty"],
        "healthy__gdpr_deletion_processor": ["no_progress", "cycle"],
    },
    10: {
        **_REGROUPED_SYNCS,
        "healthy__alert_dedup": ["loop", "recurring", "cycle"],
        "healthy__crm_to_helpdesk_sync": ["empty", "recurring"],
    },
}
_FOURTEENTH_ESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__alert_dedup", "healthy__gdpr_deletion_processor", *_METRIC_AT_ONE},
    1: {"healthy__alert_dedup", "healthy__gdpr_deletion_processor"},
    5: {
        "healthy__alert_dedup",
        "healthy__crm_to_helpdesk_sync",
        "healthy__gdpr_deletion_processor",
        "healthy__stripe_to_sheets_sync",
    },
    10: {"healthy__alert_dedup", "healthy__crm_to_helpdesk_sync"},
}
# Missed: repro scripts rewritten to print the same expression in new ways, a customer taken
# through the same diagnostics (caught since the twelfth session: the person redoes the same steps,
# each showing the same), a flaky test re-run with more samples each time, an index rebuilt over
# and over (its metric rising and falling). A page paged up and down while find_in_page is
# reworded is caught since the thirteenth: each "No matches found for '<its text>'" is one error.
_FOURTEENTH_MISSED = {
    "stuck__sympy_latex_frac_repro_churn",
    "stuck__flaky_rerun_inconclusive_loop",
    "stuck__products_index_rebuild_cycle",
}
_FOURTEENTH_MISSED_AT: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: set(),
    10: {"stuck__astropy_quantity_notimplemented_cycle", "stuck__promo_archive_label_only"},
}
# The fifteenth batch's (bench/blind_agents/README.md): agents in frameworks whose heartbeat is one
# model turn, their metric (tests passing, rows done) measured each turn: turns that each bring
# something new (a file read, a test failing anew after an edit) are an exploration, no busy work
# (heartbeat/detect/idle.py), so coding assistants debugging for six or more turns are not flagged;
# a bisect is, once its todo list and test runs answer as before (not escalated). Long SWE-bench
# coding runs: a mypy run whose check is retried in new spellings failing alike (a reworded retry,
# flagged once).
_TURNS = {
    "healthy__mypy-10924": ["recurring_error"],
    "healthy__py_flaky_test_git_bisect": ["no_progress"],
}
_FIFTEENTH: dict[int | None, dict[str, list[str]]] = {None: _TURNS, 1: _TURNS, 5: _TURNS, 10: _TURNS}
_FIFTEENTH_ESCALATED: dict[int | None, set[str]] = {None: set(), 1: set(), 5: set(), 10: set()}
# Missed: a headcount searched in new words each time; at 10 a heartbeat, a proposal rewritten, an
# invoice pager paged back and forth, a dedupe batch busy under a flat metric.
_FIFTEENTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__web_private_company_headcount_reworded"},
    1: {"stuck__web_private_company_headcount_reworded"},
    5: {"stuck__web_private_company_headcount_reworded"},
    10: {
        "stuck__doc_proposal_risks_rewrite_loop",
        "stuck__pw_invoice_pager_back_and_forth",
        "stuck__repl_dedupe_batch_flat",
        "stuck__web_private_company_headcount_reworded",
    },
}
# The sixteenth batch's (bench/blind_agents/README.md): watchers answered alike while they wait (a CI
# run queued for ten polls, a deploy's rollout stalled while nodes come up), a calendar sync whose
# token refresh answers alike, a feed reader's rounds; a TypeScript migration's flat turns, flagged
# once. Missed: a FEVER agent looking up the same page in new words for six actions.
_SIXTEEN_WATCHERS = {
    "healthy__calendar_crm_sync",
    "healthy__ci_wait_long_queue",
    "healthy__k8s_rollout_watch_16",
    "healthy__rss_feed_reader",
}
_SIXTEENTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__calendar_crm_sync": ["recurring"],
        "healthy__cc_ts_strict_null_migration": ["no_progress"],
        "healthy__ci_wait_long_queue": ["recurring"],
        "healthy__emr_step_long_shuffle": ["recurring", "cycle"],
        "healthy__k8s_rollout_watch_16": ["recurring_error", "no_progress"],
        "healthy__rss_feed_reader": ["loop"],
    },
    1: {
        "healthy__calendar_crm_sync": ["recurring"],
        "healthy__cc_ts_strict_null_migration": ["no_progress"],
        "healthy__ci_wait_long_queue": ["recurring", "cycle"],
        "healthy__emr_step_long_shuffle": ["no_progress", "recurring"],
        "healthy__inbox_triage_quiet": ["no_progress", "recurring"],
        "healthy__k8s_rollout_watch_16": ["recurring_error", "no_progress"],
        "healthy__rss_feed_reader": ["loop"],
    },
    5: {
        "healthy__calendar_crm_sync": ["recurring"],
        "healthy__ci_wait_long_queue": ["recurring"],
        "healthy__emr_step_long_shuffle": ["recurring", "cycle"],
        "healthy__inbox_triage_quiet": ["no_progress"],
        "healthy__k8s_rollout_watch_16": ["recurring_error", "no_progress"],
        "healthy__rss_feed_reader": ["loop"],
    },
    10: {
        "healthy__calendar_crm_sync": ["recurring"],
        "healthy__ci_wait_long_queue": ["recurring"],
        "healthy__emr_step_long_shuffle": ["no_progress"],
        "healthy__k8s_rollout_watch_16": ["recurring_error"],
        "healthy__rss_feed_reader": ["loop", "recurring"],
    },
}
_SIXTEENTH_ESCALATED: dict[int | None, set[str]] = {
    None: _SIXTEEN_WATCHERS,
    1: {"healthy__ci_wait_long_queue", "healthy__emr_step_long_shuffle", "healthy__rss_feed_reader"},
    5: _SIXTEEN_WATCHERS,
    10: _SIXTEEN_WATCHERS,
}
_SIXTEENTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__react_fever_savages_loop"},
    1: {"stuck__react_fever_savages_loop"},
    5: {"stuck__react_fever_savages_loop"},
    10: {"stuck__react_fever_savages_loop", "stuck__research_reworded_no_hits"},
}
# The seventeenth batch's (bench/blind_agents/README.md), replayed as it arrived, then kept: an inbox
# whose wake-ups select the mailbox (an act, by its verb) and search it, a loop from the second; a
# release-notes reader's rounds; an export pager whose metric waits (at its own heartbeats quiet
# since the twelfth session: the same "export complete" line logged each wake-up is bookkeeping).
# HotpotQA searches reworded without a failure the trace marks ("Could not find [X]..." as
# output), missed until the tenth session: a "not found" echoing its request is now an answer of
# nothing.
_SEVENTEEN_QUIET = {
    "healthy__feed_reader_release_notes_since": ["loop", "recurring"],
    "healthy__inbox_support_triage_quiet": ["loop"],
}
_SEVENTEENTH: dict[int | None, dict[str, list[str]]] = {
    None: _SEVENTEEN_QUIET,
    1: {**_SEVENTEEN_QUIET, "healthy__pager_zendesk_ticket_export": ["no_progress"]},
    5: _SEVENTEEN_QUIET,
    10: _SEVENTEEN_QUIET,
}
_SEVENTEENTH_ESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__inbox_support_triage_quiet"},
    1: {"healthy__inbox_support_triage_quiet"},
    5: set(_SEVENTEEN_QUIET),
    10: set(_SEVENTEEN_QUIET),
}
# The eighteenth batch's (bench/blind_agents/README.md): framework agents whose heartbeat is one
# model turn, a metric each turn. A bisect's and two browser forms' flat turns re-answered alike (a
# form page, a test run), escalated at their own heartbeats; regrouped, none flagged. Missed: a
# search reworded turn after turn, each landing on new hits, and an introduction rewritten and
# scored anew each turn (explorations, by their answers); a scraper escalated in its first five
# pages, before its first save (its onset comes later).
_TURNS18 = {
    "healthy__bisect_flaky_scheduler_t18": ["no_progress"],
    "healthy__browser_expense_report_t18": ["no_progress"],
    "healthy__browser_insurance_claim_form_t18": ["no_progress"],
    "healthy__scraper_issues_api_rate_limited_t18": ["no_progress"],
    "healthy__typescript_strict_mode_errors_t18": ["no_progress"],
}
_EIGHTEENTH: dict[int | None, dict[str, list[str]]] = {None: _TURNS18, 1: _TURNS18, 5: {}, 10: {}}
_EIGHTEENTH_ESCALATED: dict[int | None, set[str]] = {
    None: set(_TURNS18)
    - {"healthy__scraper_issues_api_rate_limited_t18", "healthy__typescript_strict_mode_errors_t18"},
    1: set(_TURNS18)
    - {"healthy__scraper_issues_api_rate_limited_t18", "healthy__typescript_strict_mode_errors_t18"},
    5: set(),
    10: set(),
}
_MISSED18 = {
    "stuck__scraper_never_saves_t18",  # escalated in its first five pages, before its first save
    "stuck__search_reworded_no_hit_t18",  # each search new words and new hits: an exploration
    "stuck__writer_rewrite_intro_loop_t18",  # each rewrite scored anew
}
_EIGHTEENTH_MISSED: dict[int | None, set[str]] = {
    None: _MISSED18,
    1: _MISSED18,
    5: set(),
    # The release run polled at 10 a heartbeat is caught since the fourteenth session: its "about
    # 7 minutes ago" is a clock reading, and the run's page reads alike once it is masked.
    10: _MISSED18 | {"stuck__scraper_page_param_ignored_t18"},
}
# The nineteenth batch's (bench/blind_agents/README.md), in the corpus's kinds, replayed as it arrived
# and kept: no healthy run flagged. Missed: two service agents that only talk, asking again in new
# words (the one whose customer says "how many times do I have to say it", caught since the twelfth
# session), and lookups answered "No more results." between revisits (answers of nothing are no
# revisit; caught at 1 and 10 actions a heartbeat since the fourteenth session: six re-checks with
# nothing written between).
_NINETEENTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__airline_reconfirm_cancel_loop_b19", "stuck__hotpot_solo_grammys_lookup_loop_b19"},
    1: {"stuck__airline_reconfirm_cancel_loop_b19"},
    5: {"stuck__airline_reconfirm_cancel_loop_b19", "stuck__hotpot_solo_grammys_lookup_loop_b19"},
    10: {"stuck__airline_reconfirm_cancel_loop_b19"},
}
# The twentieth batch's (bench/blind_agents/README.md): service agents and assistants that talk,
# written blind after the conversation rule was set; no healthy run flagged (walkthroughs answered
# "ok" among them). Missed: agents asking again, each message in words mostly its own (one that
# tells nothing new says at most half of its words for the first time). Its agents apologising and
# promising, caught since the eleventh session: a promise never kept; the one whose customer says
# "like I said", since the twelfth.
_TWENTIETH_MISSED = {"stuck__retail_order_id_loop_b20"}
# The twenty-first batch's (bench/blind_agents/README.md), the corpus's kinds and scheduled workers, replayed
# as it arrived: no healthy run flagged. Missed: a search tool answering "Could not find [X]. Similar:
# [...]" as its output, not as a failure, to eight rewordings (caught since the tenth session, as an
# answer of nothing); a service agent asking again for an order
# id in new words (caught since the twelfth session: the customer says she told it four times); a
# lookup answered "No more results." seven times, at 1 a heartbeat (each heartbeat
# one look at a source that answered nothing before: an idle wake-up, which the rule cannot tell from a
# model turn); a crawler's 503 pages, each naming its own URL, at 10 (four heartbeats: too few for
# its flat metric to count four samples).
_TWENTYFIRST_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: {"stuck__fever_swinton_same_lookup_b21"},
    5: set(),
    10: {"stuck__crawler_same_503_page_b21"},
}
# The twenty-second batch's (bench/blind_agents/README.md), the corpus's kinds and scheduled workers,
# replayed as it arrived: no healthy run escalated; two pollers whose quiet stretches outlast four flat
# samples at their own heartbeats and at 1 flagged (no_progress), not escalated. Missed: the same
# "Could not find [X]. Similar: [...]" output to reworded searches (caught since the tenth session);
# at 1 a heartbeat a lookup answered
# "No more results." again (an idle wake-up, as the twenty-first's); at 10 a writer rewriting one
# section (too few heartbeats for its flat metric).
_QUIET22 = {
    "healthy__poller_ap_inbox_quiet_b22": ["no_progress"],
    "healthy__poller_ci_pipeline_deploys_b22": ["no_progress"],
}
_TWENTYSECOND: dict[int | None, dict[str, list[str]]] = {None: _QUIET22, 1: _QUIET22, 5: {}, 10: {}}
_TWENTYSECOND_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: {"stuck__fever_ann_richards_lookup_repeat_b22"},
    5: set(),
    10: {"stuck__writer_onboarding_section5_rewrite_b22"},
}
# The twenty-third batch's (bench/blind_agents/README.md), the corpus's kinds and scheduled workers,
# replayed as it arrived: no healthy run flagged at its own heartbeats; regrouped, an SFTP poller's
# quiet night (the same listing answered an empty list for hours, each wake-up one look) is merged
# into busy heartbeats with a flat metric. Missed: an airline agent promising a cancellation it never
# makes, each message worded anew (caught since: a promise never kept); a coding agent wandering
# into environment set-up, each command failing in a new way (task drift, no pattern of calls).
_SFTP23 = "healthy__poller_sftp_invoices_quiet_night_b23"
_TWENTYTHIRD: dict[int | None, dict[str, list[str]]] = {
    None: {},
    1: {_SFTP23: ["no_progress"]},
    5: {_SFTP23: ["empty", "no_progress"]},
    10: {_SFTP23: ["empty"]},
}
_TWENTYTHIRD_ESCALATED: dict[int | None, set[str]] = {None: set(), 1: {_SFTP23}, 5: {_SFTP23}, 10: set()}
# The twenty-fourth batch's (bench/blind_agents/README.md), written blind after the two rules above,
# with SQL, browser and MCP agents and sync jobs, replayed as it arrived: no healthy run escalated at
# its own heartbeats; a coding agent probing three optional modules, each "No module named", before
# it installs one was flagged (read as a rewording: since then one word changed and each failure
# naming back its own asks about another thing); regrouped, an SFTP poller's quiet stretch, as the
# twenty-third's. Missed: a service agent promising a return it never submits (caught since).
_SFTP24 = "healthy__poller_sftp_quiet_then_files_b24"
_TWENTYFOURTH: dict[int | None, dict[str, list[str]]] = {
    None: {},
    1: {_SFTP24: ["no_progress"]},
    5: {},
    10: {_SFTP24: ["empty", "recurring"]},
}
_TWENTYFOURTH_ESCALATED: dict[int | None, set[str]] = {None: set(), 1: {_SFTP24}, 5: set(), 10: set()}
# The twenty-fifth batch's (bench/blind_agents/README.md), seventeen kinds, written blind after the
# promise rule: as it arrived, two service agents whose ``say`` tool answers nothing were flagged
# (``empty``: since then a tool named for a message to a person is silent by design). Missed: a
# coding agent drifting into lint and CI work (no pattern of calls to see). The one re-verifying a
# finished task is caught since the fourteenth session: its checks since the last edit answer as
# they did (cycle's re-checks).
_TWENTYFIFTH_MISSED = {"stuck__coding_task_drift_b25"}
# The twenty-seventh batch's (bench/blind_agents/README.md), scheduled workers and agents, written blind
# and replayed as it arrived: every stuck run flagged after its onset at every grouping. A health
# monitor with no metric, its checks answering the same each wake-up (`df`, `systemctl is-active`),
# is escalated at every grouping: a watcher with no metric whose rounds answer alike cannot be told
# from a job polled while frozen (README, Troubleshooting). An alert pager with no metric is flagged
# at its own heartbeats and escalated when regrouped at 5 and 10; at 5, an inbox's quiet night and a
# sync's no-change wake-ups merged into busy heartbeats are flagged too.
_MON27, _PAGER27 = "healthy__monitor_ok_nometric_b27", "healthy__pager_quiet_nometric_b27"
_WATCH27 = ["loop", "recurring", "cycle"]
_TWENTYSEVENTH: dict[int | None, dict[str, list[str]]] = {
    None: {_MON27: _WATCH27, _PAGER27: ["recurring"]},
    1: {_MON27: _WATCH27},
    5: {
        _MON27: _WATCH27,
        _PAGER27: ["repeat", "empty", "recurring"],
        "healthy__inbox_triage_quiet_b27": ["repeat"],
        "healthy__sync_nochange_b27": ["repeat"],
    },
    10: {_MON27: _WATCH27, _PAGER27: ["repeat", "empty", "recurring"]},
}
_TWENTYSEVENTH_ESCALATED: dict[int | None, set[str]] = {
    None: {_MON27},
    1: {_MON27},
    5: {_MON27, _PAGER27},
    10: {_MON27, _PAGER27},
}
# The twenty-sixth batch's (bench/blind_agents/README.md), the corpus's kinds (24 coding runs), written
# blind and replayed as it arrived: no healthy run flagged at any grouping; its telecom agent promising
# roaming in words the act list lacked is caught since, and its order id asked for again since the
# twelfth session (the customer: "I just told you"), and its ``str_replace`` whose "did not appear
# verbatim" comes as an output (an edit that says it changed nothing failed) since the twelfth
# session too. Missed: drift into rebuilding freetype and a reproduction script rewritten
# cosmetically. One file's region re-read through view, sed, awk and head behind `cd /testbed &&`
# is a `cycle` since the eighteenth session, when a `cd` before a command stopped making it a write.
_TWENTYSIXTH_MISSED = {
    "stuck__matplotlib_3d_visible_wanders_into_freetype_b26",
    "stuck__xarray_weighted_bool_repro_rewrites_b26",
}
_TWENTYTHIRD_MISSED = {"stuck__sphinx_napoleon_env_setup_wander_b23"}
# Missed: a transcript waited on behind a 404 each wake-up, regrouped; a question reworded in 17 searches.
_TWELFTH_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: {"stuck__meeting_notes_waits_for_missing_transcript", "stuck__support_kb_search_never_finds"},
    5: {"stuck__meeting_notes_waits_for_missing_transcript"},
    10: {"stuck__meeting_notes_waits_for_missing_transcript", "stuck__support_kb_search_never_finds"},
}
KNOWN: dict[int | None, dict[str, list[str]]] = {
    None: {
        **_ALWAYS,
        **_TENTH,
        **_IDLE,
        **_ELEVENTH,
        **_ELEVENTH_FLAT,
        "healthy__embeddings_indexer_kb": ["loop", "no_progress"],
        "healthy__gmail_support_inbox": ["repeat", "empty"],
        "healthy__k8s_rollout_watch": ["repeat"],
        "healthy__kafka_cdc_consumer": ["repeat"],
        "healthy__stripe_event_watcher": ["repeat"],
        "healthy__gitlab_mr_stack_merge": ["no_progress"],
        "healthy__s3_landing_ingest": ["no_progress"],
        "healthy__backfill_then_checksum_verify": ["no_progress"],
        "healthy__job_poller_training": ["loop", "recurring"],
        "healthy__poller_inbox": ["no_progress", "loop"],
        "healthy__setup_then_tests": ["no_progress"],
    },
    1: {
        **_ALWAYS,
        **_TENTH,
        **_IDLE,
        **_ELEVENTH,
        **_ELEVENTH_FLAT,
        "healthy__embeddings_indexer_kb": ["loop", "no_progress"],
        "healthy__oncall_triage_watch": ["loop"],
        "healthy__restore_drill_rds": ["cycle"],
        "healthy__k8s_rollout_watch": ["repeat"],
        "healthy__code_search_token_refresh": ["loop"],
        "healthy__grep_quota_helper": ["repeat"],
        "healthy__gitlab_mr_stack_merge": ["no_progress"],
        "healthy__s3_landing_ingest": ["no_progress"],
        "healthy__kafka_cdc_consumer": ["repeat"],
        "healthy__backfill_then_checksum_verify": ["no_progress"],
        "healthy__job_poller_training": ["loop", "recurring"],
        "healthy__poller_inbox": ["no_progress", "loop", "recurring"],
        "healthy__setup_then_tests": ["no_progress"],
    },
    5: {
        **_ALWAYS,
        **_TENTH,
        **_IDLE,
        **_ELEVENTH,
        "healthy__oncall_triage_watch": ["loop", "cycle", "recurring"],
        "healthy__writer_design_doc_sections": ["no_progress"],
        "healthy__gmail_support_inbox": ["repeat", "empty"],
        "healthy__kafka_cdc_consumer": ["repeat"],
        "healthy__stripe_event_watcher": ["repeat"],
        "healthy__gitlab_mr_stack_merge": ["no_progress"],
        "healthy__s3_landing_ingest": ["no_progress"],
        "healthy__backfill_then_checksum_verify": ["no_progress"],
        "healthy__job_poller_training": ["loop", "recurring"],
        "healthy__poller_inbox": ["no_progress", "loop"],
        "healthy__setup_then_tests": ["no_progress"],
    },
    10: {
        **_ALWAYS,
        **_TENTH,
        **_ELEVENTH,
        "healthy__oncall_triage_watch": ["loop", "cycle", "recurring"],
        "healthy__es_scroll_export": ["repeat"],
        "healthy__slack_access_requests": ["repeat"],
        "healthy__gmail_support_inbox": ["repeat", "empty"],
        "healthy__stripe_event_watcher": ["repeat", "empty"],
        "healthy__k8s_rollout_watch": ["error_rate", "recurring_error"],
        "healthy__job_poller_training": ["loop", "recurring"],
        "healthy__poller_inbox": ["loop"],
    },
}
# The Kafka consumer's metric rose in the heartbeat before the one it would be escalated in (a
# human is not called while it rose within the fewest stuck heartbeats that escalate); at one
# action a heartbeat that is one action before, and its repeat of three polls spans more.
# An idle wake-up (a heartbeat that only looked and found no work) is no evidence of being stuck: the
# data-quality suite's quiet last heartbeats, and the on-call watch's quiet rounds, once a source it
# looked at before answers nothing again (at its own heartbeats); at 1 a heartbeat, the Stripe watcher.
del KNOWN[None]["healthy__data_quality_recheck"]
# Gmail's ``{"resultSizeEstimate": 0}`` is an answer of nothing: at 1 a heartbeat the support inbox's
# looks between its mails are idle wake-ups (at its own, 5 or 10, the looks come 4-7 a heartbeat).
del KNOWN[1]["healthy__gmail_support_inbox"]
KNOWN[None]["healthy__oncall_triage_watch"] = ["loop", "recurring", "cycle"]
# A SQL statement that writes (``UPDATE ... SET``, ``INSERT INTO``) is a write whatever the tool is
# called, and its answer is keyed by the exact statement, as an act's is: batches by id range, each
# ``UPDATE 5000`` or ``{"inserted": 500}``, are that many writes, not one result again (recurring
# flagged the two backfills at 1 and 10 actions a heartbeat until the fourteenth session).
# A wait is no busy work (fourteenth session): heartbeats that waited, only looked and saw a look
# asked before answer anew (a merge train's pipelines, a report job's pages, an OCR batch moving)
# leave no_progress to busy agents, at their own heartbeats and 5 a heartbeat.
for _name in (
    "healthy__monthly_reports_email",
    "healthy__ocr_scanned_contracts",
    "healthy__gitlab_mr_stack_merge",
    "healthy__db_backup_nightly",  # its wake-ups mostly ask again what they asked, one answering anew
):
    del KNOWN[None][_name]
del KNOWN[5]["healthy__gitlab_mr_stack_merge"]
# A request's own id is volatile by nature: the expense checker's two looks while it waits for a
# manager's reply answer alike once their requestIDs are masked (a loop, at its own heartbeats
# too), and its approvals are no longer one result again regrouped.
KNOWN[None]["healthy__expense_report_checker"] = ["loop"]
_TWELFTH[5]["healthy__expense_report_checker"] = ["loop"]
_TWELFTH[10]["healthy__expense_report_checker"] = ["loop"]
ESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__go-limiter-clock-inject",
        *_TENTH_ESCALATED,
        *(_ELEVENTH_ESCALATED - {"healthy__data_quality_recheck"}),
    },
    1: {
        "healthy__job_poller_training",
        "healthy__poller_inbox",
        "healthy__log_search_checkout_500s",
        "healthy__es_scroll_export",
        "healthy__kafka_cdc_consumer",
        "healthy__slack_access_requests",
        *(
            _TENTH_ESCALATED
            - {"healthy__k8s_rollout_watch_pods", "healthy__gh_ci_wait", "healthy__gmail_support_inbox"}
        ),
        *(_ELEVENTH_ESCALATED - {"healthy__browser_vendor_portal_entry", "healthy__data_quality_recheck"}),
    },
    5: {"healthy__go-limiter-clock-inject", *_TENTH_ESCALATED, *_ELEVENTH_ESCALATED},
    10: _TENTH_ESCALATED | (_ELEVENTH_ESCALATED - {"healthy__data_quality_recheck"}),
}

# The twenty-eighth batch's (bench/blind_agents/README.md), the corpus's kinds and scheduled workers,
# written blind and replayed as it arrived: no healthy run escalated at any grouping. A coding agent
# whose full suite stays flat through two fixes that do not work is `no_progress` by design; a
# release-feed poller's quiet wake-ups (a JSON 304, the same line logged, the poll time touched)
# were a loop and flat before the twelfth session's rules read them as idle, and at 1 action a
# heartbeat its lone log and touch are no looks (no_progress). A Go edit that never matches, refused
# in three wordings, each first seen between reads that answer, was missed until the thirteenth
# session read each refusal as one, whatever it quotes back.
_TTL28 = {"healthy__swe_ttl_cache_full_suite": ["no_progress"]}
_TWENTYEIGHTH: dict[int | None, dict[str, list[str]]] = {
    None: _TTL28,
    1: {**_TTL28, "healthy__poller_release_feed_intermittent": ["no_progress"]},
    5: _TTL28,
    10: _TTL28,
}
# The twenty-ninth batch's (bench/blind_agents/README.md), the corpus's kinds and scheduled workers,
# written blind after all of the twelfth session's rules and replayed as it arrived: no healthy run
# escalated at the runs' own heartbeats nor at 1. An on-call pager whose resolved count plateaus is
# `no_progress` by design; a release watcher with no metric, re-reading its own state before three
# conditional requests answered 304, is flagged at its own heartbeats and escalated regrouped at 5
# and 10 (its idle wake-ups merged into heartbeats that also post a release). A WebShop option
# clicked in eight spellings, each answered "Invalid action!" as its output with no error marked,
# was missed until the twenty-fourth session (an answer that the act did nothing is a failure).
_WATCH29 = "healthy__poller_release_watch_b29"
_PAGER29 = {"healthy__pager_oncall_triage_b29": ["no_progress"], _WATCH29: ["loop", "recurring"]}
_TWENTYNINTH: dict[int | None, dict[str, list[str]]] = {
    None: _PAGER29,
    1: _PAGER29,
    5: {_WATCH29: ["loop"]},
    10: {_WATCH29: ["loop"]},
}
_TWENTYNINTH_ESCALATED: dict[int | None, set[str]] = {None: set(), 1: set(), 5: {_WATCH29}, 10: {_WATCH29}}
# The thirtieth batch's (bench/blind_agents/README.md), the corpus's kinds and scheduled workers,
# written blind after the thirteenth session's poll rule and replayed as it arrived: no healthy run
# escalated at the runs' own heartbeats nor at 1. A household agent going back to the sink for the
# second spoon and a queue worker idle between bursts are flat for four measured heartbeats
# (no_progress by design); regrouped at 5 and 10, the queue worker's idle long polls merge into
# busy heartbeats (repeat, empty: escalated) and a backup verifier's quiet polls into one (repeat).
# At 10 a heartbeat the re-planning migration and the section rewritten over and over span too few
# heartbeats for their flat metric to be judged.
_FLAT30 = {
    "healthy__alfworld_two_clean_spoons_drawer_b30": ["no_progress"],
    "healthy__queue_worker_refund_tickets_idle_then_burst_b30": ["no_progress"],
}
_IDLE30 = {
    "healthy__backup_verifier_pg_snapshots_b30": ["repeat"],
    "healthy__queue_worker_refund_tickets_idle_then_burst_b30": ["repeat", "empty"],
}
_THIRTIETH: dict[int | None, dict[str, list[str]]] = {None: _FLAT30, 1: _FLAT30, 5: _IDLE30, 10: _IDLE30}
_QUEUE30 = {"healthy__queue_worker_refund_tickets_idle_then_burst_b30"}
_THIRTIETH_ESCALATED: dict[int | None, set[str]] = {None: set(), 1: set(), 5: _QUEUE30, 10: _QUEUE30}
_THIRTIETH_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: set(),
    10: {"stuck__ops_schema_migration_replanning_b30", "stuck__writer_postmortem_rewrites_same_section_b30"},
}
# The thirty-first batch's (bench/blind_agents/README.md), healthy runs that look stuck at a glance
# and stuck runs that are subtle, in the benchmarks' and frameworks' conventions, replayed as it
# arrived: a SageMaker job polled "InProgress" each wake-up while its log's metrics move, no sleep
# between (recurring, escalated: a wake-up is no wait the calls show); a WebShop comparison whose
# reward is 0.0 until the purchase (no_progress, escalated at its own heartbeats: a score given at
# the end is no progress metric); regrouped, a backfill's batches answered alike ("UPDATE 5000").
# Missed: CI re-run five times over the same missing credentials, a poll and the failed log between,
# each reworded; drift into linters and CI config, every command new.
_POLL31 = {"healthy__batch_training_job_poll_b31": ["recurring"]}
_THIRTYFIRST: dict[int | None, dict[str, list[str]]] = {
    None: {**_POLL31, "healthy__webshop_compare_products_b31": ["no_progress"]},
    1: {**_POLL31, "healthy__webshop_compare_products_b31": ["no_progress"]},
    5: {**_POLL31, "healthy__sql_backfill_batches_b31": ["repeat"]},
    10: {**_POLL31, "healthy__sql_backfill_batches_b31": ["repeat", "recurring", "loop", "cycle"]},
}
_THIRTYFIRST_ESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__batch_training_job_poll_b31", "healthy__webshop_compare_products_b31"},
    1: set(_POLL31),
    5: set(_POLL31),
    10: set(_POLL31),
}
_THIRTYFIRST_MISSED = {"stuck__gh_ci_rerun_no_changes_b31", "stuck__miniswe_yak_shave_drift_b31"}

# The thirty-second batch's (bench/blind_agents/README.md), replayed as it arrived and after the rules
# it led to: a rollout watched between sleeps, its status timing out while the replicas come up one
# by one, is a re-run failing alike (flagged, never escalated); a CI run polled with no sleep between
# the looks is a loop at 1 action a heartbeat; a quiet inbox's empty looks regrouped 10 a heartbeat.
_ROLLOUT32 = {"healthy__langgraph_checkout_rollout_pending_then_ready_b32": ["recurring_error"]}
_TIGHT32 = {"healthy__mcp_github_ci_run_tight_poll_in_progress_b32": ["loop", "recurring"]}
_THIRTYSECOND: dict[int | None, dict[str, list[str]]] = {
    None: _ROLLOUT32,
    1: {**_ROLLOUT32, **_TIGHT32},
    5: _ROLLOUT32,
    10: {**_ROLLOUT32, **_TIGHT32, "healthy__cron_billing_inbox_quiet_then_three_tickets_b32": ["empty"]},
}
_THIRTYSECOND_ESCALATED: dict[int | None, set[str]] = {None: set(), 1: set(_TIGHT32), 5: set(), 10: set()}
_THIRTYSECOND_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: set(),
    10: {
        "stuck__crawler_catalog_facet_permutation_trap_b32",
        "stuck__sdk_zendesk_incremental_cursor_pingpong_b32",
    },
}

# The thirty-third batch's (bench/blind_agents/README.md), replayed as it arrived: an assistant's inbox
# looked at since its last wake-up, answered nothing five wake-ups running, is the same result again;
# a dashboard monitor's quiet checks between its two acts, regrouped one or ten a heartbeat, go round.
# Missed: a section rewritten while its score wobbles under its best (its spread passes D).
_INBOX33 = {"healthy__inbox_assistant_quiet_wakeups_b33": ["recurring"]}
_DASHBOARD33 = {"healthy__dashboard_monitor_b33": ["cycle"]}
_THIRTYTHIRD: dict[int | None, dict[str, list[str]]] = {
    None: _INBOX33,
    1: _DASHBOARD33,
    5: _INBOX33,
    10: {**_INBOX33, **_DASHBOARD33},
}
_THIRTYTHIRD_MISSED = {"stuck__rewrite_intro_score_wobbles_b33"}

# The thirty-fourth batch's (bench/blind_agents/README.md), of the corpus's kinds, replayed as it arrived:
# an ALFWorld search for two CDs whose score stays 0 through twenty empty drawers (no_progress, never
# escalated). Missed: a hand-off bounced between three agents, a drift into lint and tox (regrouped
# 10 a heartbeat, an option clicked that the page does not have, answered "Invalid action!", was
# missed too until the twenty-fourth session). The same wrong answer submitted
# again between new searches is escalated since an answer refused is a failure (fifteenth session).
_CDS34 = {"healthy__alfworld_two_cds_in_safe_b34": ["no_progress"]}
_THIRTYFOURTH: dict[int | None, dict[str, list[str]]] = {None: _CDS34, 1: _CDS34, 5: _CDS34, 10: {}}
_MISSED34 = {
    "stuck__airline_handoff_pingpong_cancel_b34",
    "stuck__sphinx_manpage_yak_shaving_b34",
}

# The thirty-fifth batch's (bench/blind_agents/README.md), replayed as it arrived, asked for hard cases:
# plateaus that rise later and shares that dip (no_progress before the rise, escalated where the
# plateau outlasts two recoveries: a multi-hop search, a mypy cleanup, a permit form fixed field by
# field, a rollout waiting on a node group's scale-up, each failing alike meanwhile), and daily
# watchers whose checks answer the same (a backup verifier, a certificate and a dependency check:
# recurring and cycle, the watchers of Troubleshooting). Missed: a certificate renewal failing the
# same way once a day (one failure a wake-up), and, but at 1 and 10, a citation checker going round.
_PLATEAU35 = {
    name: ["no_progress"]
    for name in (
        "healthy__alfworld_two_pillows_armchair_b35",
        "healthy__bench_repeat_parser_opt_b35",
        "healthy__debug_tz_offsets_b35",
        "healthy__dns_propagation_wait_b35",
        "healthy__loadtest_repeat_runs_b35",
        "healthy__multihop_eiffel_alma_mater_b35",
        "healthy__mypy_strict_plateau_b35",
        "healthy__permit_form_validation_fixes_b35",
        "healthy__shopping_checkout_field_fixes_b35",
        "healthy__support_triage_plateau_then_rise_b35",
        "healthy__training_job_plateau_then_rise_b35",
    )
}
_WATCH35 = {
    "healthy__backup_verifier_nightly_b35": ["recurring"],
    "healthy__cert_expiry_checker_b35": ["cycle"],
    "healthy__dep_checker_daily_b35": ["cycle"],
}
_OWN35 = {
    **_PLATEAU35,
    **_WATCH35,
    "healthy__flaky_ws_reconnect_triage_b35": ["no_progress", "recurring", "cycle"],
    "healthy__rollout_waiter_scaleup_b35": ["recurring_error", "no_progress"],
}
_THIRTYFIFTH: dict[int | None, dict[str, list[str]]] = {
    None: _OWN35,
    1: {**_OWN35, "healthy__etl_backfill_partition_plateau_b35": ["no_progress", "cycle"]},
    5: _OWN35,
    10: {
        "healthy__backup_verifier_nightly_b35": ["recurring"],
        "healthy__cert_expiry_checker_b35": ["cycle", "recurring"],
        "healthy__dep_checker_daily_b35": ["cycle", "recurring"],
        "healthy__flaky_ws_reconnect_triage_b35": ["cycle"],
        "healthy__loadtest_repeat_runs_b35": ["no_progress"],
        "healthy__multihop_eiffel_alma_mater_b35": ["no_progress"],
        "healthy__permit_form_validation_fixes_b35": ["no_progress"],
        "healthy__rollout_waiter_scaleup_b35": ["recurring_error"],
    },
}
_ESCALATED35 = {
    *_WATCH35,
    "healthy__multihop_eiffel_alma_mater_b35",
    "healthy__mypy_strict_plateau_b35",
    "healthy__permit_form_validation_fixes_b35",
    "healthy__rollout_waiter_scaleup_b35",
}
_THIRTYFIFTH_ESCALATED: dict[int | None, set[str]] = {
    None: _ESCALATED35,
    1: {
        "healthy__cert_expiry_checker_b35",
        "healthy__dep_checker_daily_b35",
        "healthy__etl_backfill_partition_plateau_b35",
        "healthy__flaky_ws_reconnect_triage_b35",
    },
    5: _ESCALATED35,
    10: set(_WATCH35),
}
_MISSED35 = {"stuck__cert_renew_fails_daily_b35"}
_THIRTYFIFTH_MISSED: dict[int | None, set[str]] = {
    None: _MISSED35 | {"stuck__citation_verify_one_ref_loop_b35"},
    1: _MISSED35,
    5: _MISSED35 | {"stuck__citation_verify_one_ref_loop_b35"},
    10: _MISSED35,
}

# A flat stretch holding an idle wake-up had nothing to do in it (fourteenth session): pollers, inboxes
# and queues whose quiet wake-ups come between their work are no busy agents with a flat metric. Their
# no_progress findings before it, by grouping (None: the finding gone; else the kinds left).
_QUIET_WITHIN: dict[int | None, dict[str, list[str] | None]] = {
    None: {
        "healthy__flaky_test_quarantiner": None,
        "healthy__monitoring_cve_mention_search": ["empty", "recurring"],
        "healthy__queue_worker_refund_tickets_idle_then_burst_b30": None,
        "healthy__rss_news_summariser": None,
    },
    1: {
        **dict.fromkeys(
            (
                "healthy__backlog_groomer",
                "healthy__calendar_assistant",
                "healthy__dep_update_bot",
                "healthy__flaky_test_quarantiner",
                "healthy__github_issue_triager",
                "healthy__mailbox_cleanup",
                "healthy__poller_release_feed_intermittent",
                "healthy__poller_sftp_invoices_quiet_night_b23",
                "healthy__poller_sftp_quiet_then_files_b24",
                "healthy__queue_sqs_thumbnail_worker",
                "healthy__queue_worker_refund_tickets_idle_then_burst_b30",
                "healthy__s3_landing_ingest",
                "healthy__s3_to_warehouse_loader",
                "healthy__support_inbox_responder",
                "healthy__translation_pipeline",
            )
        ),
        "healthy__embeddings_indexer_kb": ["loop"],
        "healthy__inbox_triage_quiet": ["recurring"],
        "healthy__invoice_reconciliation": ["cycle"],
        "healthy__monitoring_cve_mention_search": ["empty", "recurring"],
    },
    5: {"healthy__inbox_triage_quiet": None},
    10: {},
}
_QUIET_WITHIN_UNESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__github_issue_labeler"},
    1: {
        "healthy__backlog_groomer",
        "healthy__flaky_test_quarantiner",
        "healthy__github_issue_triager",
        "healthy__poller_sftp_invoices_quiet_night_b23",
        "healthy__poller_sftp_quiet_then_files_b24",
    },
    5: set(),
    10: set(),
}

# A watcher's round that saw something move (sixteenth session): a wake-up that only looked, each call
# once, after one that did the same, a look asked again answering anew, drops its findings of no
# visible effect as an idle wake-up does. Their findings before it, by grouping (None: gone), the runs
# no longer escalated, and a stuck crawler whose last rounds' queue depth moved, no longer flagged.
# And a status holding an empty list named for what went wrong (``"failed": []``) is a status, no
# envelope around nothing: a data-quality suite's checks, each "no row failed", are no loop, and a
# writer's lint answering ``{"warnings": [], "broken_links": 0}`` no idle wake-up.
_RECHECK = {"healthy__data_quality_recheck": None}
_MOVED_ROUND: dict[int | None, dict[str, list[str] | None]] = {
    None: {"healthy__batch_training_job_poll_b31": None, "healthy__emr_step_long_shuffle": None},
    1: {"healthy__log_search_checkout_500s": None, **_RECHECK},
    5: {"healthy__emr_step_long_shuffle": None, **_RECHECK},
    10: _RECHECK,
}
_MOVED_ROUND_UNESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__batch_training_job_poll_b31", "healthy__oncall_triage_watch"},
    1: {"healthy__log_search_checkout_500s"},
    5: set(_RECHECK),
    10: set(),
}
_MOVED_ROUND_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__crawler_soft_pagination_cap_b25"},
    1: set(),
    5: set(),
    10: set(),
}


# A quiet wake-up told in words that nothing came ("No new items", "0 new invoices") or that nothing
# needs doing ("0 broken anchors of 214", "All 37 packages are up to date.") is an idle one
# (seventeenth session): their findings before it, by grouping (None: gone; else the kinds left).
_NOTHING_SAID: dict[int | None, dict[str, list[str] | None]] = {
    None: {"healthy__poller_ap_inbox_quiet_b22": None, "healthy__poller_ci_pipeline_deploys_b22": None},
    1: {
        "healthy__poller_ap_inbox_quiet_b22": None,
        "healthy__poller_ci_pipeline_deploys_b22": None,
        "healthy__poller_inbox": ["loop"],
    },
    5: {},
    10: {"healthy__inbox_assistant_b38": ["empty", "recurring"]},
}

# The thirty-sixth batch (seventeenth session), written for scheduled watchers: the quiet wake-ups of a
# link checker, a sitemap watcher, a cost monitor, a dependency updater and others, and their frozen
# twins. What is left: a price watcher whose answer is the same data each wake-up (a product's JSON,
# its price unchanged) looks like a job polled while frozen; a link checker's status file written
# each round reads as a cycle; grouped 5 or 10 a heartbeat, a watcher's wake-ups ask one queue again
# within a heartbeat. Missed: a build "queued, position 1" looked at once a wake-up, and a writer
# rewriting its introduction, each time in other words.
_OWN36 = {
    "healthy__docs_link_checker_b36": ["cycle", "no_progress"],
    "healthy__npm_dependency_updater_b36": ["repeat"],
    "healthy__oncall_quiet_shift_b36": ["near_repeat"],
    "healthy__sitemap_etag_watcher_b36": ["near_repeat"],
    "healthy__tent_price_watcher_b36": ["no_progress", "recurring"],
}
_GROUPED36 = {
    "healthy__docs_link_checker_b36": ["cycle"],
    "healthy__invoice_queue_watcher_b36": ["repeat", "empty", "recurring"],
    "healthy__npm_dependency_updater_b36": ["repeat", "recurring"],
    "healthy__oncall_quiet_shift_b36": ["repeat", "empty", "recurring"],
    "healthy__sitemap_etag_watcher_b36": ["near_repeat"],
    "healthy__tent_price_watcher_b36": ["recurring"],
}
_THIRTYSIXTH: dict[int | None, dict[str, list[str]]] = {
    None: _OWN36,
    1: {
        "healthy__docs_link_checker_b36": ["cycle"],
        "healthy__tent_price_watcher_b36": ["no_progress", "recurring"],
    },
    # Grouped 5, its product read at a wake-up after its price feed's news starts the count again
    # once (twenty-third session): by the time it is flagged its flat metric is seen too.
    5: {**_GROUPED36, "healthy__tent_price_watcher_b36": ["recurring", "no_progress"]},
    10: {
        **_GROUPED36,
        "healthy__oncall_quiet_shift_b36": ["repeat", "empty", "recurring", "near_repeat"],
    },
}
_THIRTYSIXTH_ESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__tent_price_watcher_b36"},
    1: {"healthy__tent_price_watcher_b36"},
    5: {
        "healthy__invoice_queue_watcher_b36",
        "healthy__npm_dependency_updater_b36",
        "healthy__oncall_quiet_shift_b36",
        "healthy__tent_price_watcher_b36",
    },
    10: {"healthy__oncall_quiet_shift_b36", "healthy__tent_price_watcher_b36"},
}
_THIRTYSIXTH_MISSED = {"stuck__ci_build_queued_b36", "stuck__whitepaper_intro_rewrites_b36"}

# A page read again at a wake-up after new work starts recurring's count again (twenty-third
# session): regrouped 5 a heartbeat, a one-call-a-heartbeat agent toggling one compiler option back
# and forth opens its heartbeats with the compiler's run after edits still new to the window, and
# loses the one flag it had (it was never escalated).
_WAKE_READ_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: {"stuck__mcp_config_oscillation_b25"},
    10: set(),
}


# The thirty-seventh batch (eighteenth session, written blind in the corpus's own kinds: SWE-agent
# and mini-swe-agent, tau-bench and tau2, WebShop, FEVER and HotpotQA, ALFWorld; 36 healthy, 24
# stuck): every stuck run escalated at every grouping. Flagged: a suite run before and after a fix
# elsewhere, its pass count flat for four samples (no_progress), and a WebShop agent going back
# to the results and to each product's page between its tabs (cycle; escalated one a heartbeat).
_MOTO37 = {"healthy__swea_moto_sse_suite_twice_b37": ["no_progress"]}
_WEBSHOP37 = {"healthy__webshop_compare_four_earbuds_b37": ["cycle"]}
_THIRTYSEVENTH: dict[int | None, dict[str, list[str]]] = {
    None: {**_MOTO37, **_WEBSHOP37},
    1: {**_MOTO37, **_WEBSHOP37},
    5: {**_MOTO37, **_WEBSHOP37},
    10: _WEBSHOP37,
}
_THIRTYSEVENTH_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {"healthy__webshop_compare_four_earbuds_b37"},
    5: set(),
    10: set(),
}


# The thirty-eighth batch (eighteenth session, written blind after every change above: scheduled
# agents whose quiet wake-ups answer nothing or all clear and that act now and then, and coding
# agents running tests; 24 healthy, 16 stuck). Flagged, and escalated: watchers with no metric
# whose check answers the same each wake-up (a certificate's days left and its ticket found again,
# `systemctl is-active` answered "active" each hour, a nightly SQL check carrying the night's date,
# a dependency check finding its open PR), an invoice reminder whose count stays flat for days
# (`no_progress`); regrouped, a pager watcher and a support queue whose quiet wake-ups merge.
# Missed: a poller whose cursor stopped while its metric (items posted) still rises, a nightly
# check whose date stopped (found before its onset), an hourly restart failing alike (one a
# wake-up, found before its onset at 1 and own).
_B38 = "healthy__{}_b38"
_SAME38 = {
    _B38.format("cert_expiry"): ["repeat"],
    _B38.format("dependency_checker"): ["loop"],
    _B38.format("job_supervisor"): ["repeat"],
    _B38.format("nightly_orders_check"): ["cycle"],
}
_THIRTYEIGHTH: dict[int | None, dict[str, list[str]]] = {
    None: {**_SAME38, _B38.format("invoice_reminder"): ["no_progress"]},
    1: {
        **_SAME38,
        _B38.format("invoice_reminder"): ["no_progress"],
        _B38.format("pager_watcher"): ["near_repeat"],
    },
    5: {
        _B38.format("cert_expiry"): ["repeat", "recurring"],
        _B38.format("dependency_checker"): ["loop"],
        _B38.format("job_supervisor"): ["repeat", "recurring"],
        _B38.format("nightly_orders_check"): ["cycle", "recurring"],
        _B38.format("pager_watcher"): ["repeat", "empty", "recurring"],
        _B38.format("support_queue"): ["near_repeat"],
    },
    10: {
        _B38.format("cert_expiry"): ["repeat", "recurring", "loop", "cycle"],
        _B38.format("dependency_checker"): ["loop", "repeat", "empty", "recurring"],
        _B38.format("inbox_assistant"): ["empty", "recurring", "near_repeat"],
        _B38.format("job_supervisor"): ["repeat", "recurring"],
        _B38.format("nightly_orders_check"): ["cycle", "recurring"],
        _B38.format("pager_watcher"): ["repeat", "empty", "recurring", "near_repeat"],
        _B38.format("support_queue"): ["near_repeat"],
    },
}
_ESCALATED38 = set(_SAME38)
_THIRTYEIGHTH_ESCALATED: dict[int | None, set[str]] = {
    None: _ESCALATED38 | {_B38.format("invoice_reminder")},
    1: _ESCALATED38 | {_B38.format("invoice_reminder")},
    5: _ESCALATED38 | {_B38.format("pager_watcher"), _B38.format("support_queue")},
    10: _ESCALATED38 | {_B38.format("pager_watcher")},
}
_MISSED38 = {"stuck__nightly_check_stale_date_b38", "stuck__poller_cursor_stuck_b38"}
_THIRTYEIGHTH_MISSED: dict[int | None, set[str]] = {
    None: _MISSED38 | {"stuck__restart_loop_b38"},
    1: _MISSED38 | {"stuck__restart_loop_b38"},
    5: _MISSED38,
    10: _MISSED38,
}


# The thirty-ninth batch (nineteenth session, written blind after this session's first changes, in
# the corpus's kinds, hard cases both ways; 36 healthy, 24 stuck). Flagged: a household agent
# opening cabinet after cabinet under a flat count of subgoals (`no_progress`, escalated but at 1
# and 10 actions a heartbeat), a WebShop comparison going back through the results page between
# each product's tabs (`cycle`, escalated), a test whose fix drops the pass count before it rises
# and a retail exchange whose metric waits on the customer (`no_progress`), a grep sweep failing
# alike in one file after another (`recurring_error`). Missed: a coding agent drifting into
# pre-commit set-up, and one editing a file the tests do not import.
_B39 = "healthy__{}_b39"
_FLAT39 = {
    _B39.format("alfworld_clean_mug_many_cabinets"): ["no_progress"],
    _B39.format("httpx_keylog_grep_sweep"): ["recurring_error"],
}
_WAITING39 = {
    _B39.format("dateutil_isoparse_fraction_progress"): ["no_progress"],
    _B39.format("retail_exchange_return_orders_progress"): ["no_progress"],
}
_SHOP39 = _B39.format("webshop_laptop_backpack_back_and_forth")
_THIRTYNINTH: dict[int | None, dict[str, list[str]]] = {
    None: {**_FLAT39, **_WAITING39, _SHOP39: ["cycle", "recurring"]},
    1: {**_FLAT39, **_WAITING39, _SHOP39: ["cycle"]},
    5: {**_FLAT39, **_WAITING39, _SHOP39: ["cycle", "recurring"]},
    10: {**_FLAT39, _SHOP39: ["cycle", "recurring"]},
}
_THIRTYNINTH_ESCALATED: dict[int | None, set[str]] = {
    None: {_SHOP39, _B39.format("alfworld_clean_mug_many_cabinets")},
    1: {_SHOP39},
    5: {_SHOP39, _B39.format("alfworld_clean_mug_many_cabinets")},
    10: {_SHOP39},
}
_THIRTYNINTH_MISSED = {
    "stuck__moto_s3_startafter_missing_commit_b39",
    "stuck__more_itertools_precommit_env_drift_b39",
}
# The fortieth batch (nineteenth session, written blind after this session's changes but the last:
# scheduled agents with long quiet stretches, their calls and answers the same wake-up after wake-up;
# 26 healthy, 14 stuck). Escalated as it arrived, at its own grouping: 12 of 26. An envelope's own
# "ok": true, "0 messages available (queue=..., consumers=1)" and a mirror's `aws s3 sync` (a write:
# its silence says nothing) then spared two (a mailer, a Slack watcher). Still escalated: watchers
# whose check answers the same data each wake-up (a certificate's days left, a replica's lag, a
# report not due yet), a daily job's "already sent" round, writers re-reading an outline, a mirror
# writing nothing each hour under a flat metric, a webhook queue answering 204 with no body (the
# silence of a tool gone dark). Regrouped 5 or 10 a heartbeat, quiet wake-ups merge into busy
# heartbeats. Missed: an alerter whose post fails alike each wake-up and an order import re-reading
# one poison message (both flagged before their onsets at 1 and own).
_B40 = "healthy__{}_b40"
_REGROUPED40 = {  # the same at 5 and at 10 actions a heartbeat
    _B40.format("cms-blog-series-writer"): ["recurring", "loop", "cycle"],
    _B40.format("daily-sales-report"): ["loop", "cycle", "recurring"],
    _B40.format("disk-usage-fleet"): ["near_repeat"],
    _B40.format("invoice-jobctl-worker"): ["repeat", "empty", "recurring", "near_repeat"],
    _B40.format("jira-to-warehouse-sync"): ["repeat", "empty", "recurring", "near_repeat"],
    _B40.format("kpi-digest-report"): ["repeat", "recurring"],
    _B40.format("nightly-backup-verifier"): ["loop", "cycle", "recurring"],
    _B40.format("pg-replica-lag"): ["repeat", "recurring"],
    _B40.format("rabbit-notify-mailer"): ["repeat", "empty"],
    _B40.format("redis-geocode-worker"): ["repeat", "empty"],
    _B40.format("rss-security-advisories"): ["recurring", "loop", "cycle"],
    _B40.format("slack-oncall-mentions"): ["repeat", "empty", "recurring", "near_repeat"],
    _B40.format("sqs-orders-worker"): ["near_repeat"],
    _B40.format("thumbnail-job-api"): ["repeat", "empty"],
    _B40.format("translation-task-puller"): ["repeat", "empty", "recurring", "near_repeat"],
    _B40.format("weekly-dependency-pr"): ["loop", "cycle", "recurring"],
}
_FORTIETH: dict[int | None, dict[str, list[str]]] = {
    None: {
        _B40.format("cms-blog-series-writer"): ["recurring", "loop", "cycle"],
        _B40.format("daily-sales-report"): ["loop"],
        _B40.format("handbook-section-writer"): ["loop"],
        _B40.format("kpi-digest-report"): ["repeat"],
        _B40.format("nightly-backup-verifier"): ["loop"],
        _B40.format("pg-replica-lag"): ["repeat"],
        _B40.format("s3-assets-mirror"): ["repeat", "no_progress"],
        _B40.format("slack-oncall-mentions"): ["near_repeat"],
        _B40.format("tls-cert-expiry"): ["repeat"],
        _B40.format("webhook-redelivery"): ["loop", "repeat", "no_progress"],
        _B40.format("weekly-dependency-pr"): ["loop"],
    },
    1: {
        _B40.format("cms-blog-series-writer"): ["recurring", "loop"],
        _B40.format("daily-sales-report"): ["loop"],
        _B40.format("disk-usage-fleet"): ["near_repeat"],
        _B40.format("handbook-section-writer"): ["no_progress", "loop", "recurring", "cycle"],
        _B40.format("jira-to-warehouse-sync"): ["near_repeat"],
        _B40.format("kpi-digest-report"): ["repeat"],
        _B40.format("nightly-backup-verifier"): ["loop"],
        _B40.format("pg-replica-lag"): ["repeat"],
        _B40.format("redis-geocode-worker"): ["near_repeat"],
        _B40.format("release-notes-writer"): ["no_progress"],
        _B40.format("rss-security-advisories"): ["loop", "cycle", "recurring"],
        _B40.format("s3-assets-mirror"): ["repeat", "no_progress"],
        _B40.format("slack-oncall-mentions"): ["near_repeat"],
        _B40.format("tls-cert-expiry"): ["repeat"],
        _B40.format("webhook-redelivery"): ["loop"],
        _B40.format("weekly-dependency-pr"): ["loop"],
    },
    5: {
        **_REGROUPED40,
        _B40.format("github-issue-labeler"): ["repeat", "empty"],
        _B40.format("gmail-support-triage"): ["repeat", "empty"],
        _B40.format("handbook-section-writer"): ["no_progress", "loop"],
        _B40.format("hubspot-to-sheet-sync"): ["repeat", "empty"],
        _B40.format("release-notes-writer"): ["no_progress"],
        _B40.format("s3-assets-mirror"): ["repeat"],
        _B40.format("stripe-dispute-watch"): ["repeat", "empty", "recurring"],
        _B40.format("tls-cert-expiry"): ["repeat", "recurring"],
        _B40.format("webhook-redelivery"): ["loop", "repeat", "empty"],
    },
    10: {
        **_REGROUPED40,
        _B40.format("api-health-rounds"): ["loop", "cycle"],
        _B40.format("github-issue-labeler"): ["repeat", "empty", "recurring", "near_repeat"],
        _B40.format("handbook-section-writer"): ["loop", "no_progress"],
        _B40.format("hubspot-to-sheet-sync"): ["repeat", "empty", "recurring", "near_repeat"],
        _B40.format("s3-assets-mirror"): ["repeat", "empty"],
        _B40.format("stripe-dispute-watch"): ["repeat", "empty", "recurring", "near_repeat"],
        _B40.format("tls-cert-expiry"): ["repeat", "recurring", "near_repeat", "cycle"],
        _B40.format("webhook-redelivery"): ["loop", "repeat"],
    },
}
_FORTIETH_ESCALATED: dict[int | None, set[str]] = {
    None: {
        _B40.format("cms-blog-series-writer"),
        _B40.format("daily-sales-report"),
        _B40.format("handbook-section-writer"),
        _B40.format("kpi-digest-report"),
        _B40.format("nightly-backup-verifier"),
        _B40.format("pg-replica-lag"),
        _B40.format("s3-assets-mirror"),
        _B40.format("tls-cert-expiry"),
        _B40.format("webhook-redelivery"),
        _B40.format("weekly-dependency-pr"),
    },
    1: {
        _B40.format("cms-blog-series-writer"),
        _B40.format("daily-sales-report"),
        _B40.format("disk-usage-fleet"),
        _B40.format("handbook-section-writer"),
        _B40.format("kpi-digest-report"),
        _B40.format("nightly-backup-verifier"),
        _B40.format("pg-replica-lag"),
        _B40.format("release-notes-writer"),
        _B40.format("s3-assets-mirror"),
        _B40.format("tls-cert-expiry"),
        _B40.format("webhook-redelivery"),
        _B40.format("weekly-dependency-pr"),
    },
    5: {
        _B40.format("cms-blog-series-writer"),
        _B40.format("daily-sales-report"),
        _B40.format("disk-usage-fleet"),
        _B40.format("github-issue-labeler"),
        _B40.format("handbook-section-writer"),
        _B40.format("hubspot-to-sheet-sync"),
        _B40.format("invoice-jobctl-worker"),
        _B40.format("jira-to-warehouse-sync"),
        _B40.format("kpi-digest-report"),
        _B40.format("nightly-backup-verifier"),
        _B40.format("pg-replica-lag"),
        _B40.format("rabbit-notify-mailer"),
        _B40.format("redis-geocode-worker"),
        _B40.format("rss-security-advisories"),
        _B40.format("s3-assets-mirror"),
        _B40.format("slack-oncall-mentions"),
        _B40.format("sqs-orders-worker"),
        _B40.format("stripe-dispute-watch"),
        _B40.format("thumbnail-job-api"),
        _B40.format("tls-cert-expiry"),
        _B40.format("translation-task-puller"),
        _B40.format("webhook-redelivery"),
        _B40.format("weekly-dependency-pr"),
    },
    10: {
        _B40.format("cms-blog-series-writer"),
        _B40.format("daily-sales-report"),
        _B40.format("disk-usage-fleet"),
        _B40.format("handbook-section-writer"),
        _B40.format("hubspot-to-sheet-sync"),
        _B40.format("invoice-jobctl-worker"),
        _B40.format("jira-to-warehouse-sync"),
        _B40.format("nightly-backup-verifier"),
        _B40.format("pg-replica-lag"),
        _B40.format("rss-security-advisories"),
        _B40.format("slack-oncall-mentions"),
        _B40.format("sqs-orders-worker"),
        _B40.format("stripe-dispute-watch"),
        _B40.format("tls-cert-expiry"),
        _B40.format("translation-task-puller"),
        _B40.format("weekly-dependency-pr"),
    },
}
# The SQS importer receiving the same messages again is found since the twenty-seventh session
# (a delivery's receipt handle and receive count masked).
_FORTIETH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__checkout-health-alerter_b40"},
    1: {"stuck__checkout-health-alerter_b40"},
    5: set(),
    10: set(),
}


# The forty-first batch (twentieth session, written blind at c7f644f: the corpus's kinds, hard
# cases both ways): healthy runs with an anomaly by grouping (none escalated at the run's own
# heartbeats, at 5 or at 10; two grep sweeps at 1), and the stuck runs not flagged after their onset:
# an airline agent asking the customer to confirm again and again, a telecom agent offering a
# transfer the customer keeps refusing (each message reworded, the customer's answer the same),
# and a drift into set-up.
_B41 = "healthy__{}_b41"
_FORTYFIRST_SEEN = {
    _B41.format("mini-matplotlib-grep-misses"): ["recurring_error"],
    _B41.format("mini-moto-sqs-long"): ["no_progress"],
    _B41.format("swea-dask-grep-sweep"): ["empty"],
}
_FORTYFIRST: dict[int | None, dict[str, list[str]]] = {
    None: _FORTYFIRST_SEEN,
    1: _FORTYFIRST_SEEN,
    5: _FORTYFIRST_SEEN,
    10: {k: v for k, v in _FORTYFIRST_SEEN.items() if "moto" not in k},
}
_FORTYFIRST_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {_B41.format("mini-matplotlib-grep-misses"), _B41.format("swea-dask-grep-sweep")},
    5: set(),
    10: set(),
}
_FORTYFIRST_MISSED = {
    "stuck__taub-airline-confirm-loop_b41",
    "stuck__tau2-telecom-transfer-offer-loop_b41",
    "stuck__mini-xarray-drift-into-setup_b41",
}


# The forty-second batch (twentieth session, written blind after the wake-up that saw nothing move:
# scheduled agents of every kind, watchers whose data stays, frozen jobs, poison messages): healthy
# runs with an anomaly and those escalated, by grouping (regrouped, one wake-up's calls split or
# several merged: not how a cron agent runs), and the stuck runs not flagged after their onset (a
# metric that rises while the agent redoes its work, an agent that sees what it should act on and
# only logs it: the README's Troubleshooting).
_B42 = "healthy__{}_b42"
_FORTYSECOND: dict[int | None, dict[str, list[str]]] = {
    # (Its daily audit, whose `npm outdated` and `npm audit` exit 1 to report what they found, is
    # clean at its own heartbeats since the twenty-first session: no failure, a watcher's round.)
    None: {
        _B42.format("hourly-usage-rollup"): ["empty", "no_progress"],
        _B42.format("nas-offsite-sync"): ["repeat", "no_progress"],
        _B42.format("release-watch"): ["cycle", "recurring"],
        # (Its sitemap read at each wake-up before new work: clean since the twenty-third session.)
        _B42.format("tls-expiry-watch"): ["cycle"],
    },
    1: {
        _B42.format("backup-verify"): ["loop"],
        _B42.format("changelog-writer"): ["loop", "cycle", "recurring"],
        _B42.format("cost-forecast-watch"): ["recurring", "cycle"],
        _B42.format("dependency-audit"): ["loop", "cycle", "recurring"],
        _B42.format("fx-rate-cache"): ["loop"],
        _B42.format("handbook-writer"): ["no_progress"],
        _B42.format("hourly-usage-rollup"): ["empty", "no_progress"],
        _B42.format("kafka-lag-check"): ["near_repeat", "cycle"],
        _B42.format("logrotate-check"): ["cycle"],
        _B42.format("nas-offsite-sync"): ["repeat", "no_progress"],
        _B42.format("oncall-topic-sync"): ["loop"],
        _B42.format("release-watch"): ["loop"],
        _B42.format("replica-lag-watch"): ["recurring", "cycle", "near_repeat"],
        _B42.format("sitemap-reindex-poller"): ["recurring"],
        _B42.format("stripe-payout-reconcile"): ["loop"],
        _B42.format("tls-expiry-watch"): ["cycle", "recurring"],
        _B42.format("weekly-kpi-report"): ["loop"],
    },
    5: {
        _B42.format("backup-verify"): ["loop", "cycle", "recurring"],
        _B42.format("changelog-writer"): ["loop", "cycle", "recurring"],
        _B42.format("cost-forecast-watch"): ["recurring", "cycle"],
        _B42.format("dependency-audit"): ["loop", "cycle", "recurring"],
        _B42.format("fx-rate-cache"): ["loop", "cycle", "recurring"],
        _B42.format("hourly-usage-rollup"): ["empty"],
        _B42.format("kafka-lag-check"): ["repeat", "recurring"],
        _B42.format("logrotate-check"): ["cycle", "recurring"],
        _B42.format("nas-offsite-sync"): ["repeat", "recurring"],
        _B42.format("oncall-topic-sync"): ["loop", "cycle", "recurring"],
        _B42.format("release-watch"): ["loop", "cycle", "recurring"],
        _B42.format("replica-lag-watch"): ["repeat", "recurring", "cycle"],
        _B42.format("sitemap-reindex-poller"): ["repeat", "recurring"],
        _B42.format("sqs-order-poller"): ["repeat", "empty", "recurring"],
        _B42.format("statuspage-watch"): ["repeat", "recurring"],
        _B42.format("stripe-payout-reconcile"): ["loop", "cycle", "recurring"],
        _B42.format("support-inbox-poller"): ["repeat", "empty", "recurring"],
        _B42.format("tls-expiry-watch"): ["cycle", "recurring"],
        _B42.format("translation-worker"): ["no_progress", "loop"],
        _B42.format("weekly-kpi-report"): ["loop", "cycle", "recurring"],
        _B42.format("zendesk-triage"): ["repeat", "empty", "recurring"],
    },
    10: {
        _B42.format("backup-verify"): ["loop", "cycle", "recurring"],
        _B42.format("changelog-writer"): ["loop", "cycle", "recurring"],
        _B42.format("cost-forecast-watch"): ["recurring", "cycle"],
        _B42.format("dependency-audit"): ["loop", "cycle", "recurring"],
        _B42.format("disk-usage-watch"): ["recurring"],
        _B42.format("fx-rate-cache"): ["loop", "cycle", "recurring"],
        _B42.format("hourly-usage-rollup"): ["empty"],
        _B42.format("k8s-job-pod-cleanup"): ["repeat"],
        _B42.format("kafka-lag-check"): ["repeat", "recurring", "near_repeat", "cycle"],
        _B42.format("logrotate-check"): ["cycle", "recurring"],
        _B42.format("nas-offsite-sync"): ["repeat", "recurring", "cycle"],
        _B42.format("oncall-topic-sync"): ["loop", "cycle", "recurring"],
        _B42.format("release-watch"): ["loop", "cycle", "recurring"],
        _B42.format("replica-lag-watch"): ["repeat", "recurring", "cycle", "near_repeat"],
        _B42.format("sitemap-reindex-poller"): ["repeat", "recurring"],
        _B42.format("sqs-order-poller"): ["repeat", "empty", "recurring", "near_repeat"],
        _B42.format("statuspage-watch"): ["repeat", "recurring"],
        _B42.format("stripe-payout-reconcile"): ["loop", "cycle", "recurring"],
        _B42.format("support-inbox-poller"): ["repeat", "empty", "recurring", "near_repeat"],
        _B42.format("tls-expiry-watch"): ["cycle", "recurring"],
        _B42.format("translation-worker"): ["loop", "no_progress"],
        _B42.format("weekly-kpi-report"): ["loop", "cycle", "recurring"],
        _B42.format("zendesk-triage"): ["repeat", "empty", "recurring"],
    },
}

# Regrouped, the wake-ups merged: the same runs escalated at 5 and 10 actions a heartbeat.
_B42_MERGED = {
    _B42.format("backup-verify"),
    _B42.format("changelog-writer"),
    _B42.format("cost-forecast-watch"),
    _B42.format("dependency-audit"),
    _B42.format("fx-rate-cache"),
    _B42.format("hourly-usage-rollup"),
    _B42.format("kafka-lag-check"),
    _B42.format("logrotate-check"),
    _B42.format("oncall-topic-sync"),
    _B42.format("release-watch"),
    _B42.format("replica-lag-watch"),
    _B42.format("sitemap-reindex-poller"),
    _B42.format("sqs-order-poller"),
    _B42.format("stripe-payout-reconcile"),
    _B42.format("support-inbox-poller"),
    _B42.format("tls-expiry-watch"),
    _B42.format("translation-worker"),
}
_FORTYSECOND_ESCALATED: dict[int | None, set[str]] = {
    None: {
        _B42.format("hourly-usage-rollup"),
        _B42.format("nas-offsite-sync"),
    },
    1: {
        _B42.format("backup-verify"),
        _B42.format("changelog-writer"),
        _B42.format("cost-forecast-watch"),
        _B42.format("dependency-audit"),
        _B42.format("fx-rate-cache"),
        _B42.format("hourly-usage-rollup"),
        _B42.format("kafka-lag-check"),
        _B42.format("logrotate-check"),
        _B42.format("nas-offsite-sync"),
        _B42.format("oncall-topic-sync"),
        _B42.format("release-watch"),
        _B42.format("replica-lag-watch"),
        _B42.format("stripe-payout-reconcile"),
        _B42.format("tls-expiry-watch"),
        _B42.format("weekly-kpi-report"),
    },
    5: _B42_MERGED | {_B42.format("weekly-kpi-report")},
    10: _B42_MERGED,
}
_B42_MISSED = {
    "stuck__backup-newest-stale_b42",
    "stuck__cert-renew-never_b42",
    "stuck__crm-contact-sync-cursor_b42",
    "stuck__node-exporter-dark_b42",
    "stuck__stale-issue-same-page_b42",
    "stuck__weekly-report-resend_b42",
}
_FORTYSECOND_MISSED: dict[int | None, set[str]] = {
    None: _B42_MISSED | {"stuck__docker-disk-no-prune_b42", "stuck__reindex-stale-lock_b42"},
    1: _B42_MISSED,
    5: _B42_MISSED | {"stuck__reindex-stale-lock_b42"},
    10: _B42_MISSED,
}


# Batch 43 (60 runs of the corpus's kinds, written blind at the twenty-first session's start): grep
# sweeps of seven or nine misses before a hit, a pip install timing out three times, a reproduction
# rerun three times on one failure between edits that land elsewhere; household drawers opened empty.
_B43 = "healthy__{}_b43"
_FORTYTHIRD_SEEN = {
    _B43.format("alfworld_many_receptacles"): ["no_progress"],
    _B43.format("mini_itsdangerous_retry_install"): ["recurring_error"],
    _B43.format("mini_jinja_truncate_greps"): ["recurring_error"],
    _B43.format("swe_configparser_interp_debug"): ["recurring_error"],
    _B43.format("swe_itsdangerous_find_compare"): ["empty"],
}
_FORTYTHIRD: dict[int | None, dict[str, list[str]]] = {
    None: _FORTYTHIRD_SEEN,
    1: _FORTYTHIRD_SEEN,
    5: _FORTYTHIRD_SEEN,
    10: {k: v for k, v in _FORTYTHIRD_SEEN.items() if "alfworld" not in k},
}
_FORTYTHIRD_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {_B43.format("mini_jinja_truncate_greps"), _B43.format("swe_itsdangerous_find_compare")},
    5: set(),
    10: set(),
}
# A telecom agent offering a refuel the customer keeps refusing, each offer worded anew; a web shop
# search reworded eight times over the same listings, re-ranked.
_FORTYTHIRD_MISSED = {"stuck__telecom_refuel_refused_b43", "stuck__webshop_search_reworded_b43"}

# An answer of nothing in a few words (nineteenth session: "No jobs.", "0 matches", ``{"value":
# null}``) is one: a cost watcher reading its cache key, empty each wake-up, is idle.
_FEW_WORDS: dict[int | None, dict[str, list[str] | None]] = {
    None: {"healthy__cloud_cost_watcher": None},
    1: {"healthy__slack_access_requests": None},
    5: {},
    10: {},
}
# A wake-up that saw nothing move (twentieth session): one that only looked, each call once, at the
# very calls of the wake-up before, hearing the very answers again, none naming a state on its way
# or work taken from a queue, in a trace that gives its times. Findings before, by grouping (None:
# gone; else the kinds left), the runs no longer escalated, and the stuck runs flagged or not since:
# a hung training job polled by `squeue` (its "R" names no state in words) is missed at its own
# grouping; an alerter retrying its revoked webhook and a restart loop are now flagged after onset.
_SAW_NOTHING_MOVE: dict[int | None, dict[str, list[str] | None]] = {
    None: {
        "healthy__alert_dedup": ["cycle"],
        "healthy__cert_expiry_b38": ["recurring", "cycle", "loop"],
        "healthy__cert_expiry_checker_b35": ["recurring", "cycle"],
        "healthy__cms-blog-series-writer_b40": ["recurring", "cycle"],
        "healthy__daily-sales-report_b40": None,
        "healthy__dep_checker_daily_b35": ["cycle", "recurring"],
        "healthy__dependency_checker_b38": None,
        "healthy__handbook-section-writer_b40": None,
        "healthy__job_supervisor_b38": ["recurring"],
        "healthy__kpi-digest-report_b40": None,
        "healthy__monitoring_price_drop_watch": None,
        "healthy__nightly-backup-verifier_b40": None,
        "healthy__ops_rabbitmq_depth_autoscale": ["no_progress"],
        "healthy__pg-replica-lag_b40": None,
        "healthy__price_drop_watcher": ["recurring", "cycle"],
        "healthy__social_media_scheduler": None,
        "healthy__tls-cert-expiry_b40": None,
        "healthy__weekly-dependency-pr_b40": None,
    },
    1: {
        "healthy__cert_expiry_b38": ["recurring"],
        "healthy__job_supervisor_b38": ["recurring"],
        "healthy__kpi-digest-report_b40": None,
        "healthy__monitoring_price_drop_watch": None,
        "healthy__ops_rabbitmq_depth_autoscale": ["no_progress"],
        "healthy__pg-replica-lag_b40": ["recurring"],
        "healthy__tls-cert-expiry_b40": ["near_repeat", "cycle"],
    },
    5: {
        "healthy__cert_expiry_checker_b35": ["recurring", "cycle"],
        "healthy__dep_checker_daily_b35": ["cycle", "recurring"],
    },
    10: {},
}
_SAW_NOTHING_MOVE_UNESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__alert_dedup",
        "healthy__cert_expiry_checker_b35",
        "healthy__daily-sales-report_b40",
        "healthy__dependency_checker_b38",
        "healthy__handbook-section-writer_b40",
        "healthy__kpi-digest-report_b40",
        "healthy__monitoring_price_drop_watch",
        "healthy__nightly-backup-verifier_b40",
        "healthy__ops_rabbitmq_depth_autoscale",
        "healthy__pg-replica-lag_b40",
        "healthy__price_drop_watcher",
        "healthy__tls-cert-expiry_b40",
        "healthy__weekly-dependency-pr_b40",
    },
    1: {
        "healthy__disk-usage-fleet_b40",
        "healthy__kpi-digest-report_b40",
        "healthy__monitoring_price_drop_watch",
        "healthy__ops_rabbitmq_depth_autoscale",
        "healthy__pg-replica-lag_b40",
    },
    5: {"healthy__cert_expiry_checker_b35"},
    10: set(),
}
# An answer of nothing is no ground covered for near_repeat but as the same call answered so again
# within its heartbeat (twenty-third session): a worker's and a watcher's quiet wake-ups asking a
# queue or an inbox from a moving cursor (regrouped 5 or 10 a heartbeat, several wake-ups ask the
# same call again within one: judged as before).
_NOTHING_READ: dict[int | None, dict[str, list[str] | None]] = {
    None: {"healthy__slack-oncall-mentions_b40": None},
    1: {
        "healthy__jira-to-warehouse-sync_b40": None,
        "healthy__pager_watcher_b38": None,
        "healthy__redis-geocode-worker_b40": None,
        "healthy__slack-oncall-mentions_b40": None,
    },
    5: {},
    10: {},
}
# A call retried right after a wait is backing off, its first N + 1 retries (twenty-third session):
# a rollout polled through "pending" with sleeps between is no error recurring.
_ROLLOUT = "healthy__langgraph_checkout_rollout_pending_then_ready_b32"
_BACKING_OFF: dict[int | None, dict[str, list[str] | None]] = {
    None: {_ROLLOUT: None},
    1: {"healthy__bucket_sync_outage_b49": ["recurring_error", "error_rate"]},
    5: {_ROLLOUT: None},
    10: {_ROLLOUT: None},
}
# A stretch found on a flat metric alone whose looks kept answering anew gets flat_grace (one more
# stuck heartbeat) before a human is called: these busy runs' metric rose within it, or the run ended.
_FLAT_GRACE_UNESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__at-tobool-rounds-mini_b45",
        "healthy__bisect_flaky_scheduler_t18",
        "healthy__browser_expense_report_t18",
        "healthy__mm-timedelta-mini_b45",
        "healthy__mypy_strict_plateau_b35",
        "healthy__permit_form_validation_fixes_b35",
        "healthy__rq-stripauth-wronghyp-swea_b45",
        "healthy__search_index_refresher",
    },
    1: {"healthy__bisect_flaky_scheduler_t18", "healthy__browser_expense_report_t18"},
    5: {
        "healthy__at-tobool-rounds-mini_b45",
        "healthy__mm-timedelta-mini_b45",
        "healthy__mypy_strict_plateau_b35",
        "healthy__permit_form_validation_fixes_b35",
        "healthy__rq-stripauth-wronghyp-swea_b45",
    },
    10: set(),
}
_SAW_NOTHING_MOVE_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__slurm_job_hung_poll_b31"},
    1: set(),
    5: set(),
    10: set(),
}
_SAW_NOTHING_MOVE_FOUND: dict[int | None, set[str]] = {
    None: {"stuck__checkout-health-alerter_b40", "stuck__restart_loop_b38"},
    1: {"stuck__checkout-health-alerter_b40", "stuck__restart_loop_b38"},
    5: set(),
    10: set(),
}

# An envelope's own "ok": true is no answer (nineteenth session, from batch 40): a Slack watcher's
# quiet channel, `{"ok": true, "messages": []}`, one action a heartbeat, is no longer escalated.
_FEW_WORDS_UNESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {"healthy__slack_access_requests"},
    5: set(),
    10: set(),
}

# A quiet wake-up speaks for its looks and those before it as a rise does (seventeenth session): a
# watcher's finding at its next, busy heartbeat, made of its quiet rounds, is dropped (answers of
# nothing only while it opens by polling the quiet sources again, eighteenth). And a JSON report
# whose every field named for what went wrong is 0 or empty (``{"broken": 0, "broken_links": []}``)
# is all clear. Findings before, by grouping (None: gone; else the kinds left), and the runs no
# longer escalated.
_AFTER_QUIET: dict[int | None, dict[str, list[str] | None]] = {
    None: {
        "healthy__alert_dedup": ["loop", "cycle", "recurring"],
        "healthy__calendar_crm_sync": None,
        "healthy__ci_wait_long_queue": None,
        "healthy__docs_link_checker_b36": ["no_progress"],
        "healthy__expense_report_checker": None,
        "healthy__feed_reader_release_notes_since": None,
        "healthy__inbox_assistant_quiet_wakeups_b33": None,
        "healthy__monitor_ok_nometric_b27": ["cycle", "loop", "recurring"],
        "healthy__monitoring_cve_mention_search": ["empty"],
        "healthy__npm_dependency_updater_b36": None,
        "healthy__oncall_quiet_shift_b36": None,
        "healthy__oncall_triage_watch": None,
        "healthy__pager_quiet_nometric_b27": None,
        "healthy__poller_release_watch_b29": None,
        "healthy__sitemap_etag_watcher_b36": None,
        "healthy__social_media_scheduler": ["loop", "recurring", "cycle"],
    },
    1: {
        "healthy__docs_link_checker_b36": None,
        "healthy__emr_step_long_shuffle": ["recurring", "cycle"],
        "healthy__expense_report_checker": ["loop"],
        "healthy__feed_reader_release_notes_since": ["recurring"],
        "healthy__inbox_support_triage_quiet": None,
        "healthy__invoice_reconciliation": None,
        "healthy__meeting_notes_summariser": None,
        "healthy__monitoring_cve_mention_search": ["empty"],
        "healthy__oncall_triage_watch": ["loop", "cycle", "recurring"],
        "healthy__poller_inbox": None,
        "healthy__poller_release_watch_b29": None,
        "healthy__rss_feed_reader": ["loop", "recurring"],
        "healthy__social_media_scheduler": ["recurring", "loop"],
    },
    5: {"healthy__inbox_assistant_quiet_wakeups_b33": None, "healthy__dependabot_alert_handler": None},
    10: {},
}
# Stuck runs a quiet wake-up's evidence leaves unflagged after their onset, none escalated before:
# a fact checker revisiting pages, a billing ping-pong and a relabelling loop, each in heartbeats
# that only looked; and one flagged now, whose loop was found before its onset (a meeting-notes
# agent waiting on a transcript, found by its failures after it).
_AFTER_QUIET_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__factcheck_stranger_things_revisit_b24", "stuck__support_billing_refunds_pingpong"},
    1: {"stuck__factcheck_stranger_things_revisit_b24", "stuck__support_billing_refunds_pingpong"},
    5: {"stuck__jira_relabel_reverify_loop"},
    10: set(),
}
_AFTER_QUIET_FOUND: dict[int | None, set[str]] = {
    None: set(),
    1: {"stuck__meeting_notes_waits_for_missing_transcript"},
    5: set(),
    10: set(),
}
_AFTER_QUIET_UNESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__calendar_crm_sync",
        "healthy__ci_wait_long_queue",
        "healthy__cloud_cost_watcher",
        "healthy__monitor_ok_nometric_b27",
        "healthy__social_media_scheduler",
    },
    1: {
        "healthy__emr_step_long_shuffle",
        "healthy__expense_report_checker",
        "healthy__inbox_support_triage_quiet",
        "healthy__invoice_reconciliation",
        "healthy__meeting_notes_summariser",
        "healthy__poller_inbox",
        "healthy__rss_feed_reader",
    },
    5: set(),
    10: set(),
}


# Batch 44 (60 runs of the corpus's non-coding kinds, written blind at the twenty-first session):
# no healthy run with an anomaly at any grouping. Missed: a certificate offered again to a customer
# who refuses it and her ids asked for again, each message worded anew; three runs whose metric
# rose just before they went round (the rise speaks for the stretch it falls in), by 10 actions a
# heartbeat flagged after all.
_FORTYFOURTH_MISSED: dict[int | None, set[str]] = {
    None: {
        "stuck__air_certificate_refused_b44",
        "stuck__air_reask_ids_b44",
        "stuck__air_update_seats_retry_b44",
        "stuck__ret_order_lookup_cycle_b44",
        "stuck__ws_chair_bounce_b44",
    },
    10: {"stuck__air_certificate_refused_b44", "stuck__air_reask_ids_b44"},
}
_FORTYFOURTH_MISSED[1] = _FORTYFOURTH_MISSED[5] = _FORTYFOURTH_MISSED[None]


# Batch 45 (40 long coding runs, written blind at the twenty-first session): four healthy runs
# whose tests-passing count stays flat through a hard middle of 30 actions, `no_progress`, escalated
# at their own heartbeats and at 5 (by design: a metric flat for six heartbeats of a busy agent);
# missed, two drifts into environment set-up and two runs writing one new reproduction script after
# another, each printing the same few short lines.
_B45_FLAT = {
    f"healthy__{name}_b45": ["no_progress"]
    for name in (
        "at-tobool-rounds-mini",
        "dj-duration-editfail-swea",
        "mm-timedelta-mini",
        "rq-stripauth-wronghyp-swea",
    )
}
_FORTYFIFTH: dict[int | None, dict[str, list[str]]] = {None: _B45_FLAT, 1: _B45_FLAT, 5: _B45_FLAT, 10: {}}
_FORTYFIFTH_ESCALATED: dict[int | None, set[str]] = {
    None: set(_B45_FLAT),
    1: set(),
    5: set(_B45_FLAT),
    10: set(),
}
_FORTYFIFTH_MISSED = {
    "stuck__at-envdrift-swea_b45",
    "stuck__ck-reproscripts-mini_b45",
    "stuck__dj-envdrift-mini_b45",
    "stuck__mm-reproscripts-swea_b45",
}


# Batch 46 (60 runs of the corpus's kinds, written blind at the twenty-second session): missed, an
# option offered again to a customer who refuses it (each message worded anew), a submission
# rephrased after the harness ignored it, and identity lookups repeated four times in a 20-action
# conversation (recurring needs five).
_FORTYSIXTH_MISSED = {
    "stuck__airline_refused_option_b46",
    "stuck__submit_not_recognized_b46",
    "stuck__telecom_reverify_loop_b46",
}


# Batch 47 (60 runs, most of them customer service, written blind at the twenty-second session): no
# healthy run with an anomaly; missed, a payment method asked for again and again in new words.
_FORTYSEVENTH_MISSED = {"stuck__airline_reask_payment_b47"}


# Batch 48 (60 runs of the corpus's kinds, written blind at the twenty-third session): no healthy
# run with an anomaly at any grouping. Missed: code read again and again with shifting ranges and
# other flags, never edited; an editor's replacement missing time after time with views between
# (each view an answer of the editor); a customer asked again for what they gave, a permission
# granted again, a sum worked out again in other words; places revisited in a house; a fact looked
# up under other words, each answer one seen before; a loop begun eight actions before the end.
_FORTYEIGHTH_MISSED = {
    "stuck__alf_revisit_cabinets_b48",
    "stuck__fever_sharapova_reworded_b48",
    "stuck__mini_semver_grep_loop_b48",
    "stuck__retail_refund_calc_spin_b48",
    "stuck__retail_reverify_loop_b48",
    "stuck__swe_invoicer_nomatch_loop_b48",
    "stuck__swe_lru_view_grep_loop_b48",
    "stuck__swe_mdtable_late_loop_b48",
    "stuck__telecom_permission_regrant_b48",
}


# Batch 49 (60 scheduled agents of the brief's kinds, half with a metric, their own wake-ups with
# times; written blind at the twenty-third session), replayed as it arrived. At their wake-ups:
# escalated, a sync through a 45-minute outage (three wake-ups of nothing but timeouts, the dark
# tool's surface) and a release poller reading its cursor back at each wake-up (a timestamp, masked:
# the same short answer while the cursor moves); flagged, a crawler through 429s (error_rate), a
# copier's index build between batches, a grant writer revising sections on a flat metric.
# Regrouped, wake-ups split or merged: pagers, crawlers and writers reading their plan again within
# a heartbeat. Missed: a poller whose cursor the feed ignores, ingesting nothing new each wake-up
# (the feed says so in its answer), and, regrouped, a writer cycling two style checks.
_B49 = "healthy__{}_b49"
_FORTYNINTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        _B49.format("bucket_sync_outage"): ["recurring_error", "error_rate", "no_progress"],
        _B49.format("docs_crawler_429"): ["error_rate"],
        _B49.format("events_copier"): ["recurring", "loop"],
        _B49.format("grant_writer_revision"): ["no_progress"],
        _B49.format("release_feed_poller"): ["recurring"],
    },
    1: {
        _B49.format("api_docs_writer"): ["recurring"],
        _B49.format("backup_monitor_compaction"): ["no_progress"],
        _B49.format("bucket_sync_outage"): ["recurring_error"],
        _B49.format("contract_pager"): ["recurring"],
        _B49.format("docs_crawler_429"): ["error_rate"],
        _B49.format("events_copier"): ["recurring", "loop"],
        _B49.format("forum_crawler"): ["recurring"],
        _B49.format("grant_writer_revision"): ["no_progress", "recurring"],
        _B49.format("orders_copier_index"): ["no_progress"],
        _B49.format("release_feed_poller"): ["recurring"],
        _B49.format("release_notes_writer"): ["recurring"],
        _B49.format("repo_mirror_sync"): ["cycle"],
        _B49.format("transcript_pager"): ["recurring"],
    },
    5: {
        _B49.format("api_docs_writer"): ["recurring"],
        _B49.format("bucket_sync_outage"): ["loop", "recurring_error"],
        _B49.format("contract_pager"): ["recurring"],
        _B49.format("docs_crawler_429"): ["error_rate"],
        _B49.format("drive_sync"): ["repeat", "recurring", "cycle", "near_repeat"],
        _B49.format("events_copier"): ["recurring", "loop"],
        _B49.format("forum_crawler"): ["recurring"],
        _B49.format("grant_writer_revision"): ["no_progress"],
        _B49.format("inbox_triage"): ["repeat"],
        _B49.format("invoice_inbox"): ["repeat", "recurring"],
        _B49.format("news_feed_poller"): ["loop", "no_progress"],
        _B49.format("newsletter_flood_triage"): ["repeat", "recurring"],
        _B49.format("orders_copier_index"): ["no_progress"],
        _B49.format("refund_queue"): ["repeat", "empty"],
        _B49.format("release_feed_poller"): ["loop"],
        _B49.format("release_notes_writer"): ["recurring"],
        _B49.format("repo_mirror_sync"): ["repeat", "recurring", "cycle", "near_repeat"],
        _B49.format("rss_multi_poller"): ["empty", "loop", "recurring"],
        _B49.format("status_feed_poller"): ["loop"],
        _B49.format("support_queue"): ["repeat"],
        _B49.format("transcript_pager"): ["recurring"],
    },
    10: {
        _B49.format("api_docs_writer"): ["recurring"],
        _B49.format("bucket_sync_outage"): ["loop"],
        _B49.format("contract_pager"): ["recurring"],
        _B49.format("docs_crawler_429"): ["error_rate"],
        _B49.format("drive_sync"): ["repeat", "recurring", "cycle"],
        _B49.format("events_copier"): ["recurring"],
        _B49.format("forum_crawler"): ["recurring"],
        _B49.format("grant_writer_revision"): ["recurring"],
        _B49.format("invoice_inbox"): ["repeat", "recurring"],
        _B49.format("news_feed_poller"): ["loop"],
        _B49.format("newsletter_flood_triage"): ["repeat", "recurring"],
        _B49.format("refund_queue"): ["repeat", "empty"],
        _B49.format("release_feed_poller"): ["loop", "recurring"],
        _B49.format("release_notes_writer"): ["recurring"],
        _B49.format("repo_mirror_sync"): ["repeat", "recurring", "cycle", "near_repeat"],
        _B49.format("rss_multi_poller"): ["empty", "loop", "recurring"],
        _B49.format("status_feed_poller"): ["loop"],
        _B49.format("transcript_pager"): ["recurring"],
    },
}
_FORTYNINTH_ESCALATED: dict[int | None, set[str]] = {
    None: {_B49.format("bucket_sync_outage"), _B49.format("release_feed_poller")},
    1: {
        _B49.format("bucket_sync_outage"),
        _B49.format("contract_pager"),
        _B49.format("forum_crawler"),
        _B49.format("transcript_pager"),
    },
    5: {
        _B49.format("api_docs_writer"),
        _B49.format("contract_pager"),
        _B49.format("drive_sync"),
        _B49.format("events_copier"),
        _B49.format("forum_crawler"),
        _B49.format("invoice_inbox"),
        _B49.format("release_feed_poller"),
        _B49.format("release_notes_writer"),
        _B49.format("repo_mirror_sync"),
        _B49.format("rss_multi_poller"),
        _B49.format("transcript_pager"),
    },
    10: {
        _B49.format("api_docs_writer"),
        _B49.format("contract_pager"),
        _B49.format("events_copier"),
        _B49.format("forum_crawler"),
        _B49.format("invoice_inbox"),
        _B49.format("release_feed_poller"),
        _B49.format("release_notes_writer"),
        _B49.format("repo_mirror_sync"),
        _B49.format("rss_multi_poller"),
        _B49.format("transcript_pager"),
    },
}
_FORTYNINTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__poller_cursor_format_b49"},
    1: set(),
    5: {"stuck__poller_cursor_format_b49", "stuck__writer_stylecheck_cycle_b49"},
    10: {"stuck__poller_cursor_format_b49", "stuck__writer_stylecheck_cycle_b49"},
}


# Batch 50 (60 runs of the corpus's kinds, healthy ones busy or repetitive on the surface; written
# blind at the twenty-fourth session's start) has no healthy run with any anomaly at any grouping,
# and every stuck run flagged since an answer that an act did nothing is a failure: no pins.
#
# The twenty-fourth session's acts and memory: an act confirmed in a line is keyed by its call, its
# times masked (a support bot closing each new ticket acts on new tickets: live round 47); a look
# answered in a line that reads back what a write stored is the agent's memory (a poller's cursor);
# a verb as often a noun after a word picking one is the noun (``backup.latest_set`` reads). What
# that changed in the batches before: a few healthy runs lost findings or their escalation (a
# release poller reading back its cursor, a cost watcher its own alert marks, a GDPR processor
# deleting each new request's records); at the runs' own heartbeats no stuck run lost its
# escalation, regrouped 1, 5 and 10 a heartbeat four, two and one did (crawlers in a calendar trap
# storing new pages, a disk check appending its log line, an incident filed again: each still
# flagged) and two, one and one gained it; and three once missed are flagged.

_ACTS_AND_MEMORY: dict[int | None, dict[str, list[str] | None]] = {
    None: {
        "healthy__events_copier_b49": ["loop"],
        "healthy__flaky_ws_reconnect_triage_b35": ["no_progress", "recurring"],
        "healthy__gdpr_deletion_processor": ["no_progress"],
        "healthy__nightly_orders_check_b38": ["recurring", "cycle"],
        "healthy__release_feed_poller_b49": None,
    },
    1: {
        "healthy__cloud_cost_watcher": None,
        "healthy__events_copier_b49": ["loop"],
        "healthy__flaky_ws_reconnect_triage_b35": ["no_progress", "recurring"],
        "healthy__gdpr_deletion_processor": ["recurring", "no_progress"],
        "healthy__inbox_triage_quiet": None,
        "healthy__kafka-lag-check_b42": ["near_repeat"],
        "healthy__nightly_orders_check_b38": ["recurring"],
        "healthy__release_feed_poller_b49": None,
        "healthy__tls-expiry-watch_b42": ["recurring", "cycle"],
    },
    5: {
        "healthy__drive_sync_b49": ["repeat", "cycle", "near_repeat"],
        "healthy__events_copier_b49": ["loop"],
        "healthy__flaky_ws_reconnect_triage_b35": ["no_progress", "recurring"],
        "healthy__gdpr_deletion_processor": ["no_progress"],
        "healthy__nightly_orders_check_b38": ["recurring", "cycle"],
        "healthy__tls-expiry-watch_b42": ["recurring", "cycle"],
    },
    10: {
        "healthy__drive_sync_b49": ["repeat", "cycle"],
        "healthy__events_copier_b49": ["loop"],
        "healthy__flaky_ws_reconnect_triage_b35": None,
        "healthy__kafka-lag-check_b42": ["repeat", "recurring", "near_repeat"],
        "healthy__nightly_orders_check_b38": ["recurring", "cycle"],
        "healthy__release_feed_poller_b49": ["loop"],
        "healthy__tls-expiry-watch_b42": ["recurring", "cycle"],
    },
}
_ACTS_AND_MEMORY_UNESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__release_feed_poller_b49",
    },
    1: {
        "healthy__cloud_cost_watcher",
        "healthy__flaky_ws_reconnect_triage_b35",
        "healthy__gdpr_deletion_processor",
    },
    5: {
        "healthy__events_copier_b49",
    },
    10: {
        "healthy__events_copier_b49",
    },
}
_ACTS_AND_MEMORY_FOUND: dict[int | None, set[str]] = {
    None: {
        "stuck__cert_renew_fails_daily_b35",
        "stuck__poller_cursor_format_b49",
    },
    1: {
        "stuck__cert_renew_fails_daily_b35",
    },
    5: {
        "stuck__cert_renew_fails_daily_b35",
    },
    10: {
        "stuck__cert_renew_fails_daily_b35",
        "stuck__nightly_check_stale_date_b38",
    },
}

# A flat metric over a stretch that only reads, each look answered anew and no one call most of it,
# is a search at any pace (until the twenty-fifth session only under two actions a sample): a coding
# agent reading file after file before its first fix. What that changed in the batches before: a few
# healthy runs lost their no_progress (an ALFWorld agent going round receptacles, a sitemap crawler,
# regrouped 1 a backup monitor and a nightly backup); no escalation of either label changed, and one
# stuck run, rewording a search whose every answer echoes its query, is not flagged regrouped 5.
_READING: dict[int | None, dict[str, list[str] | None]] = {
    None: {"healthy__alfworld_two_pillows_armchair_b35": None, "healthy__sitemap_crawler_docs": None},
    1: {
        "healthy__backup_monitor_compaction_b49": None,
        "healthy__db_backup_nightly": None,
        "healthy__sitemap_crawler_docs": None,
    },
    5: {"healthy__alfworld_two_pillows_armchair_b35": None},
    10: {},
}
_READING_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: {"stuck__search_reworded_no_hit_t18"},
    10: set(),
}

# A thing's own id (a Gmail message's 16 hex digits, a job's UUID, in a field named for an id) is
# content, no digest (live round 48's inbox bot and render worker were escalated as if each listing
# were the last). What that changed in the batches before: a triage bot forwarding an auto-reply
# that answers each forward, a new message each time, is no longer flagged (its inbox listing,
# one new id each wake-up, was "the same result" only with the ids masked); regrouped 1 a social
# scheduler's posts, each with its own id, also go round (`cycle`).
_IDS: dict[int | None, dict[str, list[str] | None]] = {
    None: {},
    1: {"healthy__social_media_scheduler": ["recurring", "cycle"]},
    5: {},
    10: {},
}
_IDS_MISSED = {"stuck__triage_autoreply_loop_b27"}

# A lookup answered as before by its tool (a style guide, a glossary, a schema), with something new
# written or acted on between each two askings, is a reference consulted before each new item, no
# page landed on again (blind batch 53's writers and labellers). What that changed in the batches
# before: three docs writers and a docs crawler lost their recurring (two and three of them
# escalated no more, regrouped 5 and 10); regrouped, a few other runs' findings changed order or kind
# (a flat price watcher's `no_progress` comes first); two stuck runs are flagged after their onset
# now (a style check cycled, a CMS paged back and forth), one regrouped 1 lost its escalation.
_CONSULTED: dict[int | None, dict[str, list[str] | None]] = {
    None: {"healthy__tent_price_watcher_b36": ["no_progress"]},
    1: {
        "healthy__api_docs_writer_b49": None,
        "healthy__docs_crawler_dev_b51": None,
        "healthy__emr_step_long_shuffle": ["cycle"],
        "healthy__grant_writer_revision_b49": ["no_progress"],
        "healthy__release_notes_writer_b49": None,
        "healthy__tent_price_watcher_b36": ["no_progress"],
    },
    5: {
        "healthy__api_docs_writer_b49": None,
        "healthy__docs_crawler_dev_b51": None,
        "healthy__release_notes_writer_b49": None,
        "healthy__tent_price_watcher_b36": ["no_progress", "cycle"],
    },
    10: {
        "healthy__api_docs_writer_b49": None,
        "healthy__docs_crawler_dev_b51": None,
        "healthy__grant_writer_revision_b49": None,
        "healthy__release_notes_writer_b49": None,
        "healthy__tent_price_watcher_b36": ["cycle", "no_progress"],
    },
}
_CONSULTED_UNESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: {"healthy__api_docs_writer_b49", "healthy__release_notes_writer_b49"},
    10: {
        "healthy__api_docs_writer_b49",
        "healthy__docs_crawler_dev_b51",
        "healthy__release_notes_writer_b49",
    },
}
_CONSULTED_FOUND: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: {"stuck__linkcheck_cms_paging_b51", "stuck__writer_stylecheck_cycle_b49"},
    10: {"stuck__writer_stylecheck_cycle_b49"},
}

# Batch 54 (60 agents that do the same job run after run: release, backup and migration watchers,
# digests over quiet channels, pollers keeping their own cursor, syncs, checkers, coding agents
# re-reading what they edit, triage bots; written blind at the twenty-sixth session at e9518f0),
# pinned as replayed with that session's rules. As it arrived, at its own wake-ups: healthy
# escalated 4 of 40, with any anomaly 10; stuck escalated 18 of 20, flagged after onset 18.
_FIFTYFOURTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__canary_promotion_watch_b54": ["no_progress"],
        "healthy__endpoint_health_sweeper_b54": ["cycle"],
        "healthy__gmail_label_digest_b54": ["empty"],
    },
    1: {
        "healthy__canary_promotion_watch_b54": ["no_progress"],
        "healthy__couch_changes_indexer_b54": ["no_progress"],
        "healthy__disk_space_guard_b54": ["cycle"],
        "healthy__file_cursor_log_shipper_b54": ["loop", "cycle"],
        "healthy__gmail_label_digest_b54": ["empty"],
        "healthy__imap_uid_poller_helpdesk_b54": ["loop"],
        "healthy__kv_cursor_orders_poller_b54": ["loop"],
        "healthy__sitemap_crawler_cursor_b54": ["no_progress"],
    },
    5: {
        "healthy__endpoint_health_sweeper_b54": ["cycle"],
        "healthy__file_cursor_log_shipper_b54": ["loop"],
        "healthy__github_issue_triage_bot_b54": ["repeat", "empty"],
        "healthy__gmail_label_digest_b54": ["empty", "recurring"],
        "healthy__imap_uid_poller_helpdesk_b54": ["loop"],
        "healthy__kv_cursor_orders_poller_b54": ["loop"],
        "healthy__pagerduty_auto_ack_bot_b54": ["repeat", "empty"],
        "healthy__stripe_invoices_etl_b54": ["loop"],
        "healthy__vendor_status_digest_b54": ["loop"],
    },
    10: {
        "healthy__disk_space_guard_b54": ["cycle"],
        "healthy__endpoint_health_sweeper_b54": ["loop", "cycle", "recurring"],
        "healthy__file_cursor_log_shipper_b54": ["loop", "cycle"],
        "healthy__github_issue_triage_bot_b54": ["repeat", "empty"],
        "healthy__gmail_label_digest_b54": ["empty"],
        "healthy__imap_uid_poller_helpdesk_b54": ["loop"],
        "healthy__kv_cursor_orders_poller_b54": ["loop"],
        "healthy__pagerduty_auto_ack_bot_b54": ["repeat", "empty"],
        "healthy__stripe_invoices_etl_b54": ["loop"],
        "healthy__vendor_status_digest_b54": ["loop", "empty"],
    },
}
_FIFTYFOURTH_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {
        "healthy__disk_space_guard_b54",
        "healthy__imap_uid_poller_helpdesk_b54",
    },
    5: {
        "healthy__endpoint_health_sweeper_b54",
        "healthy__file_cursor_log_shipper_b54",
        "healthy__imap_uid_poller_helpdesk_b54",
    },
    10: {
        "healthy__disk_space_guard_b54",
        "healthy__endpoint_health_sweeper_b54",
        "healthy__file_cursor_log_shipper_b54",
        "healthy__gmail_label_digest_b54",
        "healthy__imap_uid_poller_helpdesk_b54",
        "healthy__pagerduty_auto_ack_bot_b54",
    },
}
_FIFTYFOURTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__writer_release_notes_rewrite_loop_b54"},
    1: {"stuck__slack_digest_incidents_ratelimited_b54", "stuck__writer_release_notes_rewrite_loop_b54"},
    5: {"stuck__writer_release_notes_rewrite_loop_b54"},
    10: {
        "stuck__coding_edits_same_test_failure_b54",
        "stuck__dbt_test_same_failure_loop_b54",
        "stuck__pdf_queue_worker_cycle_b54",
        "stuck__writer_release_notes_rewrite_loop_b54",
    },
}


# Batch 55 (60 agents whose healthy work legitimately repeats a call with the same answer: suites
# rerun after fixes elsewhere, slow jobs polled, a reference consulted before each item, retries
# that recover, acts confirmed alike; half live turns; written blind at the twenty-sixth session at
# c430c8b), pinned as it arrived at b2dc476.
_FIFTYFIFTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__cert_watch_then_renew_b55": ["cycle", "recurring"],
        "healthy__ci_wait_then_merge_b55": ["loop", "recurring"],
        "healthy__deploy_api_503_recovers_b55": ["no_progress"],
        "healthy__digest_429_recovers_b55": ["loop"],
        "healthy__expense_forms_each_receipt_b55": ["recurring"],
        "healthy__export_poll_download_b55": ["recurring"],
        "healthy__migration_poll_until_done_b55": ["no_progress"],
        "healthy__quiet_then_incident_b55": ["cycle", "no_progress"],
        "healthy__runbook_per_host_patch_b55": ["cycle", "recurring"],
    },
    1: {
        "healthy__celery_idle_then_burst_b55": ["recurring"],
        "healthy__cert_watch_then_renew_b55": ["loop"],
        "healthy__ci_wait_then_merge_b55": ["loop"],
        "healthy__deploy_api_503_recovers_b55": ["no_progress"],
        "healthy__digest_429_recovers_b55": ["loop"],
        "healthy__expense_forms_each_receipt_b55": ["recurring"],
        "healthy__export_poll_download_b55": ["recurring"],
        "healthy__migration_poll_until_done_b55": ["no_progress"],
        "healthy__quiet_then_incident_b55": ["cycle", "no_progress"],
        "healthy__release_notes_per_pr_b55": ["recurring"],
        "healthy__runbook_per_host_patch_b55": ["cycle", "recurring"],
    },
    5: {
        "healthy__celery_idle_then_burst_b55": ["loop", "empty", "recurring"],
        "healthy__cert_watch_then_renew_b55": ["loop", "cycle", "recurring"],
        "healthy__ci_wait_then_merge_b55": ["loop", "recurring"],
        "healthy__deploy_api_503_recovers_b55": ["loop"],
        "healthy__digest_429_recovers_b55": ["loop"],
        "healthy__expense_forms_each_receipt_b55": ["recurring"],
        "healthy__export_poll_download_b55": ["recurring"],
        "healthy__issue_triage_poller_b55": ["loop", "recurring"],
        "healthy__quiet_then_incident_b55": ["loop", "cycle", "recurring"],
        "healthy__release_notes_per_pr_b55": ["recurring"],
        "healthy__rss_quiet_then_items_b55": ["loop", "cycle", "recurring"],
        "healthy__runbook_per_host_patch_b55": ["cycle", "recurring"],
        "healthy__status_poll_relay_incident_b55": ["loop", "recurring"],
    },
    10: {
        "healthy__celery_idle_then_burst_b55": ["loop", "empty", "recurring"],
        "healthy__cert_watch_then_renew_b55": ["loop", "cycle", "recurring"],
        "healthy__ci_wait_then_merge_b55": ["loop", "recurring"],
        "healthy__deploy_api_503_recovers_b55": ["loop"],
        "healthy__digest_429_recovers_b55": ["loop"],
        "healthy__expense_forms_each_receipt_b55": ["recurring"],
        "healthy__export_poll_download_b55": ["recurring"],
        "healthy__issue_triage_poller_b55": ["loop", "recurring"],
        "healthy__quiet_then_incident_b55": ["loop", "cycle", "recurring"],
        "healthy__release_notes_per_pr_b55": ["recurring"],
        "healthy__rss_quiet_then_items_b55": ["loop", "cycle", "recurring"],
        "healthy__runbook_per_host_patch_b55": ["cycle", "recurring"],
        "healthy__status_poll_relay_incident_b55": ["loop", "recurring"],
    },
}
_FIFTYFIFTH_ESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__ci_wait_then_merge_b55",
        "healthy__export_poll_download_b55",
        "healthy__runbook_per_host_patch_b55",
    },
    1: {
        "healthy__cert_watch_then_renew_b55",
        "healthy__ci_wait_then_merge_b55",
        "healthy__export_poll_download_b55",
        "healthy__quiet_then_incident_b55",
        "healthy__runbook_per_host_patch_b55",
    },
    5: {
        "healthy__celery_idle_then_burst_b55",
        "healthy__cert_watch_then_renew_b55",
        "healthy__ci_wait_then_merge_b55",
        "healthy__digest_429_recovers_b55",
        "healthy__export_poll_download_b55",
        "healthy__issue_triage_poller_b55",
        "healthy__quiet_then_incident_b55",
        "healthy__rss_quiet_then_items_b55",
        "healthy__runbook_per_host_patch_b55",
        "healthy__status_poll_relay_incident_b55",
    },
    10: {
        "healthy__celery_idle_then_burst_b55",
        "healthy__cert_watch_then_renew_b55",
        "healthy__export_poll_download_b55",
        "healthy__issue_triage_poller_b55",
        "healthy__quiet_then_incident_b55",
        "healthy__runbook_per_host_patch_b55",
    },
}
_FIFTYFIFTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__login_botcheck_loop_b55", "stuck__reack_same_alert_b55"},
    1: {"stuck__login_botcheck_loop_b55", "stuck__reack_same_alert_b55"},
    5: {"stuck__login_botcheck_loop_b55", "stuck__order_lookup_no_action_b55", "stuck__reack_same_alert_b55"},
    10: {"stuck__login_botcheck_loop_b55", "stuck__reack_same_alert_b55"},
}


# Batch 56 (60 agents working through MCP servers and framework tools, with the tools' real names
# and answers: browser snapshots, SQL and memory servers, GitHub, Slack, Sentry and Linear watchers,
# fetch probes, Tavily and the Agents SDK's hosted tools; 12 stuck twins of healthy ones; written
# blind at the twenty-seventh session at 2e819f5), pinned as replayed at that session's end. As it
# arrived, at its own wake-ups: healthy escalated 1 of 40, with any anomaly 3; stuck escalated 15 of
# 20, flagged after onset 15.
_FIFTYSIXTH: dict[int | None, dict[str, list[str]]] = {
    None: {},
    1: {
        "healthy__fetch_uptime_probe_status_page_b56": ["cycle", "recurring"],
        "healthy__sftp_vendor_feed_wait_then_load_b56": ["no_progress", "recurring"],
        "healthy__slack_runbook_responder_b56": ["cycle"],
    },
    5: {
        "healthy__fetch_uptime_probe_status_page_b56": ["cycle", "recurring"],
        "healthy__pagerduty_mcp_oncall_assist_b56": ["repeat", "empty", "recurring"],
        "healthy__sentry_mcp_new_issue_watch_b56": ["repeat", "recurring"],
        "healthy__sftp_vendor_feed_wait_then_load_b56": ["recurring"],
        "healthy__slack_runbook_responder_b56": ["loop"],
    },
    10: {
        "healthy__fetch_uptime_probe_status_page_b56": ["cycle", "recurring", "recurring_error"],
        "healthy__pagerduty_mcp_oncall_assist_b56": ["repeat", "empty", "recurring"],
        "healthy__sentry_mcp_new_issue_watch_b56": ["repeat", "recurring"],
        "healthy__sftp_vendor_feed_wait_then_load_b56": ["recurring"],
        "healthy__slack_runbook_responder_b56": ["loop"],
        "healthy__sqs_thumbnail_worker_idle_nights_b56": ["repeat", "empty"],
    },
}
_FIFTYSIXTH_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {"healthy__fetch_uptime_probe_status_page_b56", "healthy__sftp_vendor_feed_wait_then_load_b56"},
    5: {
        "healthy__fetch_uptime_probe_status_page_b56",
        "healthy__pagerduty_mcp_oncall_assist_b56",
        "healthy__slack_runbook_responder_b56",
    },
    10: {
        "healthy__fetch_uptime_probe_status_page_b56",
        "healthy__pagerduty_mcp_oncall_assist_b56",
        "healthy__slack_runbook_responder_b56",
    },
}
_FIFTYSIXTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__fs_mcp_investor_update_summary_churn_b56"},
    1: set(),
    5: {
        "stuck__fs_mcp_investor_update_summary_churn_b56",
        "stuck__slack_runbook_responder_state_unwritable_b56",
        "stuck__tavily_nordic_heat_pump_brief_reworded_search_b56",
        "stuck__warehouse_export_job_poller_frozen_62_b56",
    },
    10: {"stuck__fs_mcp_investor_update_summary_churn_b56"},
}


# A look after a pause answering nothing ("No new messages." after ``sleep 60``, whatever the pause
# says of itself) is a poller waiting for news, no loop (twenty-seventh session): the findings left.
_PAUSES: dict[int | None, dict[str, list[str] | None]] = {
    None: {"healthy__firmware_ci_watch_b53": ["recurring"], "healthy__poller_inbox": ["no_progress"]},
    1: {"healthy__firmware_ci_watch_b53": ["recurring"]},
    5: {"healthy__firmware_ci_watch_b53": ["recurring"], "healthy__poller_inbox": ["no_progress"]},
    10: {"healthy__firmware_ci_watch_b53": ["recurring"], "healthy__poller_inbox": None},
}

# The twenty-sixth session: a heartbeat's round over its sources, each read once, finds most of them
# quiet (a digest's channels, a vendor's status page: empty answers neither counted nor ending a
# run, and counted by recurring as a poll's, since any news); a store's select reads (an IMAP
# poller's imap.select); a ticket's transition acts; a cursor written back unchanged at a wake-up
# that found nothing is the poller's memory, no work (three pollers of batch 53). Only healthy runs
# lose findings; a stuck digest's early `empty`, before its onset, goes too.
_SOURCES: dict[int | None, dict[str, list[str] | None]] = {
    None: {
        "healthy__gmail_newsletter_labeler_b53": None,
        "healthy__inbox_support_triage_quiet": None,
        "healthy__kundenservice_inbox_b53": None,
        "healthy__stripe_ledger_sync_b53": None,
        "healthy__newsletter_digest_daily_b51": None,
        "healthy__newsletter_digest_quiet_b51": None,
    },
    1: {
        "healthy__kundenservice_inbox_b53": ["loop", "cycle"],
        "healthy__newsletter_digest_daily_b51": None,
        "healthy__newsletter_digest_quiet_b51": None,
    },
    5: {
        "healthy__crowdin_de_translator_b53": None,
        "healthy__inbox_support_triage_quiet": None,
        "healthy__issue_triage_quiet_b51": ["repeat"],
        "healthy__kundenservice_inbox_b53": ["loop", "cycle"],
        "healthy__newsletter_digest_daily_b51": None,
        "healthy__newsletter_digest_eng_b51": None,
        "healthy__newsletter_digest_quiet_b51": None,
        "healthy__queue_worker_refund_tickets_idle_then_burst_b30": ["repeat"],
    },
    10: {
        "healthy__inbox_assistant_quiet_wakeups_b33": None,
        "healthy__inbox_support_triage_quiet": None,
        "healthy__issue_triage_quiet_b51": ["repeat", "empty"],
        "healthy__issue_triage_web_b51": ["repeat"],
        "healthy__kundenservice_inbox_b53": ["loop", "cycle", "empty"],
        "healthy__newsletter_digest_daily_b51": None,
        "healthy__newsletter_digest_eng_b51": None,
        "healthy__newsletter_digest_quiet_b51": ["empty"],
        "healthy__queue_worker_refund_tickets_idle_then_burst_b30": ["repeat"],
    },
}
_SOURCES_UNESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__gmail_newsletter_labeler_b53",
        "healthy__inbox_support_triage_quiet",
        "healthy__kundenservice_inbox_b53",
        "healthy__stripe_ledger_sync_b53",
    },
    1: {"healthy__newsletter_digest_daily_b51"},
    5: {"healthy__inbox_support_triage_quiet", "healthy__issue_triage_quiet_b51"},
    10: {"healthy__inbox_support_triage_quiet", "healthy__newsletter_digest_eng_b51"},
}
# Its early `empty` gone, a digest resending a reworded digest is flagged where it sticks.
_SOURCES_FOUND: dict[int | None, set[str]] = {
    None: {"stuck__digest_send_reworded_b51"},
    1: {"stuck__digest_send_reworded_b51"},
    5: set(),
    10: set(),
}

# Batch 51 (60 scheduled agents of new kinds: invoice reconcilers, backup verifiers, price watchers,
# issue triagers, CI babysitters, digests, ETL loaders, calendar assistants, link checkers,
# translation pipelines; each line a wake-up with its time, half with a metric; written blind at the
# twenty-fourth session), replayed as it arrived at 24e978b: at its own wake-ups healthy escalated
# 6 of 40 (two backup verifiers' idle rounds after their work was done, read as writes; two
# verifiers' rounds taken as loops; an issue triager reading back its cursor; an ETL loader whose
# status line says the same between sparse batches), stuck escalated 20 of 20. After this session's
# changes: healthy escalated 1 (the ETL loader), with any anomaly 4 (digests and a loader whose
# quiet polls answer nothing three times in a row: `empty`). Regrouped 5 or 10 a heartbeat, its
# wake-ups merged, 18 healthy runs are escalated. Missed at its own wake-ups: a digest resent in
# other words and an ETL warehouse gone dark (flagged before their onset only).
_FIFTYFIRST: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__etl_loader_sparse_b51": ["recurring"],
        "healthy__etl_loader_timeouts_b51": ["recurring", "empty"],
        "healthy__newsletter_digest_daily_b51": ["empty"],
        "healthy__newsletter_digest_quiet_b51": ["empty"],
    },
    1: {
        "healthy__backup_verifier_hourly_b51": ["no_progress"],
        "healthy__backup_verifier_nas01_b51": ["loop", "recurring"],
        "healthy__backup_verifier_nightly_b51": ["no_progress"],
        "healthy__backup_verifier_slow_b51": ["recurring"],
        "healthy__calendar_assistant_team_b51": ["recurring"],
        "healthy__docs_crawler_dev_b51": ["recurring"],
        "healthy__etl_loader_timeouts_b51": ["empty"],
        "healthy__invoice_reconciler_eu_b51": ["near_repeat"],
        "healthy__invoice_reconciler_ops_b51": ["loop"],
        "healthy__invoice_reconciler_usd_b51": ["cycle"],
        "healthy__newsletter_digest_daily_b51": ["empty"],
        "healthy__newsletter_digest_quiet_b51": ["empty"],
        "healthy__price_watch_batch_b51": ["loop"],
        "healthy__price_watch_tools_b51": ["loop", "cycle"],
    },
    5: {
        "healthy__backup_verifier_hourly_b51": ["no_progress"],
        "healthy__backup_verifier_nas01_b51": ["loop", "recurring", "cycle"],
        "healthy__backup_verifier_nightly_b51": ["no_progress", "loop"],
        "healthy__backup_verifier_slow_b51": ["recurring", "loop", "cycle"],
        "healthy__calendar_assistant_exec_b51": ["loop", "recurring", "no_progress"],
        "healthy__calendar_assistant_quiet_b51": ["repeat", "empty"],
        "healthy__calendar_assistant_sales_b51": ["loop"],
        "healthy__calendar_assistant_team_b51": ["loop", "recurring"],
        "healthy__docs_crawler_dev_b51": ["recurring"],
        "healthy__etl_loader_sparse_b51": ["empty", "loop", "recurring"],
        "healthy__etl_loader_timeouts_b51": ["recurring", "empty", "loop"],
        "healthy__etl_orders_loader_b51": ["empty"],
        "healthy__invoice_reconciler_eu_b51": ["near_repeat", "cycle"],
        "healthy__invoice_reconciler_ops_b51": ["loop", "near_repeat", "no_progress"],
        "healthy__invoice_reconciler_usd_b51": ["cycle", "loop", "near_repeat"],
        "healthy__issue_triage_cursor_b51": ["loop", "cycle"],
        "healthy__issue_triage_quiet_b51": ["repeat", "empty", "recurring"],
        "healthy__issue_triage_sdk_b51": ["repeat"],
        "healthy__issue_triage_web_b51": ["repeat"],
        "healthy__link_checker_frontier_b51": ["loop"],
        "healthy__newsletter_digest_daily_b51": ["empty"],
        "healthy__newsletter_digest_eng_b51": ["empty", "recurring"],
        "healthy__newsletter_digest_quiet_b51": ["empty"],
        "healthy__price_watch_batch_b51": ["loop", "recurring", "cycle"],
        "healthy__price_watch_tools_b51": ["recurring", "cycle"],
        "healthy__summarise_translate_b51": ["repeat", "empty"],
        "healthy__translation_pipeline_de_b51": ["repeat"],
        "healthy__translation_pipeline_es_b51": ["repeat", "empty", "recurring"],
        "healthy__translation_pipeline_multi_b51": ["repeat", "empty", "recurring"],
    },
    10: {
        "healthy__backup_verifier_nas01_b51": ["loop", "recurring", "cycle"],
        "healthy__backup_verifier_nightly_b51": ["loop", "recurring", "cycle", "no_progress"],
        "healthy__backup_verifier_slow_b51": ["recurring", "loop", "cycle"],
        "healthy__calendar_assistant_exec_b51": ["loop", "recurring", "empty"],
        "healthy__calendar_assistant_quiet_b51": ["repeat", "empty", "near_repeat"],
        "healthy__calendar_assistant_sales_b51": ["loop"],
        "healthy__calendar_assistant_team_b51": ["loop", "recurring"],
        "healthy__docs_crawler_dev_b51": ["recurring"],
        "healthy__etl_loader_sparse_b51": ["empty", "loop", "recurring"],
        "healthy__etl_loader_timeouts_b51": ["recurring", "empty", "loop"],
        "healthy__etl_orders_loader_b51": ["empty", "loop"],
        "healthy__invoice_reconciler_eu_b51": ["near_repeat", "cycle"],
        "healthy__invoice_reconciler_ops_b51": ["loop", "near_repeat"],
        "healthy__invoice_reconciler_usd_b51": ["cycle", "near_repeat"],
        "healthy__issue_triage_cursor_b51": ["loop", "cycle"],
        "healthy__issue_triage_quiet_b51": ["repeat", "empty", "recurring"],
        "healthy__issue_triage_web_b51": ["repeat", "empty"],
        "healthy__link_checker_frontier_b51": ["loop"],
        "healthy__newsletter_digest_daily_b51": ["empty"],
        "healthy__newsletter_digest_eng_b51": ["empty", "recurring"],
        "healthy__newsletter_digest_quiet_b51": ["empty", "recurring"],
        "healthy__price_watch_batch_b51": ["loop", "recurring", "cycle"],
        "healthy__price_watch_tools_b51": ["loop", "cycle"],
        "healthy__stock_watch_hourly_b51": ["repeat"],
        "healthy__summarise_translate_b51": ["repeat"],
        "healthy__translation_pipeline_es_b51": ["repeat", "empty", "recurring"],
        "healthy__translation_pipeline_multi_b51": ["repeat", "empty", "recurring"],
    },
}
_FIFTYFIRST_ESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__etl_loader_sparse_b51",
    },
    1: {
        "healthy__backup_verifier_hourly_b51",
        "healthy__backup_verifier_nas01_b51",
        "healthy__backup_verifier_nightly_b51",
        "healthy__backup_verifier_slow_b51",
        "healthy__invoice_reconciler_eu_b51",
        "healthy__invoice_reconciler_ops_b51",
        "healthy__invoice_reconciler_usd_b51",
        "healthy__newsletter_digest_daily_b51",
        "healthy__price_watch_batch_b51",
        "healthy__price_watch_tools_b51",
    },
    5: {
        "healthy__backup_verifier_nas01_b51",
        "healthy__backup_verifier_nightly_b51",
        "healthy__backup_verifier_slow_b51",
        "healthy__calendar_assistant_exec_b51",
        "healthy__calendar_assistant_quiet_b51",
        "healthy__calendar_assistant_team_b51",
        "healthy__etl_loader_sparse_b51",
        "healthy__etl_loader_timeouts_b51",
        "healthy__etl_orders_loader_b51",
        "healthy__invoice_reconciler_eu_b51",
        "healthy__invoice_reconciler_ops_b51",
        "healthy__invoice_reconciler_usd_b51",
        "healthy__issue_triage_cursor_b51",
        "healthy__issue_triage_quiet_b51",
        "healthy__price_watch_batch_b51",
        "healthy__summarise_translate_b51",
        "healthy__translation_pipeline_es_b51",
        "healthy__translation_pipeline_multi_b51",
    },
    10: {
        "healthy__backup_verifier_nas01_b51",
        "healthy__backup_verifier_nightly_b51",
        "healthy__backup_verifier_slow_b51",
        "healthy__calendar_assistant_quiet_b51",
        "healthy__calendar_assistant_team_b51",
        "healthy__docs_crawler_dev_b51",
        "healthy__etl_loader_sparse_b51",
        "healthy__etl_loader_timeouts_b51",
        "healthy__etl_orders_loader_b51",
        "healthy__invoice_reconciler_eu_b51",
        "healthy__invoice_reconciler_usd_b51",
        "healthy__issue_triage_cursor_b51",
        "healthy__issue_triage_quiet_b51",
        "healthy__newsletter_digest_eng_b51",
        "healthy__price_watch_batch_b51",
        "healthy__price_watch_tools_b51",
        "healthy__translation_pipeline_es_b51",
        "healthy__translation_pipeline_multi_b51",
    },
}
_FIFTYFIRST_MISSED: dict[int | None, set[str]] = {
    None: {
        "stuck__digest_send_reworded_b51",
        "stuck__etl_warehouse_dark_b51",
    },
    1: {
        "stuck__backup_nas_dark_b51",
        "stuck__backup_reaudit_loop_b51",
        "stuck__digest_send_reworded_b51",
        "stuck__invoice_shortpay_retry_b51",
    },
    5: {
        "stuck__backup_nas_dark_b51",
        "stuck__calendar_canned_followup_b51",
        "stuck__calendar_conflict_cycle_b51",
        "stuck__etl_warehouse_dark_b51",
        "stuck__linkcheck_cms_paging_b51",
        "stuck__price_token_refresh_cycle_b51",
        "stuck__translation_store_reworded_b51",
        "stuck__triage_since_cursor_b51",
    },
    10: {
        "stuck__backup_nas_dark_b51",
        "stuck__calendar_canned_followup_b51",
        "stuck__calendar_conflict_cycle_b51",
        "stuck__etl_warehouse_dark_b51",
        "stuck__invoice_shortpay_retry_b51",
        "stuck__price_token_refresh_cycle_b51",
        "stuck__translation_store_reworded_b51",
        "stuck__triage_since_cursor_b51",
    },
}

# Batch 52 (60 coding agents in SWE-agent's and mini-swe-agent's ways: bug fixes, debugging,
# features, repository migrations, half with a metric (tests fixed, tests passing, files migrated);
# healthy runs explore for up to a dozen heartbeats before their first fix; written blind at the
# twenty-fifth session), replayed as it arrived at d229e7a: at its own heartbeats healthy escalated
# 13 of 40 (each by no_progress alone, a flat metric while it read its way in), with any anomaly 17;
# stuck escalated 17 of 20, flagged 15. A stretch that only reads is now an exploration at any pace.
_FIFTYSECOND: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__csv_suite_silent_b52": ["no_progress"],
        "healthy__duration_hours_chunked_b52": ["no_progress"],
        "healthy__envcfg_default_chain_b52": ["no_progress"],
        "healthy__headers_merge_long_explore_b52": ["no_progress"],
        "healthy__headers_same_cmd_b52": ["no_progress"],
        "healthy__humanize_pip_setup_b52": ["no_progress"],
        "healthy__logstat_json_subtasks_b52": ["no_progress"],
        "healthy__paginate_lastpage_chunked_b52": ["no_progress"],
        "healthy__retry_same_cmd_pip_b52": ["no_progress"],
        "healthy__semver_prerelease_chain_b52": ["no_progress"],
        "healthy__semver_suite_long_explore_b52": ["no_progress"],
        "healthy__slug_long_explore_silent_b52": ["no_progress"],
        "healthy__slug_truncate_suite_b52": ["no_progress"],
        "healthy__sql_comments_chain_b52": ["no_progress"],
        "healthy__texttable_subtasks_pip_b52": ["no_progress"],
        "healthy__ttl_boundary_long_explore_b52": ["no_progress"],
        "healthy__ttl_boundary_suite_b52": ["no_progress"],
    },
    1: {
        "healthy__csv_suite_silent_b52": ["no_progress"],
        "healthy__duration_hours_chunked_b52": ["no_progress"],
        "healthy__envcfg_default_chain_b52": ["no_progress"],
        "healthy__headers_merge_long_explore_b52": ["no_progress"],
        "healthy__headers_same_cmd_b52": ["no_progress"],
        "healthy__humanize_pip_setup_b52": ["no_progress"],
        "healthy__logstat_json_subtasks_b52": ["no_progress"],
        "healthy__paginate_lastpage_chunked_b52": ["no_progress"],
        "healthy__retry_same_cmd_pip_b52": ["no_progress"],
        "healthy__semver_prerelease_chain_b52": ["no_progress"],
        "healthy__semver_suite_long_explore_b52": ["no_progress", "cycle"],
        "healthy__slug_long_explore_silent_b52": ["no_progress"],
        "healthy__slug_truncate_suite_b52": ["no_progress"],
        "healthy__sql_comments_chain_b52": ["no_progress"],
        "healthy__texttable_subtasks_pip_b52": ["no_progress"],
        "healthy__ttl_boundary_long_explore_b52": ["no_progress"],
        "healthy__ttl_boundary_suite_b52": ["no_progress"],
    },
    5: {
        "healthy__csv_suite_silent_b52": ["no_progress"],
        "healthy__duration_hours_chunked_b52": ["no_progress"],
        "healthy__envcfg_default_chain_b52": ["no_progress"],
        "healthy__headers_merge_long_explore_b52": ["no_progress"],
        "healthy__headers_same_cmd_b52": ["no_progress"],
        "healthy__humanize_pip_setup_b52": ["no_progress"],
        "healthy__logstat_json_subtasks_b52": ["no_progress"],
        "healthy__paginate_lastpage_chunked_b52": ["no_progress"],
        "healthy__retry_same_cmd_pip_b52": ["no_progress"],
        "healthy__semver_prerelease_chain_b52": ["no_progress"],
        "healthy__semver_suite_long_explore_b52": ["no_progress"],
        "healthy__slug_long_explore_silent_b52": ["no_progress"],
        "healthy__slug_truncate_suite_b52": ["no_progress"],
        "healthy__sql_comments_chain_b52": ["no_progress"],
        "healthy__texttable_subtasks_pip_b52": ["no_progress"],
        "healthy__ttl_boundary_long_explore_b52": ["no_progress"],
        "healthy__ttl_boundary_suite_b52": ["no_progress"],
    },
    10: {
        "healthy__duration_hours_chunked_b52": ["no_progress"],
        "healthy__envcfg_default_chain_b52": ["no_progress"],
        "healthy__headers_merge_long_explore_b52": ["no_progress"],
        "healthy__logstat_json_subtasks_b52": ["no_progress"],
        "healthy__paginate_lastpage_chunked_b52": ["no_progress"],
        "healthy__retry_same_cmd_pip_b52": ["no_progress"],
        "healthy__semver_prerelease_chain_b52": ["no_progress"],
        "healthy__semver_suite_long_explore_b52": ["no_progress", "cycle"],
        "healthy__slug_long_explore_silent_b52": ["no_progress"],
        "healthy__sql_comments_chain_b52": ["no_progress"],
        "healthy__texttable_subtasks_pip_b52": ["no_progress"],
        "healthy__ttl_boundary_long_explore_b52": ["no_progress"],
        "healthy__ttl_boundary_suite_b52": ["no_progress"],
    },
}
_FIFTYSECOND_ESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__duration_hours_chunked_b52",
        "healthy__envcfg_default_chain_b52",
        "healthy__headers_merge_long_explore_b52",
        "healthy__paginate_lastpage_chunked_b52",
        "healthy__retry_same_cmd_pip_b52",
        "healthy__semver_prerelease_chain_b52",
        "healthy__semver_suite_long_explore_b52",
        "healthy__slug_long_explore_silent_b52",
        "healthy__texttable_subtasks_pip_b52",
        "healthy__ttl_boundary_long_explore_b52",
        "healthy__ttl_boundary_suite_b52",
    },
    1: set(),
    5: {
        "healthy__duration_hours_chunked_b52",
        "healthy__envcfg_default_chain_b52",
        "healthy__headers_merge_long_explore_b52",
        "healthy__paginate_lastpage_chunked_b52",
        "healthy__retry_same_cmd_pip_b52",
        "healthy__semver_prerelease_chain_b52",
        "healthy__semver_suite_long_explore_b52",
        "healthy__slug_long_explore_silent_b52",
        "healthy__texttable_subtasks_pip_b52",
        "healthy__ttl_boundary_long_explore_b52",
        "healthy__ttl_boundary_suite_b52",
    },
    10: {
        "healthy__duration_hours_chunked_b52",
        "healthy__headers_merge_long_explore_b52",
        "healthy__semver_suite_long_explore_b52",
    },
}
_FIFTYSECOND_MISSED: dict[int | None, set[str]] = {
    None: {
        "stuck__paging_csv_b52",
        "stuck__reread_files_retry_b52",
    },
    1: {
        "stuck__paging_csv_b52",
        "stuck__reread_files_retry_b52",
    },
    5: {
        "stuck__paging_csv_b52",
        "stuck__reread_files_retry_b52",
    },
    10: {
        "stuck__paging_csv_b52",
        "stuck__reread_files_retry_b52",
    },
}

# Batch 53 (60 agents of the five families a watchdog must never page about, twelve each: pagers,
# crawlers, queue workers, writers, pollers; half scheduled wake-ups, half live turns; written blind
# at the twenty-fifth session), replayed as it arrived at 5e82afc: at its own heartbeats healthy
# escalated 10 of 40 (four a reference looked up before each new item), with any anomaly 11; stuck
# escalated 16 of 20, flagged 16. After the reference rule: healthy escalated 7, with any anomaly 8.
_FIFTYTHIRD: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__apartment_listing_scraper_b53": ["recurring", "cycle"],
        "healthy__docs_sitemap_reindex_b53": ["no_progress"],
        "healthy__firmware_ci_watch_b53": ["loop", "recurring"],
        "healthy__gmail_newsletter_labeler_b53": ["loop"],
        "healthy__kundenservice_inbox_b53": ["loop", "empty"],
        "healthy__nginx_log_reader_b53": ["near_repeat"],
        "healthy__salesforce_query_more_b53": ["cycle"],
        "healthy__stripe_ledger_sync_b53": ["loop", "empty", "no_progress"],
    },
    1: {
        "healthy__apartment_listing_scraper_b53": ["recurring", "cycle"],
        "healthy__docs_sitemap_reindex_b53": ["cycle"],
        "healthy__firmware_ci_watch_b53": ["loop", "recurring"],
        "healthy__gmail_newsletter_labeler_b53": ["loop"],
        "healthy__helpscout_stale_closer_b53": ["no_progress", "recurring"],
        "healthy__kundenservice_inbox_b53": ["loop", "cycle", "empty"],
        "healthy__nginx_log_reader_b53": ["near_repeat"],
        "healthy__salesforce_query_more_b53": ["cycle"],
        "healthy__stripe_ledger_sync_b53": ["loop", "cycle"],
    },
    5: {
        "healthy__apartment_listing_scraper_b53": ["recurring", "cycle"],
        "healthy__crowdin_de_translator_b53": ["empty"],
        "healthy__docs_sitemap_reindex_b53": ["no_progress"],
        "healthy__firmware_ci_watch_b53": ["loop", "recurring"],
        "healthy__gitlab_nightly_watch_b53": ["recurring"],
        "healthy__gmail_newsletter_labeler_b53": ["loop"],
        "healthy__helpscout_stale_closer_b53": ["no_progress"],
        "healthy__kundenservice_inbox_b53": ["loop", "empty", "cycle"],
        "healthy__nginx_log_reader_b53": ["near_repeat"],
        "healthy__salesforce_query_more_b53": ["cycle"],
        "healthy__stripe_ledger_sync_b53": ["loop", "empty", "cycle"],
        "healthy__vendor_status_feed_b53": ["empty"],
    },
    10: {
        "healthy__apartment_listing_scraper_b53": ["recurring", "cycle"],
        "healthy__crowdin_de_translator_b53": ["empty"],
        "healthy__firmware_ci_watch_b53": ["loop", "recurring"],
        "healthy__gitlab_nightly_watch_b53": ["recurring"],
        "healthy__gmail_newsletter_labeler_b53": ["loop"],
        "healthy__kundenservice_inbox_b53": ["loop", "empty", "cycle"],
        "healthy__nginx_log_reader_b53": ["near_repeat"],
        "healthy__salesforce_query_more_b53": ["cycle"],
        "healthy__stripe_ledger_sync_b53": ["loop", "empty", "cycle"],
    },
}
_FIFTYTHIRD_ESCALATED: dict[int | None, set[str]] = {
    None: {
        "healthy__apartment_listing_scraper_b53",
        "healthy__firmware_ci_watch_b53",
        "healthy__gmail_newsletter_labeler_b53",
        "healthy__kundenservice_inbox_b53",
        "healthy__nginx_log_reader_b53",
        "healthy__salesforce_query_more_b53",
        "healthy__stripe_ledger_sync_b53",
    },
    1: {
        "healthy__apartment_listing_scraper_b53",
        "healthy__firmware_ci_watch_b53",
        "healthy__helpscout_stale_closer_b53",
        "healthy__nginx_log_reader_b53",
        "healthy__salesforce_query_more_b53",
    },
    5: {
        "healthy__apartment_listing_scraper_b53",
        "healthy__firmware_ci_watch_b53",
        "healthy__gitlab_nightly_watch_b53",
        "healthy__helpscout_stale_closer_b53",
        "healthy__kundenservice_inbox_b53",
        "healthy__nginx_log_reader_b53",
        "healthy__salesforce_query_more_b53",
        "healthy__stripe_ledger_sync_b53",
    },
    10: {
        "healthy__apartment_listing_scraper_b53",
        "healthy__firmware_ci_watch_b53",
        "healthy__gitlab_nightly_watch_b53",
        "healthy__kundenservice_inbox_b53",
        "healthy__nginx_log_reader_b53",
        "healthy__salesforce_query_more_b53",
    },
}
_FIFTYTHIRD_MISSED: dict[int | None, set[str]] = {
    None: {
        "stuck__ironleaf_blog_archive_b53",
        "stuck__msa_contract_review_b53",
        "stuck__release_summary_editor_b53",
        "stuck__support_inbox_autoreply_b53",
    },
    1: {
        "stuck__ironleaf_blog_archive_b53",
        "stuck__msa_contract_review_b53",
        "stuck__release_summary_editor_b53",
        "stuck__support_inbox_autoreply_b53",
    },
    5: {
        "stuck__ironleaf_blog_archive_b53",
        "stuck__msa_contract_review_b53",
        "stuck__release_summary_editor_b53",
        "stuck__support_inbox_autoreply_b53",
    },
    10: {
        "stuck__ironleaf_blog_archive_b53",
        "stuck__msa_contract_review_b53",
        "stuck__release_summary_editor_b53",
        "stuck__support_inbox_autoreply_b53",
    },
}


# The twenty-eighth session: a lookup asked again after new work since its last asking is a
# reference consulted before each new item, no revisit for cycle (as for recurring before): a
# writer's outline and style guide (live round 52), five healthy runs of the blind batches. Stuck
# runs keep their flags but a refunds ping-pong regrouped at 5 and 10 (flagged no more after its
# onset); some are escalated a heartbeat or a few later, and a certificate renewer's escalation
# at 1 action a heartbeat, before its onset, went.
_CONSULTED_LOOKUPS: dict[int | None, dict[str, list[str] | None]] = {
    None: {
        "healthy__apartment_listing_scraper_b53": ["recurring"],
        "healthy__runbook_per_host_patch_b55": ["recurring", "cycle"],
        "healthy__salesforce_query_more_b53": None,
    },
    1: {
        "healthy__apartment_listing_scraper_b53": ["recurring"],
        "healthy__docs_sitemap_reindex_b53": None,
        "healthy__emr_step_long_shuffle": None,
        "healthy__runbook_per_host_patch_b55": ["recurring"],
        "healthy__salesforce_query_more_b53": None,
    },
    5: {
        "healthy__apartment_listing_scraper_b53": ["recurring"],
        "healthy__issue_triage_cursor_b51": ["loop"],
        "healthy__runbook_per_host_patch_b55": ["recurring"],
        "healthy__salesforce_query_more_b53": None,
        "healthy__tent_price_watcher_b36": ["no_progress"],
    },
    10: {
        "healthy__apartment_listing_scraper_b53": ["recurring"],
        "healthy__issue_triage_cursor_b51": ["loop"],
        "healthy__runbook_per_host_patch_b55": ["recurring", "cycle"],
        "healthy__salesforce_query_more_b53": None,
        "healthy__tent_price_watcher_b36": ["no_progress"],
    },
}
_CONSULTED_LOOKUPS_UNESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__salesforce_query_more_b53"},
    1: {"healthy__apartment_listing_scraper_b53", "healthy__salesforce_query_more_b53"},
    5: {"healthy__salesforce_query_more_b53"},
    10: {"healthy__salesforce_query_more_b53", "healthy__tent_price_watcher_b36"},
}
_CONSULTED_LOOKUPS_FOUND: dict[int | None, set[str]] = {
    None: set(),
    1: {"stuck__cert-renew-never_b42"},
    5: set(),
    10: set(),
}
_CONSULTED_LOOKUPS_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: {"stuck__support_billing_refunds_pingpong"},
    10: {"stuck__support_billing_refunds_pingpong"},
}

# Batch 57 (60 agents through MCP servers, framework tools and shells: outage monitors, rate-limited
# pagers, a Tez job's poller, writers revising, customer service; 13 stuck twins of healthy ones;
# written blind at the twenty-eighth session at 948ae5d), pinned as replayed at that session's end.
# As it arrived, at its own wake-ups: healthy escalated 1 of 40, with any anomaly 1; stuck escalated
# 16 of 20, flagged after onset 17.
_FIFTYSEVENTH: dict[int | None, dict[str, list[str]]] = {
    None: {},
    1: {},
    5: {
        "healthy__linear_triage_poller_b57": ["repeat", "empty", "recurring"],
        "healthy__pagerduty_oncall_b57": ["repeat", "empty"],
    },
    10: {
        "healthy__linear_triage_poller_b57": ["repeat", "empty", "recurring"],
        "healthy__pagerduty_oncall_b57": ["repeat", "empty"],
    },
}
_FIFTYSEVENTH_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: set(),
    10: {"healthy__pagerduty_oncall_b57"},
}
_FIFTYSEVENTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__draft_blog_writer_b57", "stuck__github_ci_watcher_b57"},
    1: {"stuck__draft_blog_writer_b57", "stuck__github_ci_watcher_b57"},
    5: {"stuck__github_ci_watcher_b57"},
    10: {"stuck__github_ci_watcher_b57"},
}


# Batch 58 (60 runs in the corpus's own shape, 5 actions a heartbeat, no metric: SWE-agent and
# mini-swe-agent on real libraries' code, tau-bench and tau2, WebShop, FEVER, HotpotQA, ALFWorld;
# 10 stuck twins; written blind at the twenty-eighth session), pinned as it arrived at 948ae5d and
# as replayed at 83cf476, the same: no healthy run with an anomaly at any grouping; stuck escalated
# 26/25/26/20 of 30, flagged after onset 27 at every grouping. At the twenty-ninth session the
# telecom reboot loop (a new check showing the status bar already seen moves nothing) and the retail
# re-ask ("..., again.", "not going to repeat it") are found: flagged after onset 29.
_FIFTYEIGHTH_MISSED = {"stuck__hotpot_compare_birth_b58"}

# Batch 59 (60 runs written blind at the twenty-ninth session: 30 in the corpus's shape, coding
# runs captured on real libraries' code, customer service, ReAct, ALFWorld; 30 scheduled and
# framework agents with a metric; 20 twins), pinned as replayed at that session's end. As it
# arrived, at its own wake-ups: healthy escalated 0 of 30, with any anomaly 4; stuck escalated 27 of
# 30, flagged after onset 29. A deploy watcher and an export poller whose job stood still for four
# polls get no_progress (no escalation), as a frozen job would; a rate-limited sync regrouped one
# action a heartbeat is escalated (its wake-ups merged).
_FIFTYNINTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__checkout_deploy_watcher_b59": ["no_progress"],
        "healthy__export_job_poller_b59": ["no_progress"],
    },
    1: {
        "healthy__checkout_deploy_watcher_b59": ["no_progress"],
        "healthy__export_job_poller_b59": ["no_progress"],
        "healthy__repo_metadata_sync_b59": ["no_progress"],
    },
    5: {},
    10: {},
}
_FIFTYNINTH_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {"healthy__repo_metadata_sync_b59"},
    5: set(),
    10: set(),
}
# A fix flipped on and off around the same test (no detector sees the same edit applied again),
# and, regrouped at 10, writers and pagers whose flat metric merged with their work.
_FIFTYNINTH_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__httpx_empty_params_query_b59"},
    1: {"stuck__httpx_empty_params_query_b59"},
    5: {"stuck__httpx_empty_params_query_b59"},
    10: {
        "stuck__httpx_empty_params_query_b59",
        "stuck__risk_report_pager_b59",
        "stuck__runbook_writer_b59",
        "stuck__userguide_translator_de_b59",
    },
}
# Two healthy coding runs of batch 52 (a retry helper explored file by file, a pager's last page)
# escalated for a flat metric before the twenty-ninth session are flagged and no longer escalated
# at their own grouping and at 5 after it.
_TWENTYNINTH_UNESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__paginate_lastpage_chunked_b52", "healthy__retry_same_cmd_pip_b52"},
    1: set(),
    5: {"healthy__paginate_lastpage_chunked_b52", "healthy__retry_same_cmd_pip_b52"},
    10: set(),
}


# Batch 60 (60 runs written blind at the thirtieth session: 30 in the corpus's shape, coding runs
# captured on nine libraries not used before, customer service, ReAct, ALFWorld; 30 scheduled and
# framework agents with a metric; 22 twins), pinned as replayed at that session's end. As it
# arrived, at its own grouping: healthy escalated 0 of 30, with any anomaly 2; stuck escalated 24
# of 30, flagged after onset 28. A pool-size tuner toggling 20 and 10 and a writer toggling a
# section's versions (a write back to what it was is no bookkeeping) are found since; a release
# uploader's 503s, worded two ways, are one back-off. Left: a training monitor's checkpoint note
# broke its watcher's round once (no_progress, not escalated; spared since: _SESSION_THIRTY_ONE);
# regrouped, its same GPU all-clear
# and a feed poller's quiet polls merge; short fact-checkers end before a heartbeat of instructions
# was ignored.
_SIXTIETH: dict[int | None, dict[str, list[str]]] = {
    None: {"healthy__training_monitor_b60": ["no_progress"]},
    1: {"healthy__training_monitor_b60": ["no_progress", "recurring"]},
    5: {
        "healthy__feed_poller_b60": ["repeat", "empty"],
        "healthy__news_poller_b60": ["repeat", "empty", "recurring"],
        "healthy__training_monitor_b60": ["recurring"],
    },
    10: {
        "healthy__ci_watcher_b60": ["repeat"],
        "healthy__feed_poller_b60": ["repeat", "empty"],
        "healthy__news_poller_b60": ["repeat", "empty", "recurring"],
        "healthy__training_monitor_b60": ["recurring"],
    },
}
_SIXTIETH_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {"healthy__training_monitor_b60"},
    5: {"healthy__training_monitor_b60"},
    10: {"healthy__training_monitor_b60"},
}
_SIXTIETH_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: {"stuck__fever_baikal_depth_b60", "stuck__fever_nyiregyhaza_river_b60", "stuck__training_monitor_b60"},
    5: {"stuck__training_monitor_b60"},
    10: {"stuck__contract_summarizer_b60", "stuck__report_writer_b60", "stuck__research_agent_b60"},
}
# The thirtieth session (not batch 30): an indexer's pauses no longer make its quiet rounds busy
# (no_progress gone at its own grouping); regrouped at 10, a health checker restarting a service
# (now an act) is escalated as before but flagged only before its onset.
_SESSION_THIRTY: dict[int | None, dict[str, list[str]]] = {
    None: {"healthy__embeddings_indexer_kb": ["loop"]},
    1: {},
    5: {},
    10: {},
}
_SESSION_THIRTY_MISSED: dict[int | None, set[str]] = {
    None: set(),
    1: set(),
    5: set(),
    10: {"stuck__health_check_restart_loop_b54"},
}

# Blind batch 61 (thirty-first session; 60 runs, 30 healthy and 30 stuck, 22 twins): coding runs
# executed on eight libraries not used before (xmltodict, Unidecode, pluggy, termcolor, simplejson,
# iniconfig, pathspec, mistune; a really hung command, a dark shell), tau-bench, tau2, WebShop,
# HotpotQA, FEVER and ALFWorld; 30 scheduled and framework agents. As it arrived (2109ae1), own/1/5/
# 10: healthy escalated 0/1/1/1, with any anomaly 1/2/2/4; stuck escalated 25/25/24/21, flagged
# after onset 26/26/28/24. A drafter rewriting one section for ever (its drafts taken for a job's
# page moving) and a roaming customer asked again and again are found since. Left: a flake checker
# rerunning a test three times (repeat); a WebShop agent paging back and forth within its 15
# actions; regrouped, a log janitor's hourly rounds merge.
_SIXTY_FIRST: dict[int | None, dict[str, list[str]]] = {
    None: {"healthy__flaky_test_rerunner_b61": ["repeat"]},
    1: {"healthy__flaky_test_rerunner_b61": ["repeat"], "healthy__log_janitor_b61": ["cycle"]},
    5: {
        "healthy__flaky_test_rerunner_b61": ["repeat"],
        "healthy__log_janitor_b61": ["loop", "recurring", "cycle"],
    },
    10: {
        "healthy__flaky_test_rerunner_b61": ["repeat"],
        "healthy__k8s_rollout_watch_b61": ["repeat", "recurring_error"],
        "healthy__log_janitor_b61": ["loop", "recurring", "cycle"],
        "healthy__metrics_backfill_b61": ["recurring"],
    },
}
_SIXTY_FIRST_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {"healthy__log_janitor_b61"},
    5: {"healthy__log_janitor_b61"},
    10: {"healthy__log_janitor_b61"},
}
_SIXTY_FIRST_MISSED: dict[int | None, set[str]] = {
    None: {"stuck__flaky_test_rerunner_b61", "stuck__webshop_wool_socks_b61"},
    1: {"stuck__flaky_test_rerunner_b61", "stuck__pathspec_dark_shell_b61", "stuck__webshop_wool_socks_b61"},
    5: {"stuck__webshop_wool_socks_b61"},
    10: {
        "stuck__flaky_test_rerunner_b61",
        "stuck__graphql_paginator_b61",
        "stuck__sitemap_walker_b61",
        "stuck__stripe_payout_recon_b61",
        "stuck__webshop_wool_socks_b61",
    },
}

# Blind batch 62 (thirty-second session; 60 runs, 30 healthy and 30 stuck, 22 twins): coding runs
# executed on eight libraries not used before (humanize, isodate, semver, parse, inflection,
# jsonpointer, six, python-slugify; debuggers and interactive programs really hung), tau-bench,
# tau2, WebShop, HotpotQA, FEVER and ALFWorld; 30 scheduled and framework agents. As it arrived
# (444e9dd), own/1/5/10: healthy escalated 0/1/4/4, with any anomaly 2/4/4/4; stuck escalated
# 22/24/24/20, flagged after onset 23/23/23/24. A test run whose summary says it failed behind a
# ``| tail`` (humanize's eight edits, each 13 failed) is a failure since. Left: a GPU job's queue
# position polled for twenty wake-ups, a nightly restore verifier failing alike and saying so, an
# SLA checker regrouped; stuck, watchers that re-act on a state that will not move.
_SIXTY_SECOND: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__gpu_queue_watcher_b62": ["near_repeat", "recurring", "cycle"],
        "healthy__pg_dump_verifier_b62": ["recurring"],
    },
    1: {
        "healthy__ab_monitor_b62": ["no_progress"],
        "healthy__gpu_queue_watcher_b62": ["near_repeat", "recurring", "cycle"],
        "healthy__pg_dump_verifier_b62": ["recurring"],
        "healthy__sla_checker_b62": ["recurring"],
    },
    **{
        g: {
            "healthy__changelog_auditor_b62": ["repeat", "empty", "recurring", "near_repeat"],
            "healthy__gpu_queue_watcher_b62": ["repeat", "cycle", "recurring", "near_repeat"],
            "healthy__pg_dump_verifier_b62": ["recurring"],
            "healthy__sla_checker_b62": ["recurring"],
        }
        for g in (5, 10)
    },
}
_SIXTY_SECOND_ESCALATED: dict[int | None, set[str]] = {
    None: set(),
    1: {"healthy__sla_checker_b62"},
    **{
        g: {
            "healthy__changelog_auditor_b62",
            "healthy__gpu_queue_watcher_b62",
            "healthy__pg_dump_verifier_b62",
            "healthy__sla_checker_b62",
        }
        for g in (5, 10)
    },
}
_SIXTY_SECOND_MISSED: dict[int | None, set[str]] = {
    g: {
        "stuck__dns_propagation_retrier_b62",
        "stuck__pg_dump_verifier_b62",
        "stuck__tau2_telecom_slow_data_b62",
    }
    | ({"stuck__ab_monitor_b62"} if g is None else set())
    | ({"stuck__sla_checker_b62"} if g is not None else set())
    | ({"stuck__gpu_queue_watcher_b62"} if g != 10 else set())
    for g in (None, 1, 5, 10)
}

# Batch 63, written at 5d0408e by a helper that read only DESIGN.md and the corpus, replayed at the
# thirty-third session's end: a CDN purge verifier posting its "verified" message three wake-ups
# running (repeat), a contract reader's boilerplate pages under a flat clause count and a soak's
# paging (no_progress), a voluptuous fix whose probes reword their code (recurring_error); regrouped,
# scheduled rounds merge. Missed: a FEVER search reworded within its 7 actions, a LangGraph clause
# extractor re-reading one page each 50-second heartbeat (a watcher's round to the rules), a WebShop
# agent paging Prev / Next over two pages within its 13 actions.
_SIXTY_THIRD: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__cdn_purge_verifier_b63": ["repeat", "no_progress"],
        "healthy__langgraph_clause_extractor_b63": ["no_progress"],
        "healthy__voluptuous_range_inclusive_b63": ["recurring_error"],
    },
    1: {
        "healthy__cdn_purge_verifier_b63": ["repeat", "no_progress"],
        "healthy__grant_deadline_tracker_b63": ["no_progress"],
        "healthy__iot_firmware_rollout_b63": ["no_progress"],
        "healthy__langgraph_clause_extractor_b63": ["no_progress"],
        "healthy__voluptuous_range_inclusive_b63": ["recurring_error"],
    },
    5: {
        "healthy__grant_deadline_tracker_b63": ["repeat"],
        "healthy__tm_syncer_nightly_b63": ["repeat"],
        "healthy__voluptuous_range_inclusive_b63": ["recurring_error"],
    },
    10: {
        "healthy__cdn_purge_verifier_b63": ["repeat"],
        "healthy__computer_use_driver_install_b63": ["loop"],
        "healthy__grant_deadline_tracker_b63": ["repeat"],
        "healthy__tm_syncer_nightly_b63": ["repeat", "empty"],
        "healthy__voluptuous_range_inclusive_b63": ["recurring_error"],
    },
}
_SIXTY_THIRD_ESCALATED: dict[int | None, set[str]] = {
    g: {"healthy__grant_deadline_tracker_b63"} if g == 5 else set() for g in (None, 1, 5, 10)
}
_SIXTY_THIRD_MISSED: dict[int | None, set[str]] = {
    g: {"stuck__fever_nei_search_loop_b63", "stuck__webshop_water_bottle_b63"}
    | ({"stuck__langgraph_clause_extractor_b63"} if g is None else set())
    | ({"stuck__churn_scorer_b63"} if g == 1 else set())
    | ({"stuck__mcp_vuln_triage_b63"} if g == 5 else set())
    | ({"stuck__cdn_purge_verifier_b63", "stuck__warehouse_picklist_batcher_b63"} if g == 10 else set())
    for g in (None, 1, 5, 10)
}

# Batch 64, written at effdfc2 by a helper that read only DESIGN.md and the corpus, replayed after
# the session's fixes: a Helm chart bumper's fourth poll of a PR's checks still in progress
# (repeat, escalated), a spot bidder's flat stretch (no_progress), a tqdm fix rerunning one failing
# test after reads (recurring); regrouped, hourly rounds merge. Missed: a telecom agent's and a
# WebShop pager's short runs. (A GDPR export's cursor that never advances, polled 20 minutes apart,
# was missed as a watcher hearing the same answer until the thirty-fourth session read its page
# naming itself as the next.)
_SIXTY_FOURTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__helm_chart_bumper_b64": ["repeat"],
        "healthy__spot_bidder_b64": ["no_progress"],
        "healthy__tqdm_negative_interval_b64": ["recurring", "empty"],
    },
    1: {
        "healthy__helm_chart_bumper_b64": ["repeat"],
        "healthy__spot_bidder_b64": ["no_progress"],
        "healthy__tqdm_negative_interval_b64": ["recurring"],
    },
    5: {
        "healthy__db_vacuum_scheduler_b64": ["repeat", "empty", "recurring"],
        "healthy__oncall_handoff_b64": ["loop"],
        "healthy__terraform_drift_b64": ["repeat", "recurring"],
        "healthy__tqdm_negative_interval_b64": ["recurring", "empty"],
    },
    10: {
        "healthy__db_vacuum_scheduler_b64": ["repeat", "empty", "recurring", "near_repeat"],
        "healthy__oncall_handoff_b64": ["loop", "recurring"],
        "healthy__spot_bidder_b64": ["repeat", "recurring"],
        "healthy__terraform_drift_b64": ["repeat", "recurring", "near_repeat"],
        "healthy__tqdm_negative_interval_b64": ["recurring", "empty"],
    },
}
_SIXTY_FOURTH_ESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__helm_chart_bumper_b64"},
    1: {"healthy__helm_chart_bumper_b64", "healthy__tqdm_negative_interval_b64"},
    **{
        g: {"healthy__db_vacuum_scheduler_b64", "healthy__oncall_handoff_b64", "healthy__terraform_drift_b64"}
        for g in (5, 10)
    },
}
_SIXTY_FOURTH_MISSED: dict[int | None, set[str]] = {
    g: {"stuck__telecom_data_refuel_b64", "stuck__webshop_boots_paging_b64"}
    | ({"stuck__visa_form_browser_b64"} if g in (1, 10) else set())
    | ({"stuck__support_macro_tuner_b64"} if g == 10 else set())
    for g in (None, 1, 5, 10)
}

# Batch 65, written at 8ceb80d by a helper that read only DESIGN.md and the corpus, replayed after
# the thirty-fourth session's fixes (a page naming itself as the next, bookkeeping of a log): an
# eval job queued behind others for five wake-ups (no_progress, escalated; its twin waits on a job
# that can never be scheduled, told apart only by Slurm's reason), a shift digest posting the same
# open tickets every eight hours (escalated), a docopt fix probing three flags that fail alike
# (recurring_error); regrouped, a stock rebalancer's idle days. Missed: at 10 a heartbeat, a
# podcast transcoder's frozen job.
_SIXTY_FIFTH: dict[int | None, dict[str, list[str]]] = {
    g: {
        "healthy__docopt_option_pairs_b65": ["recurring_error"],
        "healthy__eval_gpu_queue_b65": ["no_progress"] if g in (None, 1) else ["repeat", "recurring"],
        "healthy__slack_digest_poster_b65": ["loop", "recurring"],
    }
    | ({"healthy__stock_rebalancer_b65": ["no_progress"]} if g == 5 else {})
    for g in (None, 1, 5, 10)
}
_SIXTY_FIFTH_ESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__eval_gpu_queue_b65", "healthy__slack_digest_poster_b65"},
    1: {"healthy__eval_gpu_queue_b65"},
    5: {"healthy__eval_gpu_queue_b65", "healthy__slack_digest_poster_b65"},
    10: {"healthy__slack_digest_poster_b65"},
}
_SIXTY_FIFTH_MISSED: dict[int | None, set[str]] = {
    g: {"stuck__podcast_transcoder_b65"} if g == 10 else set() for g in (None, 1, 5, 10)
}

# The thirty-fifth session: a call naming a day asks about that day (cycle); a nightly orders check
# asking about each new night, answered alike, loses its cycle (still escalated for recurring).
_SESSION_THIRTY_FIVE: dict[int | None, dict[str, list[str] | None]] = {
    g: {"healthy__nightly_orders_check_b38": ["recurring"]} if g != 1 else {} for g in (None, 1, 5, 10)
}

# The thirty-sixth session: a job queued for its turn, heard unchanged at wake-up after wake-up,
# is a quiet round (the training poller's queued eval); an HTTP answer's headers about its delivery
# (a CDN's age and edge node) are masked, so a purge verifier reading the same stale page from
# edge after edge goes round a loop (found at 10 actions a heartbeat). A restore "waiting for volume
# attachment" is no longer escalated at action 6, before its writer's onset, but at 9. A canary's
# one probe failing as a server that is down fails is a monitor's round: a bucket sync's outage,
# one action a heartbeat, is no longer escalated (flagged, its flat metric too).
_SESSION_THIRTY_SIX: dict[int | None, dict[str, list[str] | None]] = {
    g: {"healthy__training_job_poller_b66": None} if g in (None, 1) else {} for g in (None, 1, 5, 10)
}
_SESSION_THIRTY_SIX[1]["healthy__bucket_sync_outage_b49"] = ["error_rate", "recurring_error", "no_progress"]
_SESSION_THIRTY_SIX_UNESCALATED: dict[int | None, set[str]] = {
    g: {"healthy__training_job_poller_b66"} if g in (None, 1) else set() for g in (None, 1, 5, 10)
}
_SESSION_THIRTY_SIX_UNESCALATED[1].add("healthy__bucket_sync_outage_b49")
_SESSION_THIRTY_SIX_FOUND: dict[int | None, set[str]] = {
    g: ({"stuck__cdn_purge_verifier_b63"} if g == 10 else set())
    | ({"stuck__backup_restore_verifier_b66"} if g in (None, 1) else set())
    for g in (None, 1, 5, 10)
}

# Batch 66, written at 60dd016 by a helper that read only the earlier batches' files
# and the corpus, replayed after the thirty-fifth session's fixes (a call naming a day asks about
# that day; a message in the words of one before is no news of a wait): a training job's eval
# queued for four hourly polls, its status identical (repeat, escalated); a backup restore
# provisioning storage for three polls and an RSS digest appended after quiet looks (no_progress,
# not escalated); regrouped, a price watcher's same three shops each round. Missed: a restore
# waiting for a volume that never attaches, an emoji fix probing reworded names that each come
# back unchanged, a sitemap page naming itself as the next while empty.
_SIXTY_SIXTH: dict[int | None, dict[str, list[str]]] = {
    None: {
        "healthy__backup_restore_verifier_b66": ["repeat", "no_progress"],
        "healthy__rss_summariser_b66": ["no_progress"],
        "healthy__training_job_poller_b66": ["repeat"],
    },
    1: {
        "healthy__backup_restore_verifier_b66": ["repeat", "no_progress"],
        "healthy__price_watch_bot_b66": ["loop"],
        "healthy__training_job_poller_b66": ["repeat"],
    },
    5: {
        "healthy__backup_restore_verifier_b66": ["repeat"],
        "healthy__price_watch_bot_b66": ["loop", "cycle", "recurring"],
    },
    10: {
        "healthy__backup_restore_verifier_b66": ["repeat"],
        "healthy__changelog_writer_b66": ["empty"],
        "healthy__price_watch_bot_b66": ["loop", "cycle", "recurring"],
    },
}
_SIXTY_SIXTH_ESCALATED: dict[int | None, set[str]] = {
    None: {"healthy__training_job_poller_b66"},
    1: {"healthy__price_watch_bot_b66", "healthy__training_job_poller_b66"},
    5: {"healthy__price_watch_bot_b66"},
    10: {"healthy__price_watch_bot_b66"},
}
_SIXTY_SIXTH_MISSED: dict[int | None, set[str]] = {
    g: {"stuck__emoji_custom_delimiters_b66"}
    | ({"stuck__backup_restore_verifier_b66"} if g != 10 else {"stuck__search_index_reindexer_b66"})
    | ({"stuck__seo_sitemap_crawler_b66"} if g in (None, 1) else set())
    | ({"stuck__langgraph_market_research_b66"} if g == 1 else set())
    | ({"stuck__price_watch_bot_b66"} if g in (1, 5, 10) else set())
    for g in (None, 1, 5, 10)
}

# Batch 67, written at efdbdc5 by a helper that read only the earlier batches' files and the corpus,
# replayed after the thirty-sixth session's fixes (a job waiting its turn is a quiet round; an HTTP
# answer's delivery headers and an error's short hex ids are masked; a canary's one probe failing
# as a server that is down fails is a monitor's round): regrouped, an uptime canary's probe failing
# 503 three wake-ups running (recurring_error, not escalated), an onboarding
# assistant's hourly document checks, a stale-PR closer's quiet checks, a solar inverter read every
# 15 minutes (near_repeat, escalated at 5) and a flaky-test quarantiner's reruns. Missed: an airline
# upgrade asked again and again, a FEVER agent thinking in a loop, a telecom agent refreshing the
# line and asking for the same speed test (its person's numbers move), a LangGraph reconciler going
# round match / clarify / fetch whose answers carry the graph's step and a new run id, and
# regrouped at 5, a canary's repeated incident (flagged before its writer's onset).
_SIXTY_SEVENTH: dict[int | None, dict[str, list[str]]] = {
    None: {},
    1: {"healthy__agents_sdk_hr_onboarding_b67": ["no_progress"]},
    5: {
        "healthy__agents_sdk_hr_onboarding_b67": ["repeat"],
        "healthy__github_stale_pr_closer_b67": ["repeat"],
        "healthy__solar_inverter_monitor_b67": ["near_repeat"],
        "healthy__uptime_canary_b67": ["recurring_error"],
    },
    10: {
        "healthy__agents_sdk_hr_onboarding_b67": ["repeat"],
        "healthy__ci_flaky_test_quarantiner_b67": ["recurring_error"],
        "healthy__github_stale_pr_closer_b67": ["repeat"],
        "healthy__solar_inverter_monitor_b67": ["near_repeat"],
        "healthy__uptime_canary_b67": ["recurring_error"],
    },
}
_SIXTY_SEVENTH_ESCALATED: dict[int | None, set[str]] = {
    g: {"healthy__solar_inverter_monitor_b67"} if g == 5 else set() for g in (None, 1, 5, 10)
}
_SIXTY_SEVENTH_MISSED: dict[int | None, set[str]] = {
    g: {
        "stuck__airline_business_upgrade_b67",
        "stuck__fever_everest_think_loop_b67",
        "stuck__langgraph_invoice_reconciler_b67",
        "stuck__telecom_slow_data_b67",
    }
    | ({"stuck__uptime_canary_b67"} if g == 5 else set())
    | ({"stuck__langgraph_docs_indexer_b67"} if g == 10 else set())
    | ({"stuck__container_image_scanner_b67"} if g == 5 else set())
    for g in (None, 1, 5, 10)
}

# The thirty-first session: a note kept for a person at one round (a training monitor's checkpoint
# note) no longer makes a watcher's round busy; a training job's plateau is spared the same way.
# The same answer about each new thing after news is each thing's own (recurring): a GDPR
# processor's and a label digest's recurring go; a runbook patching host after host, escalated as
# before, later, is also told cycle.
_SESSION_THIRTY_ONE: dict[int | None, dict[str, list[str] | None]] = {
    None: {"healthy__training_monitor_b60": None, "healthy__training_job_plateau_then_rise_b35": None},
    1: {
        "healthy__gdpr_deletion_processor": ["no_progress"],
        "healthy__runbook_per_host_patch_b55": ["recurring", "cycle"],
    },
    5: {
        "healthy__training_job_plateau_then_rise_b35": None,
        "healthy__gmail_label_digest_b54": ["empty"],
        "healthy__runbook_per_host_patch_b55": ["recurring", "cycle"],
    },
    10: {},
}

# The thirty-second session: a test run whose summary says it failed failed, whatever exit status
# a ``| tail`` left (recurring_error): two debuggers rerunning a suite that fails the same way while
# they fix its other failures are told so once (not escalated); a moto fix missing its commit, and
# at 10 a heartbeat an edit after edit failing the same test, are flagged now. A failure the same
# call got past in its round is no failure of the round: a price watcher's rounds are looks again.
_SESSION_THIRTY_TWO: dict[int | None, dict[str, list[str] | None]] = {
    g: {
        "healthy__go_suite_failures_falling_b33": ["recurring_error"],
        "healthy__swe_slugify_failure_evolves": ["recurring_error"],
        **({"healthy__price_drop_watcher": None} if g is None else {}),
    }
    for g in (None, 1, 5, 10)
}
_SESSION_THIRTY_TWO_FOUND: dict[int | None, set[str]] = {
    g: {"stuck__moto_s3_startafter_missing_commit_b39"}
    | ({"stuck__coding_edits_same_test_failure_b54"} if g == 10 else set())
    for g in (None, 1, 5, 10)
}

# The thirty-third session: a soak watched and the next wave begun is no busy agent (rabbitmq's
# autoscaler); ALFWorld's ``env.step(action="close drawer 1")`` acts as a ``close`` tool does, so
# one cabinet-search's flat metric is judged as its tool-named twin's would be.
_SESSION_THIRTY_THREE: dict[int | None, dict[str, list[str] | None]] = {
    g: {
        **({"healthy__ops_rabbitmq_depth_autoscale": None} if g is None else {}),
        **({"healthy__alfworld_two_pillows_armchair_b35": ["no_progress"]} if g in (None, 5) else {}),
    }
    for g in (None, 1, 5, 10)
}


@pytest.mark.parametrize("per_heartbeat", [None, 1, 5, 10])
def test_no_healthy_run_has_an_anomaly_and_stuck_runs_are_flagged(per_heartbeat: int | None) -> None:
    """Healthy work stays silent however grouped, but for the known anomalies above; stuck runs are
    flagged after their onset but for the known misses."""
    runs = replayed(BLIND, per_heartbeat)
    assert len(runs) == len(LABELS) == 3505
    healthy = [s for s in runs.values() if s.label and s.label.label == "healthy"]
    assert len(healthy) == 2098
    known = {
        **KNOWN[per_heartbeat],
        **_TWELFTH[per_heartbeat],
        **_THIRTEENTH[per_heartbeat],
        **_FOURTEENTH[per_heartbeat],
        **_FIFTEENTH[per_heartbeat],
        **_SIXTEENTH[per_heartbeat],
        **_SEVENTEENTH[per_heartbeat],
        **_EIGHTEENTH[per_heartbeat],
        **_TWENTYSECOND[per_heartbeat],
        **_TWENTYTHIRD[per_heartbeat],
        **_TWENTYFOURTH[per_heartbeat],
        **_TWENTYSEVENTH[per_heartbeat],
        **_TWENTYEIGHTH[per_heartbeat],
        **_TWENTYNINTH[per_heartbeat],
        **_THIRTIETH[per_heartbeat],
        **_THIRTYFIRST[per_heartbeat],
        **_THIRTYSECOND[per_heartbeat],
        **_THIRTYTHIRD[per_heartbeat],
        **_THIRTYFOURTH[per_heartbeat],
        **_THIRTYFIFTH[per_heartbeat],
        **_THIRTYSIXTH[per_heartbeat],
        **_THIRTYSEVENTH[per_heartbeat],
        **_THIRTYEIGHTH[per_heartbeat],
        **_THIRTYNINTH[per_heartbeat],
        **_FORTIETH[per_heartbeat],
        **_FORTYFIRST[per_heartbeat],
        **_FORTYSECOND[per_heartbeat],
        **_FORTYTHIRD[per_heartbeat],
        **_FORTYFIFTH[per_heartbeat],
        **_FORTYNINTH[per_heartbeat],
        **_FIFTYFIRST[per_heartbeat],
        **_FIFTYSECOND[per_heartbeat],
        **_FIFTYTHIRD[per_heartbeat],
        **_FIFTYFOURTH[per_heartbeat],
        **_FIFTYFIFTH[per_heartbeat],
        **_FIFTYSIXTH[per_heartbeat],
        **_FIFTYSEVENTH[per_heartbeat],
        **_FIFTYNINTH[per_heartbeat],
        **_SIXTIETH[per_heartbeat],
        **_SESSION_THIRTY[per_heartbeat],
        **_SIXTY_FIRST[per_heartbeat],
        **_SIXTY_SECOND[per_heartbeat],
        **_SIXTY_THIRD[per_heartbeat],
        **_SIXTY_FOURTH[per_heartbeat],
        **_SIXTY_FIFTH[per_heartbeat],
        **_SIXTY_SIXTH[per_heartbeat],
        **_SIXTY_SEVENTH[per_heartbeat],
    }
    overrides = {
        **_QUIET_WITHIN[per_heartbeat],
        **_MOVED_ROUND[per_heartbeat],
        **_NOTHING_SAID[per_heartbeat],
        **_AFTER_QUIET[per_heartbeat],
        **_FEW_WORDS[per_heartbeat],
        **_SAW_NOTHING_MOVE[per_heartbeat],
        **_NOTHING_READ[per_heartbeat],
        **_BACKING_OFF[per_heartbeat],
        **_ACTS_AND_MEMORY[per_heartbeat],
        **_READING[per_heartbeat],
        **_IDS[per_heartbeat],
        **_CONSULTED[per_heartbeat],
        **_SOURCES[per_heartbeat],
        **_PAUSES[per_heartbeat],
        **_CONSULTED_LOOKUPS[per_heartbeat],
        **_SESSION_THIRTY_ONE[per_heartbeat],
        **_SESSION_THIRTY_TWO[per_heartbeat],
        **_SESSION_THIRTY_THREE[per_heartbeat],
        **_SESSION_THIRTY_FIVE[per_heartbeat],
        **_SESSION_THIRTY_SIX[per_heartbeat],
    }
    for name, kinds in overrides.items():
        if kinds is None:
            del known[name]
        else:
            known[name] = kinds
    assert {s.trace: s.kinds for s in healthy if s.anomalies} == known
    escalated = (
        ESCALATED[per_heartbeat]
        | _TWELFTH_ESCALATED[per_heartbeat]
        | _THIRTEENTH_ESCALATED[per_heartbeat]
        | _FOURTEENTH_ESCALATED[per_heartbeat]
        | _FIFTEENTH_ESCALATED[per_heartbeat]
        | _SIXTEENTH_ESCALATED[per_heartbeat]
        | _SEVENTEENTH_ESCALATED[per_heartbeat]
        | _EIGHTEENTH_ESCALATED[per_heartbeat]
        | _TWENTYTHIRD_ESCALATED[per_heartbeat]
        | _TWENTYFOURTH_ESCALATED[per_heartbeat]
        | _TWENTYSEVENTH_ESCALATED[per_heartbeat]
        | _TWENTYNINTH_ESCALATED[per_heartbeat]
        | _THIRTIETH_ESCALATED[per_heartbeat]
        | _THIRTYFIRST_ESCALATED[per_heartbeat]
        | _THIRTYSECOND_ESCALATED[per_heartbeat]
        | _THIRTYFIFTH_ESCALATED[per_heartbeat]
        | _THIRTYSIXTH_ESCALATED[per_heartbeat]
        | _THIRTYSEVENTH_ESCALATED[per_heartbeat]
        | _THIRTYEIGHTH_ESCALATED[per_heartbeat]
        | _THIRTYNINTH_ESCALATED[per_heartbeat]
        | _FORTIETH_ESCALATED[per_heartbeat]
        | _FORTYFIRST_ESCALATED[per_heartbeat]
        | _FORTYSECOND_ESCALATED[per_heartbeat]
        | _FORTYTHIRD_ESCALATED[per_heartbeat]
        | _FORTYFIFTH_ESCALATED[per_heartbeat]
        | _FORTYNINTH_ESCALATED[per_heartbeat]
        | _FIFTYFIRST_ESCALATED[per_heartbeat]
        | _FIFTYSECOND_ESCALATED[per_heartbeat]
        | _FIFTYTHIRD_ESCALATED[per_heartbeat]
        | _FIFTYFOURTH_ESCALATED[per_heartbeat]
        | _FIFTYFIFTH_ESCALATED[per_heartbeat]
        | _FIFTYSIXTH_ESCALATED[per_heartbeat]
        | _FIFTYSEVENTH_ESCALATED[per_heartbeat]
        | _FIFTYNINTH_ESCALATED[per_heartbeat]
        | _SIXTIETH_ESCALATED[per_heartbeat]
        | _SIXTY_FIRST_ESCALATED[per_heartbeat]
        | _SIXTY_SECOND_ESCALATED[per_heartbeat]
        | _SIXTY_THIRD_ESCALATED[per_heartbeat]
        | _SIXTY_FOURTH_ESCALATED[per_heartbeat]
        | _SIXTY_FIFTH_ESCALATED[per_heartbeat]
        | _SIXTY_SIXTH_ESCALATED[per_heartbeat]
        | _SIXTY_SEVENTH_ESCALATED[per_heartbeat]
    )
    unescalated = (
        _QUIET_WITHIN_UNESCALATED[per_heartbeat]
        | _MOVED_ROUND_UNESCALATED[per_heartbeat]
        | _AFTER_QUIET_UNESCALATED[per_heartbeat]
        | _FEW_WORDS_UNESCALATED[per_heartbeat]
        | _SAW_NOTHING_MOVE_UNESCALATED[per_heartbeat]
        | _FLAT_GRACE_UNESCALATED[per_heartbeat]
        | _ACTS_AND_MEMORY_UNESCALATED[per_heartbeat]
        | _CONSULTED_UNESCALATED[per_heartbeat]
        | _SOURCES_UNESCALATED[per_heartbeat]
        | _CONSULTED_LOOKUPS_UNESCALATED[per_heartbeat]
        | _TWENTYNINTH_UNESCALATED[per_heartbeat]
        | _SESSION_THIRTY_SIX_UNESCALATED[per_heartbeat]
    )
    assert {s.trace for s in healthy if s.escalated} == escalated - unescalated
    missed = [
        s.trace for s in runs.values() if s.label and s.label.label == "stuck" and not s.flagged_after_onset()
    ]
    found = (
        _AFTER_QUIET_FOUND[per_heartbeat]
        | _SAW_NOTHING_MOVE_FOUND[per_heartbeat]
        | _ACTS_AND_MEMORY_FOUND[per_heartbeat]
        | _CONSULTED_FOUND[per_heartbeat]
        | _SOURCES_FOUND[per_heartbeat]
        | _CONSULTED_LOOKUPS_FOUND[per_heartbeat]
        | _SESSION_THIRTY_TWO_FOUND[per_heartbeat]
        | _SESSION_THIRTY_SIX_FOUND[per_heartbeat]
    )
    assert set(missed) | found == MISSED | _TWELFTH_MISSED[per_heartbeat] | _READING_MISSED[
        per_heartbeat
    ] | _IDS_MISSED | (
        _FOURTEENTH_MISSED
        | _FOURTEENTH_MISSED_AT[per_heartbeat]
        | _FIFTEENTH_MISSED[per_heartbeat]
        | _SIXTEENTH_MISSED[per_heartbeat]
        | _EIGHTEENTH_MISSED[per_heartbeat]
        | _NINETEENTH_MISSED[per_heartbeat]
        | _TWENTIETH_MISSED
        | _TWENTYFIRST_MISSED[per_heartbeat]
        | _TWENTYSECOND_MISSED[per_heartbeat]
        | _TWENTYTHIRD_MISSED
        | _TWENTYFIFTH_MISSED
        | _TWENTYSIXTH_MISSED
        | _THIRTIETH_MISSED[per_heartbeat]
        | _THIRTYFIRST_MISSED
        | _THIRTYSECOND_MISSED[per_heartbeat]
        | _THIRTYTHIRD_MISSED
        | _MISSED34
        | _MOVED_ROUND_MISSED[per_heartbeat]
        | _THIRTYFIFTH_MISSED[per_heartbeat]
        | _THIRTYSIXTH_MISSED
        | _THIRTYEIGHTH_MISSED[per_heartbeat]
        | _THIRTYNINTH_MISSED
        | _FORTIETH_MISSED[per_heartbeat]
        | _AFTER_QUIET_MISSED[per_heartbeat]
        | _SAW_NOTHING_MOVE_MISSED[per_heartbeat]
        | _FORTYFIRST_MISSED
        | _FORTYSECOND_MISSED[per_heartbeat]
        | _FORTYTHIRD_MISSED
        | _FORTYFOURTH_MISSED[per_heartbeat]
        | _FORTYFIFTH_MISSED
        | _FORTYSIXTH_MISSED
        | _FORTYSEVENTH_MISSED
        | _FORTYEIGHTH_MISSED
        | _FORTYNINTH_MISSED[per_heartbeat]
        | _FIFTYFIRST_MISSED[per_heartbeat]
        | _FIFTYSECOND_MISSED[per_heartbeat]
        | _FIFTYTHIRD_MISSED[per_heartbeat]
        | _FIFTYFOURTH_MISSED[per_heartbeat]
        | _FIFTYFIFTH_MISSED[per_heartbeat]
        | _FIFTYSIXTH_MISSED[per_heartbeat]
        | _FIFTYSEVENTH_MISSED[per_heartbeat]
        | _FIFTYEIGHTH_MISSED
        | _FIFTYNINTH_MISSED[per_heartbeat]
        | _SIXTIETH_MISSED[per_heartbeat]
        | _SESSION_THIRTY_MISSED[per_heartbeat]
        | _SIXTY_FIRST_MISSED[per_heartbeat]
        | _SIXTY_SECOND_MISSED[per_heartbeat]
        | _SIXTY_THIRD_MISSED[per_heartbeat]
        | _SIXTY_FOURTH_MISSED[per_heartbeat]
        | _SIXTY_FIFTH_MISSED[per_heartbeat]
        | _SIXTY_SIXTH_MISSED[per_heartbeat]
        | _SIXTY_SEVENTH_MISSED[per_heartbeat]
        | _CONSULTED_LOOKUPS_MISSED[per_heartbeat]
        | _WAKE_READ_MISSED[per_heartbeat]
    )
    assert not found & set(missed)  # found now
