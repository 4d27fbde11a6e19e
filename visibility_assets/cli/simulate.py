"""`visibility simulate`: the simulated OpenAI-compatible platforms, in the foreground."""

from __future__ import annotations

import asyncio
import signal
import sys

from visibility_assets.cli.arguments import UserError, config_of
from visibility_assets.config import ConfigError


def add_parser(commands) -> None:
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
    simulate.add_argument("--moderation-rate", type=float, default=0.0,
                          help="share of prompts moderated, each platform in its own way")
    simulate.add_argument("--truncation-rate", type=float, default=0.0, help="share of answers cut at max tokens")
    simulate.add_argument("--billing-error", action="store_true",
                          help="every platform answers with its billing error until POST /_admin/<platform>/topup")
    simulate.add_argument("--window-limit", type=int, help="a fixed quota: N requests per calendar window, 429 beyond")
    simulate.add_argument("--window-s", type=float, default=60.0, help="the quota window's length (default 60 s)")
    simulate.add_argument("--window-retry-header", choices=("none", "retry-after", "llm_provider-retry-after"),
                          default="none", help="what the quota's 429 carries (LiteLLM's proxy: llm_provider-retry-after)")
    simulate.set_defaults(handler=run)


def run(args) -> int:
    from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
    from visibility_assets.tools.simulator.server import SimulatorServer

    config = None
    try:
        config = config_of(args)
    except ConfigError as exc:  # the simulator can run without a config; say why answers are generic
        print(f"warning: answering without the brand catalog: {exc}", file=sys.stderr)
    behaviour = PlatformBehaviour(
        rate_limit_rps=args.rate_limit, latency_s=tuple(args.latency), throttle_rate=args.throttle_rate,
        hang_s=args.hang_s, api_key=args.api_key, retry_after_format=args.retry_after_format,
        moderation_rate=args.moderation_rate, truncation_rate=args.truncation_rate, billing_error=args.billing_error,
        window_limit=args.window_limit, window_s=args.window_s,
        window_retry_header=None if args.window_retry_header == "none" else args.window_retry_header,
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
