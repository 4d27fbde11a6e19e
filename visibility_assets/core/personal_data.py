"""Personal data an answer may carry, masked where a viewer or an export can read it.

An assistant's answer can quote a hotline, a sales rep's e-mail, or (copied from a leaked page)
an ID or card number. The raw tables keep the verbatim answer for analysts; the workspace shows
a viewer, and the report and exports show anyone, the masked form. What is masked:

- e-mail addresses;
- phone numbers: mainland mobiles (1[3-9] and 9 digits, with +86 / 86 and spaces or hyphens
  allowed), landlines written with an area code (010-12345678, (0755) 1234 5678), and
  international numbers written with a leading + and 8 to 15 digits;
- mainland resident ID numbers (18 characters whose GB 11643 check digit holds);
- bank card numbers (15 to 19 digits, spaced or not, in a card scheme's range, whose Luhn check
  holds, and not an ID).

Each keeps a hint of its shape: the e-mail's domain, a phone's last 4 digits, a card's last 4;
an ID is masked whole. Numbers that fail their check (order numbers, timestamps) are left alone.
"""

from __future__ import annotations

import re

MASK = "*"

EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@([A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+)(?![\w-])")
# Digits not touching other digits or letters: 138 1234 5678, +86-138-1234-5678, 010-12345678.
MOBILE = re.compile(r"(?<![\w+])(?:\+?86[\s-]?)?1[3-9]\d(?:[\s-]?\d{4}){2}(?!\w)")
LANDLINE = re.compile(r"(?<![\w(])(?:\(0\d{2,3}\)\s?|0\d{2,3}-)\d{3,4}[\s-]?\d{4}(?!\w)")
INTERNATIONAL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[\s-]?\d{2,5}){2,5}(?!\w)")
RESIDENT_ID = re.compile(r"(?<![\w])\d{17}[\dXx](?!\w)")
CARD = re.compile(r"(?<![\w])\d{4}(?:[\s-]?\d{3,4}){2,4}(?:[\s-]?\d{1,3})?(?!\w)")

ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
ID_CHECK = "10X98765432"


def mask(text: str) -> str:
    """The text with every piece of personal data above masked."""
    if not text or not any(c.isdigit() or c == "@" for c in text):
        return text  # most strings: nothing to look for
    text = EMAIL.sub(lambda m: MASK * 3 + "@" + m.group(1), text)
    text = RESIDENT_ID.sub(lambda m: MASK * 18 if valid_resident_id(m.group()) else m.group(), text)
    text = CARD.sub(_card, text)
    for pattern in (MOBILE, LANDLINE, INTERNATIONAL):
        text = pattern.sub(_keep_last_four, text)
    return text


def valid_resident_id(text: str) -> bool:
    digits = text[:17]
    total = sum(int(d) * w for d, w in zip(digits, ID_WEIGHTS))
    return ID_CHECK[total % 11] == text[17].upper()


def luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


# The card schemes' number ranges (UnionPay 62, Visa 4, Mastercard 51-55 and 2221-2720, Amex
# 34/37, JCB 35, Discover 60/65) and lengths: an order number passes Luhn one time in ten.
CARD_PREFIX = re.compile(r"^(?:62|4|5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[47]|35|60|65)")


def _card(match: re.Match) -> str:
    digits = re.sub(r"\D", "", match.group())
    if not 15 <= len(digits) <= 19 or not CARD_PREFIX.match(digits) or not luhn(digits) \
            or (len(digits) == 18 and valid_resident_id(digits)):
        return match.group()
    return MASK * (len(digits) - 4) + digits[-4:]


def _keep_last_four(match: re.Match) -> str:
    digits = re.sub(r"\D", "", match.group())
    return MASK * (len(digits) - 4) + digits[-4:]
