"""The collection and catalog tables, each written once as an Arrow schema; their DDL, column
lists and Arrow batches are derived from it.

The collection journal (the checkpoints) is three lake tables, `journal_requests`,
`journal_attempts` and `journal_answers`, each keyed by partition; publishing a partition writes
its rows of `collection_requests`, `http_attempts` and `raw_ai_responses`, which are projections
and joins of the journal's tables. The cleaned tables are written by the
cleaner (analyze/samples.py, SCHEMAS) and created from their Arrow schemas.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

TIMESTAMP = pa.timestamp("us", tz="UTC")

# Arrow type -> DuckDB column type, for the scalar types these tables use.
DUCKDB_TYPES = {
    pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN", pa.date32(): "DATE", TIMESTAMP: "TIMESTAMPTZ",
}


def duckdb_type(type_: pa.DataType) -> str:
    if pa.types.is_list(type_):
        return duckdb_type(type_.value_type) + "[]"
    if pa.types.is_struct(type_):
        return "STRUCT(" + ", ".join(f.name + " " + duckdb_type(f.type) for f in type_) + ")"
    return DUCKDB_TYPES[type_]


def required(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=False)


def optional(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_)


def column_ddl(field: pa.Field) -> str:
    return field.name + " " + duckdb_type(field.type) + ("" if field.nullable else " NOT NULL")


@dataclass(frozen=True)
class Table:
    name: str
    fields: tuple[pa.Field, ...]
    primary_key: tuple[str, ...] = ()

    @property
    def schema(self) -> pa.Schema:
        return pa.schema(self.fields)

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.fields]

    def ddl(self) -> str:
        """CREATE TABLE IF NOT EXISTS, from the schema (names and types are this module's own).

        DuckLake has no key constraints: `primary_key` documents the grain, which the journal
        (collect/journal.py) and the publishing query keep."""
        lines = [column_ddl(f) for f in self.fields]
        return "CREATE TABLE IF NOT EXISTS " + self.name + " (\n    " + ",\n    ".join(lines) + "\n)"

    def batch(self, rows: list[tuple]) -> pa.Table:
        """Rows given as tuples in column order, as an Arrow table of this schema."""
        columns = list(zip(*rows)) or [()] * len(self.fields)
        return pa.Table.from_arrays([pa.array(values, type=f.type) for values, f in zip(columns, self.fields)],
                                    schema=self.schema)

    def project(self, name: str, columns: list[str], primary_key: tuple[str, ...] = ()) -> Table:
        """A table of some of these columns, in the order given."""
        by_name = {f.name: f for f in self.fields}
        return Table(name, tuple(by_name[c] for c in columns), primary_key)


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
    required("date", pa.date32()),  # the partition, last: raw_ai_responses takes it from the request
    required("platform", pa.string()),
), primary_key=("request_key",))

JOURNAL_TABLES = (JOURNAL_REQUESTS, JOURNAL_ATTEMPTS, JOURNAL_ANSWERS)

# --- the warehouse: what publishing a journal writes ----------------------------------------

REQUEST_COLUMNS = ["request_key", "date", "platform", "question_id", "question_text", "category", "scene",
                   "round", "model", "params_json", "prompt_hash", "task_id"]
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
