"""`visibility explain`: from one metric row down to the raw answers and HTTP attempts."""

from __future__ import annotations

from datetime import date

import duckdb

from visibility_assets.cli.arguments import UserError, config_of, iso_date, positive_int
from visibility_assets.cli.lake_reader import read_warehouse


class ExplainError(Exception):
    pass


def add_parser(commands) -> None:
    explain = commands.add_parser("explain", help="the provenance of one metric row, down to the HTTP attempts")
    explain.add_argument("--date", type=iso_date, required=True)
    explain.add_argument("--platform", required=True)
    explain.add_argument("--brand", required=True)
    explain.add_argument("--limit", type=positive_int, default=5, help="answers to show (default 5)")
    explain.add_argument("--as-of", metavar="SNAPSHOT|TIMESTAMP",
                         help="as the warehouse was then (a snapshot id or a time), e.g. before an alias change")
    explain.set_defaults(handler=run)


def run(args) -> int:
    config_of(args).platform(args.platform)  # an unknown platform is an error naming the known ones
    try:
        print(explain(args.date, args.platform, args.brand, args.limit, args.as_of))
    except ExplainError as exc:
        raise UserError(str(exc)) from None
    return 0


METRIC = """
SELECT category, answers, valid_answers, mentioned_answers, mention_rate, mention_rate_low, mention_rate_high,
       share_of_voice, avg_list_rank, recommend_rate, negative_rate, citation_rate, config_version,
       analyzer_version, samples_run_id, run_id
FROM mention_metrics WHERE date = $date AND platform = $platform AND brand = $brand
"""
SAMPLES = """
SELECT b.request_key, s.question_id, s.round, b.mention_count, b.list_rank, b.recommended, s.run_id
FROM sample_brand_results b JOIN cleaned_samples s USING (request_key)
WHERE b.date = $date AND b.platform = $platform AND b.brand = $brand AND b.mentioned
ORDER BY s.question_id, s.round
LIMIT $limit
"""
MATCHES = """
SELECT matched_text, start_pos, end_pos, accepted, rule FROM entity_matches
WHERE request_key = $key AND brand = $brand ORDER BY start_pos
"""
RAW = """
SELECT content_hash, model, prompt_hash, attempt, run_id, answer_text FROM raw_ai_responses WHERE request_key = $key
"""
ATTEMPTS = """
SELECT attempt, http_status, error_class, latency_ms, run_id FROM http_attempts
WHERE request_key = $key ORDER BY attempt
"""
REJECTIONS = """
SELECT rule, count(*) FROM entity_matches
WHERE date = $date AND platform = $platform AND brand = $brand AND NOT accepted
GROUP BY rule ORDER BY count(*) DESC
"""


def _pct(value) -> str:
    return "-" if value is None else f"{value:.0%}"


def explain(day: date, platform: str, brand: str, limit: int = 5, as_of: str | None = None) -> str:
    key = {"date": day, "platform": platform, "brand": brand}
    with read_warehouse(as_of) as conn:
        try:
            metric = conn.execute(METRIC, key).fetchall()
        except duckdb.CatalogException:
            raise ExplainError("the warehouse has no mention_metrics yet: materialize the metrics first") from None
        if not metric:
            raise ExplainError(f"no metric row for brand {brand!r} on {platform} {day}")
        (category, answers, valid, mentioned, rate, low, high, sov, rank, rec, neg, cit, config_version,
         analyzer_version, samples_run, metrics_run) = metric[0]
        lines = [
            f"mention_metrics {day} {platform} {brand} (category {category})"
            + (f", as of {as_of}" if as_of else ""),
            f"  mention rate {_pct(rate)} (95% CI {_pct(low)}-{_pct(high)}): {mentioned} of {valid} valid answers"
            f" ({answers} answers); share of voice {_pct(sov)}; avg list rank {f'{rank:.2f}' if rank else '-'};"
            f" recommended {_pct(rec)}, advised against {_pct(neg)}; cited {_pct(cit)}",
            f"  config {config_version}, analyzer {analyzer_version}, metrics run {metrics_run},"
            f" cleaning run {samples_run}",
        ]
        rejected = conn.execute(REJECTIONS, key).fetchall()
        if rejected:
            lines.append("  alias hits not counted: " + ", ".join(f"{rule} x{n}" for rule, n in rejected))
        samples = conn.execute(SAMPLES, {**key, "limit": limit}).fetchall()
        lines.append(f"  cleaned samples naming the brand (first {len(samples)} of {mentioned}):")
        for request_key, question_id, round_, count, list_rank, recommended, run_id in samples:
            lines.append(f"  - sample {request_key} ({question_id}, round {round_}): {count} mention(s),"
                         f" list rank {list_rank or '-'}, recommended {recommended}")
            for text, start, end, accepted, rule in conn.execute(MATCHES, {"key": request_key, "brand": brand}).fetchall():
                lines.append(f"      match {text!r} at {start}-{end}: {rule if not accepted else 'accepted'}")
            for content_hash, model, prompt_hash, attempt, raw_run, answer in conn.execute(RAW, {"key": request_key}).fetchall():
                excerpt = " ".join(answer.split())[:100]
                lines.append(f"      raw answer {content_hash} from {model} (prompt {prompt_hash}), attempt {attempt},"
                             f" run {raw_run}: \"{excerpt}…\"")
            for attempt, status, error, latency, attempt_run in conn.execute(ATTEMPTS, {"key": request_key}).fetchall():
                lines.append(f"      http attempt #{attempt}: {status or '-'} {error or 'ok'} {latency:.0f} ms (run {attempt_run})")
    return "\n".join(lines)
