"""What the demo plans before it runs: its days, and the rate bound it prints beside its wall
time (the least time the collection can take at the platforms' permitted rates)."""

from datetime import date

from visibility_assets.cli.demo import demo_dates
from visibility_assets.config import load_config
from visibility_assets.tools.demo import HEAD_START_S, head_start_s, platform_bounds_s, rate_bound_s


def test_the_days_end_at_the_date_given():
    assert demo_dates(date(2026, 11, 30), 3) == ["2026-11-28", "2026-11-29", "2026-11-30"]


def test_the_rate_bound_is_the_slowest_platforms_nightly_requests_at_its_rate_day_after_day():
    config = load_config()
    answers = (len(config.questions) + len(config.canaries)) * config.platforms[0].rounds
    assert answers == 153  # 45 questions and 6 canary prompts, 3 rounds each
    bound, slowest = rate_bound_s(config, days=2)
    # Kimi searches through a tool loop: each answer is the question and the tool's result.
    assert slowest == "kimi" and config.platform("kimi").web_search
    assert bound == 2 * answers / config.platform("kimi").rate_limit_rps * 2


def test_the_slowest_platform_starts_ahead_by_at_most_half_of_what_the_next_slowest_can_spare():
    bounds = platform_bounds_s(load_config())
    assert bounds["kimi"] - sorted(bounds.values())[-2] > 2 * HEAD_START_S  # Kimi's night is twice the others'
    assert head_start_s(bounds) == HEAD_START_S
    assert head_start_s({"kimi": 10.0, "qwen": 9.0, "ernie": 2.0}) == 0.5
    assert head_start_s({"kimi": 10.0, "qwen": 10.0}) == 0.0
    assert head_start_s({"kimi": 10.0}) == 0.0
