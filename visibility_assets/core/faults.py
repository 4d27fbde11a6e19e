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
