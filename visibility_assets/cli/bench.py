"""`visibility bench ...`: the benchmarks (tools/bench/), each printing one JSON object last."""

from __future__ import annotations

import json

from visibility_assets.cli.arguments import positive_int


def add_parser(commands) -> None:
    bench = commands.add_parser("bench", help="benchmarks; the last stdout line is one JSON object")
    benches = bench.add_subparsers(dest="bench", required=True, metavar="BENCH")
    collect = benches.add_parser("collect", help="the collector against simulated platforms with limits and faults")
    collect.add_argument("--platforms", type=positive_int, default=6)
    collect.add_argument("--requests", type=positive_int, default=3000, help="requests in all, spread over the platforms")
    collect.add_argument("--rps", type=float, default=20.0, help="requests per second each platform permits")
    collect.add_argument("--fault-rate", type=float, default=0.1, help="share of transient faults (5xx, hangs, malformed, drops)")
    collect.add_argument("--storm", type=float, default=0.0, help="share of spurious 429s on the first platform")
    collect.add_argument("--latency", type=float, nargs=2, default=(0.05, 0.5), metavar=("MIN_S", "MAX_S"))
    collect.add_argument("--concurrency", type=positive_int, default=16, help="max_concurrency per platform")
    collect.add_argument("--timeout", type=float, default=2.0, help="client timeout per request, seconds")
    collect.add_argument("--seed", type=int, default=0)
    collect.add_argument("--web-search", action="store_true",
                         help="each platform in its own dialect with its web search on (Kimi: a tool round more)")
    collect.set_defaults(handler=run_collect)
    clean = benches.add_parser("clean", help="the analyzer against the naive per-alias str.find loop")
    clean.add_argument("--answers", type=positive_int, default=20000)
    clean.add_argument("--aliases", type=positive_int, default=10000)
    clean.add_argument("--seed", type=int, default=0)
    clean.set_defaults(handler=run_clean)
    metrics = benches.add_parser("metrics", help="recompute every metric partition of D days x K platforms in one run")
    metrics.add_argument("--days", type=positive_int, default=90)
    metrics.add_argument("--platforms", type=positive_int, default=6)
    metrics.add_argument("--answers-per-partition", type=positive_int, default=200)
    metrics.add_argument("--instance", choices=("sqlite", "postgres", "memory"), default="sqlite",
                         help="Dagster instance storage: the default SQLite files, PostgreSQL ($VISIBILITY_PG_URL),"
                              " or in memory")
    metrics.set_defaults(handler=run_metrics)
    serve = benches.add_parser("serve", help="the workspace over the D-day warehouse of bench metrics: server time"
                                             " per view and endpoint, then C clients at once")
    serve.add_argument("--days", type=positive_int, default=90)
    serve.add_argument("--clients", type=positive_int, default=50)
    serve.add_argument("--duration", type=float, default=60.0, help="seconds of the concurrent load")
    serve.add_argument("--samples", type=positive_int, default=30, help="requests per endpoint, one at a time")
    serve.add_argument("--workers", type=positive_int, default=2, help="server processes")
    serve.add_argument("--brands", type=int, default=0,
                       help="grow the example's catalog to this many brands, spread over its categories")
    serve.set_defaults(handler=run_serve)
    reanalysis = benches.add_parser("reanalysis", help="the alias-change backfill over D days x K platforms of answers")
    reanalysis.add_argument("--days", type=positive_int, default=30)
    reanalysis.add_argument("--platforms", type=positive_int, default=6)
    reanalysis.set_defaults(handler=run_reanalysis)
    ingest = benches.add_parser("ingest", help="raw answers written partition by partition: the lake and a DuckDB file")
    ingest.add_argument("--days", type=positive_int, default=10)
    ingest.add_argument("--platforms", type=positive_int, default=6)
    ingest.add_argument("--rows-per-partition", type=positive_int, default=20000)
    ingest.set_defaults(handler=run_ingest)
    replay = benches.add_parser("replay", help="`visibility replay` over N stored answers, unchanged and with a changed rule")
    replay.add_argument("--answers", type=positive_int, default=20000)
    replay.set_defaults(handler=run_replay)
    night = benches.add_parser("night", help="`visibility demo`'s night on the example config with N times its"
                                             " questions: wall time beside the rate bound, CPU, memory")
    night.add_argument("--scale", type=positive_int, default=10,
                       help="questions x N, rate and concurrency x N/2 (1: the demo itself)")
    night.set_defaults(handler=run_night)
    history = benches.add_parser("history", help="N nights of history as nightly runs write them; the first and last"
                                                 " night, every view, the alias backfill and the storage on it")
    history.add_argument("--days", type=positive_int, default=365)
    history.add_argument("--samples", type=positive_int, default=15, help="requests per view and endpoint")
    history.add_argument("--questions", type=positive_int,
                         help="only the first N questions of the example config (default: all of them)")
    history.set_defaults(handler=run_history)
    every = benches.add_parser("all", help="every benchmark at a size of a few minutes: one JSON object of ratios")
    every.set_defaults(handler=run_all)


def _print(result: dict) -> int:
    print(json.dumps(result, ensure_ascii=False))
    return 0


def run_collect(args) -> int:
    from visibility_assets.tools.bench.collect import run_collect_bench
    return _print(run_collect_bench(args.platforms, args.requests, args.rps, args.fault_rate, tuple(args.latency),
                                    args.storm, args.concurrency, args.timeout, args.seed, args.web_search))


def run_clean(args) -> int:
    from visibility_assets.tools.bench.clean import run_clean_bench
    return _print(run_clean_bench(args.answers, args.aliases, args.seed))


def run_metrics(args) -> int:
    from visibility_assets.tools.bench.metrics import run_metrics_bench
    return _print(run_metrics_bench(args.days, min(args.platforms, 6), args.answers_per_partition, args.instance))


def run_serve(args) -> int:
    from visibility_assets.tools.bench.serve import run_serve_bench
    return _print(run_serve_bench(args.days, args.clients, args.duration, args.samples, args.workers, args.brands))


def run_reanalysis(args) -> int:
    from visibility_assets.tools.bench.reanalysis import run_reanalysis_bench
    return _print(run_reanalysis_bench(args.days, min(args.platforms, 6)))


def run_ingest(args) -> int:
    from visibility_assets.tools.bench.ingest import run_ingest_bench
    return _print(run_ingest_bench(args.days, min(args.platforms, 6), args.rows_per_partition))


def run_replay(args) -> int:
    from visibility_assets.tools.bench.replay import run_replay_bench
    return _print(run_replay_bench(args.answers))


def run_night(args) -> int:
    from visibility_assets.tools.bench.night import run_night_bench
    return _print(run_night_bench(args.scale))


def run_history(args) -> int:
    from visibility_assets.tools.bench.history import run_history_bench
    return _print(run_history_bench(args.days, args.samples, questions=args.questions))


def run_all(args) -> int:
    from visibility_assets.tools.bench.all import run_all_benches
    return _print(run_all_benches())
