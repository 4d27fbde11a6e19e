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
import json
import os
import shutil
import subprocess
import sys
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
    """A process and all its descendants, read from /proc every `interval_s`: the peak of their
    summed proportional memory (PSS: a page that forked workers share counts once in all, where
    summing their RSS would count it in each) and the CPU seconds each one used. A process that
    lives less than an interval is missed.

    The reading runs in a process of its own (`python -m visibility_assets.tools.bench.night
    PID INTERVAL`), which leaves itself out: one reading of some thirty processes takes ~16 ms
    of CPU, and in the measured process it took that from the simulators' thread under the GIL,
    slowing the very night it measured."""

    def __init__(self, interval_s: float = 0.2, root: int | None = None):
        self.interval_s, self.root = interval_s, root or os.getpid()
        self.peak_pss_bytes, self.largest_pss_bytes, self.cpu_s = 0, 0, 0.0
        self._reader: subprocess.Popen | None = None

    def __enter__(self) -> ProcessTree:
        self._reader = subprocess.Popen(
            [sys.executable, "-m", "visibility_assets.tools.bench.night", str(self.root), str(self.interval_s)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self._reader.stdout.readline().strip() != "reading":  # its first reading is taken
            raise RuntimeError("the process-tree reader did not start")
        return self

    def __exit__(self, *exc) -> None:
        out, _ = self._reader.communicate("stop\n", timeout=60)  # it reads once more, then reports
        figures = json.loads(out.strip().splitlines()[-1])
        self.peak_pss_bytes, self.cpu_s = figures["peak_pss_bytes"], figures["cpu_s"]
        self.largest_pss_bytes = figures["largest_pss_bytes"]  # the largest one process was


def read_tree(root: int, interval_s: float, stop: threading.Event) -> dict:
    """The tree's peak summed PSS and the CPU seconds it used while read, every interval until
    `stop`, and once after."""
    me, peak, largest, cpu_ticks, before = os.getpid(), 0, 0, {}, {}

    def sample() -> None:
        nonlocal peak, largest
        pss = 0
        for pid, stat in _tree(root).items():
            if pid != me:
                cpu_ticks[pid] = max(cpu_ticks.get(pid, 0), int(stat[11]) + int(stat[12]))
                own = _pss_bytes(pid)
                pss += own
                largest = max(largest, own)
        peak = max(peak, pss)

    sample()
    before.update(cpu_ticks)  # what the processes already there had used before the reading began
    print("reading", flush=True)
    while not stop.wait(interval_s):
        sample()
    sample()
    used = sum(ticks - before.get(pid, 0) for pid, ticks in cpu_ticks.items())
    return {"peak_pss_bytes": peak, "largest_pss_bytes": largest, "cpu_s": used / os.sysconf("SC_CLK_TCK")}


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
            "largest_process_mb": round(tree.largest_pss_bytes / 2**20),
            "definition": "wall_s: `visibility demo` for one day on the example config with `scale` times its"
                          " questions and scale/2 times its rate and concurrency; rate_bound_s: the slowest"
                          " platform's requests at its rate_limit_rps (a tool-loop search counts two);"
                          " cpu_s: this process and every process under it; peak_memory_mb: the peak of"
                          " their summed proportional set size (PSS), largest_process_mb: the most one of"
                          " them held, both read from /proc every 0.2 s"}


def main() -> None:
    """The reader of ProcessTree: reads the tree of argv[1] every argv[2] seconds until a line
    on stdin, then prints its figures as JSON."""
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
    print(json.dumps(read_tree(int(sys.argv[1]), float(sys.argv[2]), stop)), flush=True)


if __name__ == "__main__":
    main()
