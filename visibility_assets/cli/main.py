"""The `visibility` command (CONTRACTS section 2)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import warnings
from datetime import date as Date

from ..config import CONFIG_DIR_ENV, ConfigError, MissingApiKey, UnknownPlatform
from ..tools.simulator.launch import SimulatorPortBusy


class UserError(Exception):
    """A problem with what the user asked for: printed without a traceback, exit 2."""


def _date(text: str) -> Date:
    try:
        return Date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer: {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="visibility", description="Brand AI-visibility pipeline.")
    parser.add_argument("--config-dir", help=f"folder of brands/questions/platforms.yaml (default: ${CONFIG_DIR_ENV} or the shipped example)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="run the pipeline for a day against the simulated platforms")
    demo.add_argument("--date", type=_date, help="the (last) day to collect, YYYY-MM-DD (default: yesterday, Asia/Shanghai)")
    demo.add_argument("--days", type=_positive_int, default=1, help="collect the N days ending at --date")
    demo.set_defaults(handler=_demo)

    simulate = commands.add_parser("simulate", help="run the simulated OpenAI-compatible platforms in the foreground")
    simulate.add_argument("--host", default="127.0.0.1")
    simulate.add_argument("--port", type=int, default=8787)
    simulate.add_argument("--seed", type=int, default=0)
    simulate.add_argument("--time-scale", type=float, default=1.0, help="multiply latencies (0.01 = 100x faster)")
    simulate.add_argument("--latency", type=float, nargs=2, metavar=("MIN_S", "MAX_S"), default=(1.0, 30.0),
                          help="answer latency range in seconds, before --time-scale")
    simulate.add_argument("--rate-limit", type=float, help="requests per second per platform; more get 429")
    simulate.add_argument("--fault-rate", type=float, default=0.0, help="share of transient faults (5xx, hangs, malformed, drops)")
    simulate.add_argument("--throttle-rate", type=float, default=0.0, help="share of spurious 429 answers (a storm)")
    simulate.add_argument("--hang-s", type=float, default=120.0, help="how long a hanging request hangs")
    simulate.add_argument("--api-key", help="require this bearer key (401 otherwise)")
    simulate.add_argument("--retry-after-format", choices=("seconds", "date"), default="seconds")
    simulate.set_defaults(handler=_simulate)

    backfill = commands.add_parser("backfill", help="re-analyse history (after an alias change); asks no platform")
    backfill.add_argument("--since", type=_date, required=True, help="first day, YYYY-MM-DD")
    backfill.add_argument("--until", type=_date, help="last day (default: yesterday, Asia/Shanghai)")
    backfill.add_argument("--platform", action="append", help="only this platform (repeatable; default: all)")
    backfill.set_defaults(handler=_backfill)

    explain = commands.add_parser("explain", help="the provenance of one metric row, down to the HTTP attempts")
    explain.add_argument("--date", type=_date, required=True)
    explain.add_argument("--platform", required=True)
    explain.add_argument("--brand", required=True)
    explain.add_argument("--limit", type=_positive_int, default=5, help="answers to show (default 5)")
    explain.set_defaults(handler=_explain)

    analyze = commands.add_parser("analyze", help="validity and brand mentions for answers in JSON Lines (no Dagster)")
    analyze.add_argument("--catalog", required=True, help="a brands.yaml")
    analyze.add_argument("--answers", required=True, help="JSON Lines: id, question, answer, category")
    analyze.add_argument("--out", help="JSON Lines output (default: stdout)")
    analyze.set_defaults(handler=_analyze)

    bench = commands.add_parser("bench", help="benchmarks; the last stdout line is one JSON object")
    benches = bench.add_subparsers(dest="bench", required=True, metavar="BENCH")
    collect = benches.add_parser("collect", help="the collector against simulated platforms with limits and faults")
    collect.add_argument("--platforms", type=_positive_int, default=6)
    collect.add_argument("--requests", type=_positive_int, default=3000, help="requests in all, spread over the platforms")
    collect.add_argument("--rps", type=float, default=20.0, help="requests per second each platform permits")
    collect.add_argument("--fault-rate", type=float, default=0.1, help="share of transient faults (5xx, hangs, malformed, drops)")
    collect.add_argument("--storm", type=float, default=0.0, help="share of spurious 429s on the first platform")
    collect.add_argument("--latency", type=float, nargs=2, default=(0.05, 0.5), metavar=("MIN_S", "MAX_S"))
    collect.add_argument("--concurrency", type=_positive_int, default=16, help="max_concurrency per platform")
    collect.add_argument("--timeout", type=float, default=2.0, help="client timeout per request, seconds")
    collect.add_argument("--seed", type=int, default=0)
    collect.set_defaults(handler=_bench_collect)
    clean = benches.add_parser("clean", help="the analyzer against the naive per-alias str.find loop")
    clean.add_argument("--answers", type=_positive_int, default=20000)
    clean.add_argument("--aliases", type=_positive_int, default=10000)
    clean.add_argument("--seed", type=int, default=0)
    clean.set_defaults(handler=_bench_clean)
    metrics = benches.add_parser("metrics", help="recompute every metric partition of D days x K platforms in one run")
    metrics.add_argument("--days", type=_positive_int, default=90)
    metrics.add_argument("--platforms", type=_positive_int, default=6)
    metrics.add_argument("--answers-per-partition", type=_positive_int, default=200)
    metrics.add_argument("--instance", choices=("sqlite", "postgres", "memory"), default="sqlite",
                         help="Dagster instance storage: the default SQLite files, PostgreSQL ($VISIBILITY_PG_URL),"
                              " or in memory")
    metrics.set_defaults(handler=_bench_metrics)
    reanalysis = benches.add_parser("reanalysis", help="the alias-change backfill over D days x 6 platforms of answers")
    reanalysis.add_argument("--days", type=_positive_int, default=30)
    reanalysis.set_defaults(handler=_bench_reanalysis)
    return parser


def _config(args):
    from ..config import load_config
    return load_config(args.config_dir)


def _demo(args) -> int:
    config = _config(args)  # validate before anything is imported, started or written
    from .demo import demo_dates, run_demo
    from ..defs.automation import yesterday
    end = args.date or yesterday()
    return run_demo(config, demo_dates(end, args.days))


def _simulate(args) -> int:
    from ..tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
    from ..tools.simulator.server import SimulatorServer
    import asyncio

    config = None
    try:
        config = _config(args)
    except ConfigError as exc:  # the simulator can run without a config; say why answers are generic
        print(f"warning: answering without the brand catalog: {exc}", file=sys.stderr)
    behaviour = PlatformBehaviour(
        rate_limit_rps=args.rate_limit, latency_s=tuple(args.latency), throttle_rate=args.throttle_rate,
        hang_s=args.hang_s, api_key=args.api_key, retry_after_format=args.retry_after_format,
    ).with_transient_faults(args.fault_rate)
    server = SimulatorServer(SimulatorSettings(seed=args.seed, time_scale=args.time_scale, default=behaviour),
                             config, host=args.host, port=args.port)
    print(f"simulated platforms on {server.url}/<platform>/v1/chat/completions (Ctrl-C stops)", file=sys.stderr)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(server.serve())
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        raise UserError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0


def _backfill(args) -> int:
    config = _config(args)
    from ..defs.automation import yesterday
    until = args.until or yesterday()
    if args.since > until:
        raise UserError(f"--since {args.since} is after --until {until}")
    platforms = args.platform or config.platform_names
    for name in platforms:
        config.platform(name)  # unknown platform: a ConfigError naming the known ones
    from .backfill import run_backfill
    return run_backfill(args.since, until, platforms)


def _explain(args) -> int:
    from .explain import ExplainError, explain
    config = _config(args)
    config.platform(args.platform)
    try:
        print(explain(args.date, args.platform, args.brand, args.limit))
    except ExplainError as exc:
        raise UserError(str(exc)) from None
    return 0


def _analyze(args) -> int:
    from .analyze import AnswersFileError, run_analyze
    try:
        return run_analyze(args.catalog, args.answers, args.out)
    except AnswersFileError as exc:
        raise UserError(str(exc)) from None


def _bench_collect(args) -> int:
    from ..tools.bench.collect import run_collect_bench
    result = run_collect_bench(args.platforms, args.requests, args.rps, args.fault_rate, tuple(args.latency),
                               args.storm, args.concurrency, args.timeout, args.seed)
    print(json.dumps(result, ensure_ascii=False))
    return 0


def _bench_clean(args) -> int:
    from ..tools.bench.clean import run_clean_bench
    print(json.dumps(run_clean_bench(args.answers, args.aliases, args.seed), ensure_ascii=False))
    return 0


def _bench_metrics(args) -> int:
    from ..tools.bench.metrics import run_metrics_bench
    print(json.dumps(run_metrics_bench(args.days, min(args.platforms, 6), args.answers_per_partition,
                                       args.instance)))
    return 0


def _bench_reanalysis(args) -> int:
    from ..tools.bench.reanalysis import run_reanalysis_bench
    print(json.dumps(run_reanalysis_bench(args.days)))
    return 0


def main(argv: list[str] | None = None) -> int:
    # Dagster marks backfill_policy and friends as beta on every import; not news to a user.
    warnings.filterwarnings("ignore", message=r".*is currently in (beta|preview).*")
    args = build_parser().parse_args(argv)
    if args.config_dir:
        # The partitions (and so the Definitions) read the platforms from this variable.
        os.environ[CONFIG_DIR_ENV] = os.path.abspath(args.config_dir)
    try:
        return args.handler(args)
    except (UserError, ConfigError, MissingApiKey, UnknownPlatform, SimulatorPortBusy) as exc:
        print(f"visibility {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
