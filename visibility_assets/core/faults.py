"""Whose a problem is: every alert and every failed run carries one of these, so that each
reaches the people who can act on it (webhooks are routed by class, events.yaml).

- brand: a brand's visibility changed (a mention-rate alert): news for the brand team, no fault.
- source: the platform (down, throttling, billing, errors, a refusal or moderation spike).
- rule: the analyzer or the config (a quarantine spike, a replay diff above its threshold, the
  platform's model changed under the analyzer, a missing key, a setting the dialect refuses)
  and the pipeline's own processing.
- downstream: where results go (the warehouse, a webhook, the disk, the machine a run ran on).
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BRAND, SOURCE, RULE, DOWNSTREAM = "brand", "source", "rule", "downstream"
FAULT_CLASSES = (BRAND, SOURCE, RULE, DOWNSTREAM)
FAULT_CLASS_TAG = "visibility/fault_class"  # on a failed run

# Error texts that mean the disk (or the storage behind it) refused a write.
DISK_FULL_TEXTS = ("no space left on device", "database or disk is full", "disk i/o error", "disk quota exceeded",
                   "not enough space on the disk", "could not write file")
# Exception classes that say the warehouse or Dagster's storage failed, not the platform or a rule.
STORAGE_ERRORS = ("IOException", "TransactionException", "OperationalError", "DatabaseError", "DiskFull",
                  "PermissionError", "OSError")
CONFIG_ERRORS = ("ConfigError", "MissingApiKey", "UnsupportedSetting", "UnknownPlatform")


def is_disk_full(error: BaseException) -> bool:
    """ENOSPC or EDQUOT anywhere in the chain, or the text SQLite and DuckDB raise for it."""
    for link in chain(error):
        if isinstance(link, OSError) and link.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(text in str(link).lower() for text in DISK_FULL_TEXTS):
            return True
    return False


def chain(error: BaseException | None, limit: int = 20) -> list[BaseException]:
    """The exception and its causes (explicit, else implicit), outermost first."""
    links: list[BaseException] = []
    while error is not None and len(links) < limit and error not in links:
        links.append(error)
        error = error.__cause__ or error.__context__
    return links


def class_of_error(names_and_texts: list[tuple[str, str]]) -> str:
    """The class of a failure whose exception chain gave these (class name, message) pairs,
    where the step that failed did not say (a Failure of ours names its class itself)."""
    for name, text in names_and_texts:
        if any(disk in text.lower() for disk in DISK_FULL_TEXTS) or name in STORAGE_ERRORS:
            return DOWNSTREAM
    for name, _ in names_and_texts:
        if name in CONFIG_ERRORS:
            return RULE
    return RULE  # the pipeline's own processing


DISK_FULL = "the disk is full"  # how DiskFull's message begins


class DiskFull(Exception):
    """A write the disk refused, said once: what was being written, where, and what to do."""

    def __init__(self, what: str, path: str | Path):
        super().__init__(f"{DISK_FULL}: {what} could not be written to {path} ({free_space(path)});"
                         " free some space and run again: what was stored before is kept")
        self.what, self.path = what, str(path)


@contextmanager
def writing(what: str, path: str | Path) -> Iterator[None]:
    """Turn a full disk met inside into DiskFull naming `what` and `path`."""
    try:
        yield
    except DiskFull:
        raise
    except Exception as exc:
        if is_disk_full(exc):
            raise DiskFull(what, path) from exc
        raise


def free_space(path: str | Path) -> str:
    """What is left on the device holding `path` (its nearest existing folder)."""
    folder = Path(str(path))
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return "free space unknown"
    return f"{usage.free / 1e6:.1f} MB free of {usage.total / 1e6:.1f} MB"


def as_disk_full(error: BaseException) -> DiskFull | None:
    """A full disk met anywhere below, said as DiskFull: what was being written is told by the
    error's own kind where no DiskFull named it (Dagster's SQLite storage, the lake)."""
    if not is_disk_full(error):
        return None
    named = next((link for link in chain(error) if isinstance(link, DiskFull)), None)
    if named is not None:
        return named
    from visibility_assets.core.paths import dagster_home, data_dir  # on the error path only

    modules = {type(link).__module__.split(".")[0] for link in chain(error)}
    if modules & {"sqlalchemy", "sqlite3", "dagster"}:
        return DiskFull("Dagster's run and event storage", dagster_home())
    if "duckdb" in modules:
        return DiskFull("the warehouse", data_dir() / "warehouse")
    return DiskFull("the data directory", data_dir())
