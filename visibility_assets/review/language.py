"""An answer's language, for the accuracy ledger's rows: Simplified or Traditional Chinese, or
English (anything mostly in Latin letters). Read from the answer's own letters: a question in
Chinese is sometimes answered in English."""

from __future__ import annotations

import re

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")
# Common characters written differently in the two scripts (这/這 ...): which set an answer uses.
SIMPLIFIED_ONLY = frozenset("这们为说对会关还点发现时实来国个过问题价务与产业经应")
TRADITIONAL_ONLY = frozenset("這們為說對會關還點發現時實來國個過問題價務與產業經應")


def answer_language(text: str) -> str:
    """zh-Hans, zh-Hant or en. A Chinese character says more than a Latin letter: an answer
    counts as Chinese once it has a third as many Han characters as letters."""
    han = len(HAN.findall(text))
    if han == 0 or han * 3 < len(LATIN.findall(text)):
        return "en"
    traditional = sum(1 for char in text if char in TRADITIONAL_ONLY)
    simplified = sum(1 for char in text if char in SIMPLIFIED_ONLY)
    return "zh-Hant" if traditional > simplified else "zh-Hans"
