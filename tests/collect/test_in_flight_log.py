"""The log of requests in flight is read after a crash or a full disk: a line cut short, even in
the middle of a character, is skipped, and what is appended after it is read whole."""

from datetime import datetime, timezone

from visibility_assets.collect.client import Attempt
from visibility_assets.collect.in_flight import InFlightLog

STARTED = datetime(2026, 11, 5, 2, 0, tzinfo=timezone.utc)


def answered(log: InFlightLog, key: str) -> None:
    log.answered([key, 1, "run-1"], [key, "回答：阿里云"])


def test_a_line_cut_inside_a_character_is_skipped_and_the_next_run_appends_on_a_line_of_its_own(tmp_path):
    path = tmp_path / "in_flight" / "deepseek.jsonl"
    first = InFlightLog(path)
    answered(first, "k1")
    first.close()
    whole = path.read_bytes()
    answered(first, "k2")
    first.close()
    cut = path.read_bytes()[: len(whole) + 40]  # the disk filled in the middle of 阿里云
    path.write_bytes(cut)
    assert not cut.decode("utf-8", errors="ignore").endswith("\n")

    resumed = InFlightLog(path)
    assert [entry["attempt"][0] for entry in resumed.answers()] == ["k1"]
    answered(resumed, "k3")
    resumed.sent(Attempt("k4", 1, "run-2", STARTED, STARTED, 0.0))
    resumed.close()

    again = InFlightLog(path)
    assert [entry["attempt"][0] for entry in again.answers()] == ["k1", "k3"]
    assert [(attempt.request_key, attempt.error_class) for attempt in again.interrupted(set())] == [("k4", "interrupted")]
