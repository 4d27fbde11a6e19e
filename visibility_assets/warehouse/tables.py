"""Every table the pipeline writes, each written once as an Arrow schema (warehouse/schema.py);
their DDL, column lists and Arrow batches are derived from it.

The collection journal (the checkpoints) is three lake tables, `journal_requests`,
`journal_attempts` and `journal_answers`, each keyed by partition; publishing a partition writes
its rows of `collection_requests`, `http_attempts` and `raw_ai_responses`, which are projections
and joins of the journal's tables. The cleaned tables are written partition by partition by
the clean stage; events, tasks, replays and webhook deliveries by theirs.
"""

from __future__ import annotations

import pyarrow as pa

from visibility_assets.warehouse.schema import TIMESTAMP, Table, optional, required

TOKENS = (optional("prompt_tokens", pa.int32()), optional("completion_tokens", pa.int32()),
          optional("total_tokens", pa.int32()))
# A source the answer cites: from the platform's structured field, or a URL in the text.
CITATION = pa.struct([("index", pa.int32()), ("url", pa.string()), ("title", pa.string()),
                      ("site", pa.string()), ("source", pa.string())])

# --- the collection journal (checkpoints), one partition per (date, platform) --------------------------------------------------------

JOURNAL_REQUESTS = Table("journal_requests", (
    required("request_key", pa.string()),
    required("date", pa.date32()),
    required("platform", pa.string()),
    required("question_id", pa.string()),
    required("question_text", pa.string()),
    required("category", pa.string()),
    optional("scene", pa.string()),  # the question's free label (RECOMMEND, COMPARE, ...)
    required("round", pa.int32()),
    required("priority", pa.int32()),
    required("model", pa.string()),
    required("params_json", pa.string()),
    required("prompt_hash", pa.string()),
    required("state", pa.string()),  # pending | succeeded | failed | deferred
    required("attempts", pa.int32()),
    optional("last_error_class", pa.string()),
    optional("last_error", pa.string()),
    required("updated_at", TIMESTAMP),
    optional("task_id", pa.string()),  # the event-driven task that asked it (collection_tasks); null: nightly
    optional("variant", pa.string()),  # the question's variant asked (questions.yaml); null: its own text
), primary_key=("request_key",))

JOURNAL_ATTEMPTS = Table("journal_attempts", (  # append-only ledger: one row per HTTP attempt
    required("request_key", pa.string()),
    required("attempt", pa.int32()),
    required("run_id", pa.string()),
    required("date", pa.date32()),
    required("platform", pa.string()),
    required("started_at", TIMESTAMP),
    required("finished_at", TIMESTAMP),
    optional("http_status", pa.int32()),
    optional("error_class", pa.string()),
    optional("error_message", pa.string()),
    required("latency_ms", pa.float64()),
    *TOKENS,
    optional("error_code", pa.string()),  # the platform's own code (Arrearage, DataInspectionFailed, ...)
    optional("tool_rounds", pa.int32()),  # requests sent back with a tool's result within the attempt
), primary_key=("request_key", "attempt"))

JOURNAL_ANSWERS = Table("journal_answers", (
    required("request_key", pa.string()),
    required("attempt", pa.int32()),  # the attempt that produced it
    required("run_id", pa.string()),  # the Dagster run that collected it
    required("answer_text", pa.string()),
    required("payload_json", pa.string()),
    optional("response_model", pa.string()),
    required("content_hash", pa.string()),
    required("latency_ms", pa.float64()),
    *TOKENS,
    required("received_at", TIMESTAMP),
    # The normalized answer (collect/dialects/); optional because older journals lack them.
    optional("outcome", pa.string()),  # answered | truncated | moderated
    optional("finish_reason", pa.string()),  # as the platform sent it
    optional("reasoning_text", pa.string()),  # reasoning_content or inline <think>: never analysed
    optional("citations", pa.list_(CITATION)),
    optional("search_used", pa.bool_()),  # a search actually ran
    optional("cached_tokens", pa.int32()),
    optional("reasoning_tokens", pa.int32()),
    optional("search_count", pa.int32()),
    optional("cost", pa.float64()),  # from the usage and prices.yaml; null without a price
    optional("currency", pa.string()),
    optional("system_fingerprint", pa.string()),  # the deployment that answered (model-change canary)
    optional("search_queries", pa.list_(pa.string())),  # what its search looked up, where the platform says
    required("date", pa.date32()),  # the partition, last: raw_ai_responses takes it from the request
    required("platform", pa.string()),
), primary_key=("request_key",))

JOURNAL_TABLES = (JOURNAL_REQUESTS, JOURNAL_ATTEMPTS, JOURNAL_ANSWERS)

# --- the warehouse: what publishing a journal writes ----------------------------------------

REQUEST_COLUMNS = ["request_key", "date", "platform", "question_id", "question_text", "category", "scene",
                   "round", "model", "params_json", "prompt_hash", "task_id", "variant"]
RAW_AI_RESPONSES = Table(
    "raw_ai_responses",
    tuple(JOURNAL_REQUESTS.project("", REQUEST_COLUMNS).fields) + JOURNAL_ANSWERS.fields[1:-2],
    primary_key=("request_key",))
COLLECTION_REQUESTS = JOURNAL_REQUESTS.project(
    "collection_requests", ["request_key", "date", "platform", "question_id", "round", "priority", "state",
                            "attempts", "last_error_class", "last_error", "updated_at", "task_id"],
    primary_key=("request_key",))
HTTP_ATTEMPTS = Table("http_attempts", JOURNAL_ATTEMPTS.fields, primary_key=("request_key", "attempt"))

COLLECTION_TABLES = (RAW_AI_RESPONSES, COLLECTION_REQUESTS, HTTP_ATTEMPTS)

# One row per collection of a partition by a run (append-only): what that run planned, found
# already done (a duplicate prevented), sent and got; the partition's history across runs.
COLLECTION_RUNS = Table("collection_runs", (
    required("run_id", pa.string()),
    required("date", pa.date32()),
    required("platform", pa.string()),
    optional("task_id", pa.string()),  # the event-driven task it collected; null: the nightly plan
    required("planned", pa.int32()),
    required("skipped_done", pa.int32()),  # already answered: not sent again
    required("sent", pa.int32()),
    required("succeeded", pa.int32()),
    required("failed", pa.int32()),
    required("deferred", pa.int32()),
    required("http_attempts", pa.int32()),
    required("http_429", pa.int32()),
    required("wall_s", pa.float64()),
    optional("error", pa.string()),
    required("finished_at", TIMESTAMP),
    optional("fault_class", pa.string()),  # whose the failure is (core/faults.py); null: it did not fail
), primary_key=("run_id", "date", "platform"))

# --- the brand catalog -----------------------------------------------------------------------

BRAND_CATALOG = Table("brand_catalog", (
    required("brand", pa.string()),
    required("category", pa.string()),
    required("aliases", pa.list_(pa.string())),
    required("exclude_contexts", pa.list_(pa.string())),
    required("domains", pa.list_(pa.string())),
    required("config_version", pa.string()),
    required("loaded_at", TIMESTAMP),
))
BRAND_CATALOG_VERSIONS = Table("brand_catalog_versions", (
    required("config_version", pa.string()),
    required("first_loaded_at", TIMESTAMP),
    required("brands_yaml", pa.string()),
), primary_key=("config_version",))

# --- the clean stage: one partition per (date, platform), replaced whole by each cleaning ------------

_SAMPLE_KEY = (required("request_key", pa.string()), required("date", pa.date32()), required("platform", pa.string()))

CLEANED_SAMPLES = Table("cleaned_samples", _SAMPLE_KEY + (
    optional("question_id", pa.string()), optional("category", pa.string()), optional("round", pa.int32()),
    optional("state", pa.string()), optional("valid", pa.bool_()), optional("invalid_reason", pa.string()),
    optional("brands_mentioned", pa.int32()), optional("option_list_kind", pa.string()),
    optional("citations", pa.list_(pa.string())), optional("has_citation", pa.bool_()),
    optional("analyzer_version", pa.string()), optional("config_version", pa.string()), optional("run_id", pa.string()),
    optional("cleaned_at", TIMESTAMP),
    # Longer than max_answer_chars: analysed only up to it (answer_chars is the whole length).
    optional("answer_chars", pa.int64()), optional("analysis_capped", pa.bool_()),
    optional("question_weight", pa.float64()),  # the question's weight when cleaned (questions.yaml)
    optional("variant", pa.string()),  # the question's variant asked; null: its own text
), primary_key=("request_key",))
SAMPLE_BRAND_RESULTS = Table("sample_brand_results", _SAMPLE_KEY + (
    optional("category", pa.string()), optional("brand", pa.string()), optional("valid", pa.bool_()),
    optional("has_citation", pa.bool_()), optional("mentioned", pa.bool_()),
    optional("mention_count", pa.int32()), optional("first_mention_order", pa.int32()), optional("list_rank", pa.int32()),
    optional("recommended", pa.bool_()), optional("cites_own_domain", pa.bool_()),
    optional("sentiment", pa.string()),  # positive | neutral | negative; null when not mentioned
    # Named only to say nothing is known or found of it (clean/unknown.py): never recommended, no sentiment.
    optional("named_unknown", pa.bool_()),
), primary_key=("request_key", "brand"))
ENTITY_MATCHES = Table("entity_matches", _SAMPLE_KEY + (
    optional("brand", pa.string()), optional("brand_category", pa.string()), optional("alias", pa.string()),
    optional("start_pos", pa.int32()), optional("end_pos", pa.int32()), optional("matched_text", pa.string()),
    optional("accepted", pa.bool_()), optional("rule", pa.string()), optional("excerpt", pa.string()),
    # An accepted mention's sentiment, from its own context, and the cue words that decided it.
    optional("sentiment", pa.string()), optional("sentiment_cues", pa.list_(pa.string())),
))
SAMPLE_STATE_HISTORY = Table("sample_state_history", _SAMPLE_KEY + (
    optional("seq", pa.int32()), optional("state", pa.string()), optional("at", TIMESTAMP),
    optional("run_id", pa.string()), optional("detail", pa.string()),
), primary_key=("request_key", "seq"))
SAMPLE_QUARANTINE = Table("sample_quarantine", _SAMPLE_KEY + (
    optional("run_id", pa.string()), optional("error", pa.string()), optional("at", TIMESTAMP),
), primary_key=("request_key",))
# Every source a valid answer cites: from the platform's structured field, or a link in its text.
SAMPLE_CITATIONS = Table("sample_citations", _SAMPLE_KEY + (
    optional("url", pa.string()), optional("source", pa.string()), optional("domain", pa.string()),
    optional("domain_class", pa.string()), optional("own_brand", pa.string()),
    # A platform source the text marks ([1], [ref_1]): true; retrieved but not marked: false;
    # null when the text marks no source. A link in the text is cited.
    optional("cited", pa.bool_()),
), primary_key=("request_key", "url", "source"))
# Every name a valid answer offers as an option that no alias of the catalog matches (clean/untracked.py).
SAMPLE_UNTRACKED_NAMES = Table("sample_untracked_names", _SAMPLE_KEY + (
    optional("category", pa.string()), optional("name", pa.string()),  # as written
    optional("name_key", pa.string()),  # the name's grouping key: case, width, spaces and punctuation folded
    optional("other_form", pa.string()), optional("other_key", pa.string()),  # its form in parentheses
    optional("list_rank", pa.int32()),
), primary_key=("request_key", "name_key"))

# Each answer and brand an analyst reviewed (review/store.py): the latest review's values, which
# replace the machine's in the metrics (int_brand_results). Copied from the workspace's review
# store whenever the partition is cleaned, so that reviews outlive every re-analysis.
LABEL_REVIEWS = Table("label_reviews", _SAMPLE_KEY + (
    required("brand", pa.string()), optional("mentioned", pa.bool_()), optional("mention_count", pa.int32()),
    optional("list_rank", pa.int32()), optional("recommended", pa.bool_()), optional("sentiment", pa.string()),
    optional("review_id", pa.string()), optional("reviewer", pa.string()), optional("queue", pa.string()),
    optional("reviewed_at", TIMESTAMP), optional("reviewers", pa.int32()),
), primary_key=("request_key", "brand"))

CLEANED_TABLES = (CLEANED_SAMPLES, SAMPLE_BRAND_RESULTS, ENTITY_MATCHES, SAMPLE_STATE_HISTORY, SAMPLE_QUARANTINE, LABEL_REVIEWS,
                  SAMPLE_CITATIONS, SAMPLE_UNTRACKED_NAMES)

# --- the judge (judge/): a model's labels per answer and brand, one partition per (date, platform) --

# One row per answer the judge was asked about (or would have been, had it been sent).
JUDGE_CALLS = Table("judge_calls", _SAMPLE_KEY + (
    required("judge_key", pa.string()),  # from the answer's content hash, the brands and the prompt
    required("content_hash", pa.string()),
    required("brands", pa.list_(pa.string())),  # asked about: the answer's mentioned tracked brands
    required("judge_platform", pa.string()),
    required("judge_model", pa.string()),
    required("prompt_version", pa.string()),
    required("status", pa.string()),  # judged | invalid (twice a reply that does not validate) | unsent
    optional("error", pa.string()),  # why invalid or unsent
    required("requests", pa.int32()),  # judge requests answered for it (2: the first reply was retried)
    optional("cost", pa.float64()),
    optional("currency", pa.string()),
    optional("claims_dropped", pa.int32()),  # claims that were no quote of the answer
    optional("reused", pa.bool_()),  # judged before (another partition, the same key): nothing sent
    optional("judged_at", TIMESTAMP),
    optional("run_id", pa.string()),
), primary_key=("request_key",))
JUDGE_VERDICTS = Table("judge_verdicts", _SAMPLE_KEY + (
    required("brand", pa.string()),
    required("sentiment", pa.string()),  # positive | neutral | negative
    required("role", pa.string()),  # recommended | option | alternative | passing | advised_against
    required("claims", pa.list_(pa.string())),  # quoted from the answer, at most three
    required("judge_platform", pa.string()),
    required("judge_model", pa.string()),
    required("prompt_version", pa.string()),
), primary_key=("request_key", "brand"))

JUDGE_TABLES = (JUDGE_CALLS, JUDGE_VERDICTS)

# --- judge calibrations (judge/calibration_run.py): the judge against labels people gave --------

# One row per calibration and scope: all pairs, one language, one labelled set.
JUDGE_CALIBRATIONS = Table("judge_calibrations", (
    required("calibration_id", pa.string()),
    required("calibrated_at", TIMESTAMP),
    required("judge_platform", pa.string()),
    optional("judge_model", pa.string()),
    required("prompt_version", pa.string()),
    required("scope", pa.string()),  # all | language | set
    required("scope_value", pa.string()),  # all, zh, zh-Hant, en, or the set's name (reviews: the deployment's)
    required("pairs", pa.int32()),  # labelled pairs the judge gave a verdict on
    required("correct", pa.int32()),
    required("accuracy", pa.float64()),
    required("accuracy_low", pa.float64()),  # its 95% Wilson interval
    required("accuracy_high", pa.float64()),
    required("macro_f1", pa.float64()),
    optional("kappa", pa.float64()),  # Cohen's κ against the labels
    required("unjudged", pa.int32()),  # pairs without a valid verdict (an invalid reply, the budget)
    required("requests_sent", pa.int32()),
    optional("cost", pa.float64()),  # of this calibration's requests, as the collector recorded them
    optional("currency", pa.string()),
), primary_key=("calibration_id", "scope", "scope_value"))
JUDGE_CALIBRATION_VERDICTS = Table("judge_calibration_verdicts", (
    required("calibration_id", pa.string()),
    required("set_name", pa.string()),
    required("item_id", pa.string()),
    required("brand", pa.string()),
    required("language", pa.string()),
    required("label", pa.string()),  # as people labelled it
    required("verdict", pa.string()),  # as the judge did
), primary_key=("calibration_id", "set_name", "item_id", "brand"))
JUDGE_CALIBRATION_TABLES = (JUDGE_CALIBRATIONS, JUDGE_CALIBRATION_VERDICTS)

# --- events and tasks (events/): what happened, and what to collect because of it ------------

# A task's life: each change is an entry of its history.
HISTORY_ENTRY = pa.struct([("state", pa.string()), ("changed_at", TIMESTAMP), ("note", pa.string())])

COLLECTION_EVENTS = Table("collection_events", (
    required("event_id", pa.string()),
    required("kind", pa.string()),  # alert | adhoc | new_questions | analyzer_version | quality
    required("date", pa.date32()),  # the partition day it concerns
    optional("platform", pa.string()),
    optional("category", pa.string()),
    optional("subject", pa.string()),  # the brand, the question ids, the version, the figure
    required("reason", pa.string()),  # one line a person can read
    optional("change", pa.float64()),
    optional("p_value", pa.float64()),
    optional("q_value", pa.float64()),
    optional("interval_width", pa.float64()),
    required("outcome", pa.string()),  # new_task | merged | notified | over_budget | recorded
    optional("task_id", pa.string()),
    required("created_at", TIMESTAMP),
), primary_key=("event_id",))

COLLECTION_TASKS = Table("collection_tasks", (
    required("task_id", pa.string()),
    required("kind", pa.string()),  # the kind of its first event
    required("date", pa.date32()),
    required("platform", pa.string()),
    optional("category", pa.string()),
    required("question_ids", pa.list_(pa.string())),
    required("first_round", pa.int32()),
    required("rounds", pa.int32()),
    required("planned_requests", pa.int32()),
    required("event_ids", pa.list_(pa.string())),
    required("reason", pa.string()),
    required("base_priority", pa.int32()),
    required("urgency", pa.int32()),
    required("sla_deadline", TIMESTAMP),
    required("retries", pa.int32()),
    required("effective_priority", pa.int32()),  # at its last dispatch
    required("state", pa.string()),  # planned | requested | done | failed
    required("history", pa.list_(HISTORY_ENTRY)),
    required("created_at", TIMESTAMP),
    required("updated_at", TIMESTAMP),
    optional("run_id", pa.string()),  # the Dagster run of its last dispatch
), primary_key=("task_id",))

EVENT_TABLES = (COLLECTION_EVENTS, COLLECTION_TASKS)

# --- analyzer replays (clean/replay.py): no SQL model's metrics read them -------------------

ANALYZER_REPLAYS = Table("analyzer_replays", (
    required("replay_id", pa.string()),
    required("replayed_at", TIMESTAMP),
    required("platform", pa.string()),
    required("date", pa.date32()),
    required("config_version", pa.string()),  # the catalog the replay used; only samples cleaned with it compared
    optional("stored_analyzer_version", pa.string()),  # of the compared samples, comma-separated when several
    required("analyzer_version", pa.string()),  # the replayed one
    required("answers", pa.int32()),  # compared
    required("changed", pa.int32()),  # answers with at least one difference
    required("diff_share", pa.float64()),
    required("changed_by_field", pa.string()),  # JSON object: field -> differences (clean/replay_diff.py, Tally)
), primary_key=("replay_id", "platform", "date"))

# --- webhook deliveries (notify/): what went to which webhook --------------------------------

NOTIFICATION_DELIVERIES = Table("notification_deliveries", (
    required("alert_id", pa.string()),  # AlertMessage.alert_id: what the alert is about, not its run
    required("webhook", pa.string()),  # the webhook's name in events.yaml
    required("date", pa.date32()),
    required("platform", pa.string()),
    required("kind", pa.string()),
    required("subject", pa.string()),
    required("state", pa.string()),  # delivered | failed | skipped
    required("attempts", pa.int32()),
    optional("http_status", pa.int32()),
    optional("error", pa.string()),  # scrubbed of the webhook URL and secret
    optional("first_attempt_at", TIMESTAMP),  # null when skipped (no URL or secret in the environment)
    required("finished_at", TIMESTAMP),
    required("run_id", pa.string()),
), primary_key=("alert_id", "webhook", "finished_at"))

# Faults that are no rate alert (core/faults.py): a failed run, a replay that reads too many
# answers otherwise, a webhook that refused; each notified to the webhooks routed for its class.
FAULT_EVENTS = Table("fault_events", (
    required("fault_id", pa.string()),  # what it is about (the run, the replay, the webhook and day)
    required("date", pa.date32()),  # the partition day, or the day it happened
    optional("platform", pa.string()),  # null: not one platform's
    required("kind", pa.string()),  # run_failed | replay_diff | webhook_failed
    required("fault_class", pa.string()),  # source | rule | downstream
    required("subject", pa.string()),  # the job, the analyzer version, the webhook
    required("detail", pa.string()),
    optional("run_id", pa.string()),
    required("occurred_at", TIMESTAMP),
), primary_key=("fault_id",))

# One row per pass of the lake maintenance (warehouse/maintenance.py): the snapshots a later pass
# may thin are those up to the previous pass's, so that `--as-of` reaches every moment since.
MAINTENANCE_PASSES = Table("maintenance_passes", (
    required("finished_at", TIMESTAMP),
    required("snapshot_id", pa.int64()),  # the lake's latest snapshot when the pass ended
    required("live_files", pa.int64()),
    required("snapshots_expired", pa.int64()),
), primary_key=("finished_at",))

TABLES = {table.name: table for table in (*JOURNAL_TABLES, *COLLECTION_TABLES, COLLECTION_RUNS, BRAND_CATALOG,
                                          BRAND_CATALOG_VERSIONS, *CLEANED_TABLES, *JUDGE_TABLES,
                                          *JUDGE_CALIBRATION_TABLES, *EVENT_TABLES, ANALYZER_REPLAYS,
                                          NOTIFICATION_DELIVERIES, FAULT_EVENTS, MAINTENANCE_PASSES)}
