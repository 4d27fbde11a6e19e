"""`visibility bench night`: `visibility demo`'s night (every platform, the catalog run before and
the report run after) on the example config scaled up, beside the rate bound it cannot beat.

`--scale 10` asks ten times the example's questions (each question in ten wordings) at five
times its rate, with five times its concurrency: 450 questions, 8,208 answers at 50 rps. The
wall time, the CPU seconds of this process and every process it started, and the peak of the
summed memory of all of them (read from /proc every 0.2 s), next to the rate bound the demo
prints: the slowest platform's requests at its permitted rate.
"""

from __future__ import annotations

import io
import os
import shutil
import threading
import time
from pathlib import Path

import yaml

from visibility_assets.tools.bench import scratch_home

QUESTION_WORDINGS = ("", "（请简要回答）", "（请给出理由）", "（面向中小企业）", "（面向个人用户）",
                     "（预算有限）", "（注重售后）", "（2026年）", "（请对比优缺点）", "（请列出前五）")


def scaled_config_dir(target: Path, scale: int) -> Path:
    """The example config with `scale` times its questions, rate and concurrency (scale/2 for
    the rate and concurrency, at least 1x)."""
    from visibility_assets.config import EXAMPLE_CONFIG_DIR

    shutil.copytree(EXAMPLE_CONFIG_DIR, target)
    questions = yaml.safe_load((target / "questions.yaml").read_text(encoding="utf-8"))
    base = questions["questions"]
    questions["questions"] = [
        {**question, "id": f"{question['id']}-w{wording}" if wording else question["id"],
         "text": question["text"] + QUESTION_WORDINGS[wording % len(QUESTION_WORDINGS)]}
        for wording in range(scale) for question in base]
    (target / "questions.yaml").write_text(yaml.safe_dump(questions, allow_unicode=True), encoding="utf-8")
    platforms = yaml.safe_load((target / "platforms.yaml").read_text(encoding="utf-8"))
    factor = max(1.0, scale / 2)
    for platform in platforms["platforms"]:
        platform["rate_limit_rps"] = platform["rate_limit_rps"] * factor
        platform["max_concurrency"] = int(platform["max_concurrency"] * factor)
    (target / "platforms.yaml").write_text(yaml.safe_dump(platforms, allow_unicode=True), encoding="utf-8")
    return target


class ProcessTree:
    """This process and all its descendants, read from /proc every `interval_s`: the peak of
    their summed proportional memory (PSS: a page that forked workers share counts once in all,
    where summing their RSS would count it in each) and the CPU seconds each one used. A
    process that lives less than an interval is missed."""

    def __init__(self, interval_s: float = 0.2):
        self.interval_s, self.peak_pss_bytes = interval_s, 0
        self._cpu_ticks: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> ProcessTree:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def cpu_s(self) -> float:
        return sum(self._cpu_ticks.values()) / os.sysconf("SC_CLK_TCK")

    def _watch(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        pss = 0
        for pid, stat in _tree(os.getpid()).items():
            self._cpu_ticks[pid] = max(self._cpu_ticks.get(pid, 0), int(stat[11]) + int(stat[12]))
            pss += _pss_bytes(pid)
        self.peak_pss_bytes = max(self.peak_pss_bytes, pss)


def _tree(root: int) -> dict[int, list[str]]:
    """Each process of the tree under `root` (itself included): the fields of its stat after the name."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(int(stat[1]), []).append(pid)
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            found[pid] = stats[pid]
        todo.extend(children.get(pid, ()))
    return found


def _pss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def run_night_bench(scale: int = 10, progress=lambda message: None) -> dict:
    from visibility_assets.config import load_config
    from visibility_assets.tools.bench import LAST_DAY
    from visibility_assets.tools.demo import rate_bound_s, run_demo

    with scratch_home("bench-night-") as scratch:
        config = load_config(scaled_config_dir(Path(scratch) / "config", scale))
        answers = (len(config.questions) + len(config.canaries)) * sum(p.rounds for p in config.platforms)
        bound, slowest = rate_bound_s(config, 1)
        progress(f"bench night: {len(config.questions)} questions, {answers} answers;"
                 f" rate bound {bound:.1f} s ({slowest})")
        log = io.StringIO()
        started = time.monotonic()
        with ProcessTree() as tree:
            status = run_demo(config, [LAST_DAY.isoformat()], out=log)
        wall = time.monotonic() - started
    return {"scale": scale, "questions": len(config.questions), "answers": answers,
            "success": status == 0, "wall_s": round(wall, 2), "rate_bound_s": round(bound, 2),
            "slowest_platform": slowest, "wall_over_rate_bound": round(wall / bound, 3),
            "cpu_s": round(tree.cpu_s, 1), "peak_memory_mb": round(tree.peak_pss_bytes / 2**20),
            "definition": "wall_s: `visibility demo` for one day on the example config with `scale` times its"
                          " questions and scale/2 times its rate and concurrency; rate_bound_s: the slowest"
                          " platform's requests at its rate_limit_rps (a tool-loop search counts two);"
                          " cpu_s: this process and every process under it; peak_memory_mb: the peak of"
                          " their summed proportional set size (PSS), both read from /proc every 0.2 s"}
