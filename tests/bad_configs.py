"""A corpus of broken config folders, as operators write them: each is the shipped example with
one edit, and names the file and line the error must point at.

An edit replaces the first occurrence of `old` in `file` with `new` (a file the example lacks
is written whole from `new`); the expected line is the line where `new` starts, plus `offset`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from visibility_assets.config import EXAMPLE_CONFIG_DIR

DEEPSEEK = "  - name: deepseek\n    base_url: http://127.0.0.1:8787/deepseek/v1\n"
DEEPSEEK_ENTRY = DEEPSEEK + """\
    model: deepseek-flash
    dialect: deepseek
    thinking: disabled
    rate_limit_rps: 10
    max_concurrency: 8
    timeout_s: 60
    rounds: 3
"""
DEEPSEEK_ROUNDS = "    timeout_s: 60\n    rounds: 3\n  - name: qwen\n"
QWEN_MODEL = "    model: qwen-plus\n"
ALIYUN = "  - name: 阿里云\n    category: cloud\n    aliases: [阿里云, Alibaba Cloud, Aliyun, 阿里巴巴云]\n"
Q001 = "  - id: q001\n    text: 有哪些适合企业的云数据库方案？\n    category: cloud\n    scene: RECOMMEND\n    priority: 3\n"
DEEPSEEK_PRICE = "    input_per_mtok: 2.0\n    cached_input_per_mtok: 0.2\n"
CANARY_1 = "  - id: canary-zh-1\n"


@dataclass(frozen=True)
class BadConfig:
    name: str
    file: str
    old: str | None  # None: the file is new, written whole
    new: str
    offset: int = 0  # the bad line's distance from the first line of `new`
    says: str = ""  # a fragment the message must contain

    def write(self, directory: Path) -> Path:
        shutil.copytree(EXAMPLE_CONFIG_DIR, directory)
        path = directory / self.file
        if self.old is None:
            path.write_text(self.new, encoding="utf-8")
            return directory
        text = path.read_text(encoding="utf-8")
        assert self.old in text, f"{self.name}: the example's {self.file} no longer has {self.old!r}"
        path.write_text(text.replace(self.old, self.new, 1), encoding="utf-8")
        return directory

    def line(self) -> int:
        if self.old is None:
            return 1 + self.offset
        text = (EXAMPLE_CONFIG_DIR / self.file).read_text(encoding="utf-8")
        return text[:text.index(self.old)].count("\n") + 1 + self.offset


def _rounds(value: str, says: str) -> BadConfig:
    return BadConfig(f"rounds {value}", "platforms.yaml", DEEPSEEK_ROUNDS,
                     DEEPSEEK_ROUNDS.replace("rounds: 3", f"rounds: {value}"), 1, says)


def _deepseek(key_value: str, says: str) -> BadConfig:
    """DeepSeek's entry with one key set (in its place when the entry has it, else appended)."""
    key = key_value.split(":")[0]
    lines = DEEPSEEK_ENTRY.splitlines(keepends=True)
    index = next((i for i, line in enumerate(lines) if line.strip().startswith(key + ":")), len(lines))
    lines[index:index + 1] = [f"    {key_value}\n"]
    return BadConfig(key_value, "platforms.yaml", DEEPSEEK_ENTRY, "".join(lines), index, says)


def _base_url(url: str, says: str) -> BadConfig:
    return BadConfig(f"base_url {url}", "platforms.yaml", DEEPSEEK,
                     f"  - name: deepseek\n    base_url: {url}\n", 1, says)


CASES = [
    _rounds("1000000000000", "less than or equal to 100"),
    _rounds("yes", "valid integer"),
    _rounds("true", "valid integer"),
    _rounds('"3"', "valid integer"),
    _rounds("2.5", "valid integer"),
    _rounds("0", "greater than or equal to 1"),
    _rounds("-1", "greater than or equal to 1"),
    _deepseek("max_concurrency: 1e12", "valid integer"),
    _deepseek("max_concurrency: 100000", "less than or equal to 1000"),
    _deepseek("timeout_s: 1e308", "less than or equal to 3600"),
    _deepseek("timeout_s: 0", "greater than or equal to 0.1"),
    _deepseek("rate_limit_rps: .inf", "finite number"),
    _deepseek("rate_limit_rps: .nan", "finite number"),
    _deepseek("rate_limit_rps: fast", "valid number"),
    _deepseek("web_search: yes", "valid boolean"),
    _deepseek("dialect: gpt", "dialect"),
    _deepseek("max_cost_per_day: -5", "greater than 0"),
    _deepseek("extra_requests_per_day: 2000000", "less than or equal to 1000000"),
    _deepseek("colour: red", "unknown key 'colour'"),
    BadConfig("duplicate key", "platforms.yaml", DEEPSEEK_ROUNDS,
              DEEPSEEK_ROUNDS.replace("rounds: 3\n", "rounds: 3\n    rounds: 5\n"), 2, "duplicate key 'rounds'"),
    _base_url("http://127.0.0.1:99999/deepseek/v1", "Port out of range"),
    _base_url("http://[::1/deepseek/v1", "Invalid IPv6 URL"),
    _base_url("ftp://127.0.0.1:8787/deepseek/v1", "http:// or https://"),
    _base_url("http:///deepseek/v1", "no host"),
    _base_url("127.0.0.1:8787/deepseek/v1", "http:// or https://"),
    _base_url("http://127.0.0.1:port/v1", "Port could not be cast"),
    BadConfig("missing colon", "platforms.yaml", QWEN_MODEL, "    model qwen-plus\n", 0, "not valid YAML"),
    BadConfig("unclosed quote", "platforms.yaml", QWEN_MODEL, '    model: "qwen-plus\n', 0, "not valid YAML"),
    BadConfig("unclosed bracket", "brands.yaml", ALIYUN,
              ALIYUN.replace("阿里巴巴云]", "阿里巴巴云"), 2, "not valid YAML"),
    BadConfig("bad indentation", "platforms.yaml", QWEN_MODEL, "   model: qwen-plus\n", 0, "not valid YAML"),
    BadConfig("tab indentation", "platforms.yaml", QWEN_MODEL, "\tmodel: qwen-plus\n", 0, "not valid YAML"),
    BadConfig("duplicate platform", "platforms.yaml", "  - name: qwen\n", "  - name: deepseek\n", 0,
              "duplicate platform name"),
    BadConfig("platform name with a space", "platforms.yaml", "  - name: qwen\n", "  - name: Qwen Plus\n", 0,
              "should match pattern"),
    BadConfig("duplicate brand key", "brands.yaml", ALIYUN, ALIYUN + "    aliases: [阿里]\n", 3,
              "duplicate key 'aliases'"),
    BadConfig("alias claimed twice", "brands.yaml", "aliases: [腾讯云, Tencent Cloud]",
              "aliases: [腾讯云, Aliyun]", -2, "already claimed"),
    BadConfig("priority as a word", "questions.yaml", Q001, Q001.replace("priority: 3", "priority: high"), 4,
              "valid integer"),
    BadConfig("unknown category", "questions.yaml", Q001, Q001.replace("category: cloud", "category: toys"), 0,
              "unknown category 'toys'"),
    BadConfig("question priority out of range", "questions.yaml", Q001,
              Q001.replace("priority: 3", "priority: 5000"), 4, "less than or equal to 1000"),
    BadConfig("question weight of zero", "questions.yaml", "weight: 12", "weight: 0", 0, "greater than 0"),
    BadConfig("question weight as a word", "questions.yaml", "weight: 12", "weight: lots", 0, "valid number"),
    BadConfig("negative price", "prices.yaml", DEEPSEEK_PRICE, DEEPSEEK_PRICE.replace("2.0", "-1"), 0,
              "greater than or equal to 0"),
    BadConfig("infinite multiplier", "prices.yaml", DEEPSEEK_PRICE, DEEPSEEK_PRICE
              + '    windows: [{start: "00:30", end: "08:30", multiplier: .inf}]\n', 2, "finite number"),
    BadConfig("duplicate canary key", "canaries.yaml", CANARY_1, CANARY_1 + "    id: canary-zh-9\n", 1,
              "duplicate key 'id'"),
    BadConfig("events: merge window of years", "events.yaml", None,
              "events:\n  merge_window_minutes: 1e9\n", 1, "less than or equal to 1440"),
    BadConfig("events: duplicate section", "events.yaml", None,
              "events:\n  alert_extra_rounds: 2\nevents:\n  alert_extra_rounds: 3\n", 2, "duplicate key 'events'"),
    BadConfig("webhook report_url without host", "events.yaml", None,
              "notifications:\n  report_url: https:///report.html\n", 1, "no host"),
    BadConfig("digest to a webhook not defined", "events.yaml", None,
              "notifications:\n  digests:\n    webhooks: [team-feishu]\n", 1, "no webhook named 'team-feishu'"),
    BadConfig("digest mail without a recipient", "events.yaml", None,
              "notifications:\n  digests:\n    email:\n      smtp_host: smtp.example.com\n"
              "      sender: v@example.com\n      to: []\n", 5, "at least 1 item"),
    BadConfig("domain of an unknown class", "domains.yaml", None,
              "domains:\n  - domain: example.org\n    class: blog\n", 2, "class"),
    BadConfig("a control character in the file", "brands.yaml", ALIYUN, ALIYUN.replace("name: 阿里云", "name: 阿\x01里云"),
              0, "control character U+0001 is not allowed"),
    BadConfig("a control character as an escape", "brands.yaml", ALIYUN,
              ALIYUN.replace("name: 阿里云", 'name: "a\\x01b"'), 0, "holds the control character U+0001"),
    BadConfig("a NUL byte as an escape", "questions.yaml", Q001, Q001.replace("text: 有哪些适合企业的云数据库方案？",
                                                                  'text: "有哪些\\0适合企业的云数据库方案？"'), 1,
              "holds the control character U+0000"),
    BadConfig("a NUL byte in an alias", "brands.yaml", "aliases: [腾讯云, Tencent Cloud]",
              'aliases: [腾讯云, "Tencent\\0Cloud"]', 0, "U+0000"),
]
