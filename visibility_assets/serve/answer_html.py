"""An AI answer as safe HTML, with its alias matches highlighted.

Answers are untrusted input: markdown-it renders them with raw HTML off (a `<script>` in an
answer is shown as text) and images off (a markdown image is not fetched), and nh3 (the
ammonia sanitizer) then keeps only the tags and attributes listed here, and links to http,
https and mailto. Highlights are placed before rendering as private-use markers around each
match's span of the original text (the analyzer's positions), turned into `<mark>` tags in the
text between tags only, and the result is sanitized again."""

from __future__ import annotations

import re
import secrets

import nh3
from markdown_it import MarkdownIt

OPEN, MID, CLOSE = "\ue000", "\ue001", "\ue002"
MARKERS = re.compile("[\ue000-\ue002]")
NONCE_BYTES = 4  # its hex, 8 characters, follows each marker
# Compiled once: each answer's own nonce is compared in the replacement (a pattern per nonce was
# compiled per answer: a fifth of a page of 50 answers' rendering).
OPENING = re.compile(OPEN + "([0-9a-f]{8})([0-9]+)" + MID)
MARKER_IN_TAG = re.compile("(?:%EE%80%80|" + OPEN + ")([0-9a-f]{8})[0-9]+(?:%EE%80%81|" + MID + ")|(?:%EE%80%82|"
                           + CLOSE + ")([0-9a-f]{8})")
TAG = re.compile(r"(<[^>]*>)")
TAGS = {"p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5",
        "h6", "a", "table", "thead", "tbody", "tr", "th", "td", "hr", "del", "s", "mark"}
# No style attribute: an answer must not be able to lay itself over the page.
ATTRIBUTES = {"a": {"href", "title"}, "mark": {"class", "data-match", "title"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"]) \
    .disable("image")


def answer_html(text: str, matches: list[dict], focus: str | None = None) -> str:
    """`matches`: dicts with start_pos, end_pos, accepted, rule and brand (entity_matches rows);
    the matches of the brand `focus` are marked apart from the other brands'."""
    # A random nonce in each marker: an answer can write the private-use characters itself (a
    # character reference such as &#xE000; survives until markdown-it decodes it), never the nonce.
    nonce = secrets.token_hex(NONCE_BYTES)
    marked = _with_markers(MARKERS.sub("\ufffd", text or ""), matches, nonce)
    html = _clean(_markdown.render(marked))
    return _clean(_marks(html, matches, focus, nonce))


def _with_markers(text: str, matches: list[dict], nonce: str) -> str:
    """The text with OPEN nonce index MID ... CLOSE nonce around each match that overlaps no earlier one."""
    spans, end_of_last = [], -1
    for index, match in sorted(enumerate(matches), key=lambda m: (m[1]["start_pos"] or 0, -(m[1]["end_pos"] or 0))):
        start, end = match["start_pos"], match["end_pos"]
        if start is None or end is None or start < end_of_last or not 0 <= start < end <= len(text):
            continue
        spans.append((start, end, index))
        end_of_last = end
    out, at = [], 0
    for start, end, index in spans:
        out += [text[at:start], OPEN, nonce, str(index), MID, text[start:end], CLOSE, nonce]
        at = end
    out.append(text[at:])
    return "".join(out)


def _marks(html: str, matches: list[dict], focus: str | None, nonce: str) -> str:
    """Markers in text become <mark> tags; markers inside a tag (a link's URL) and any marker
    character without the nonce are dropped."""

    def opening(m: re.Match) -> str:
        return _open_tag(matches, int(m.group(2)), focus) if m.group(1) == nonce else m.group(0)

    def in_tag(m: re.Match) -> str:
        return "" if nonce in (m.group(1), m.group(2)) else m.group(0)

    pieces = TAG.split(html)
    for i, piece in enumerate(pieces):
        if piece.startswith("<"):
            pieces[i] = MARKERS.sub("", MARKER_IN_TAG.sub(in_tag, piece))
        else:
            piece = OPENING.sub(opening, piece)
            pieces[i] = MARKERS.sub("", piece.replace(CLOSE + nonce, "</mark>"))
    return "".join(pieces)


def _open_tag(matches: list[dict], index: int, focus: str | None) -> str:
    if not 0 <= index < len(matches):
        return ""
    match = matches[index]
    kind = ("accepted" if match.get("accepted") else "rejected") + (" focus" if match.get("brand") == focus else "")
    title = f"{match.get('brand', '')}: " + ("counted" if match.get("accepted") else f"not counted ({match.get('rule')})")
    return f'<mark class="match {kind}" data-match="{index}" title="{_attr(title)}">'


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _clean(html: str) -> str:
    return nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes=URL_SCHEMES,
                     link_rel="noopener noreferrer nofollow", strip_comments=True)
