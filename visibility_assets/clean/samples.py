"""Cleaning raw answers into samples: one row per answer, one per (answer, brand), one per
alias hit with its verdict, the state history of each sample, and a quarantine for samples
that cannot be analysed. Pure Python over rows; the asset reads and writes the warehouse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pyarrow as pa

from visibility_assets.clean.analyzer import ANALYZER_VERSION, Analysis, Analyzer, BrandResult
from visibility_assets.clean.domains import DomainTable
from visibility_assets.config import BrandCatalog, DomainClass
from visibility_assets.config.schema import CANARY, MAX_ANSWER_CHARS
from visibility_assets.core.answers import ANSWERED, PLATFORM, TEXT
from visibility_assets.warehouse.tables import (
    CLEANED_SAMPLES,
    ENTITY_MATCHES,
    SAMPLE_BRAND_RESULTS,
    SAMPLE_CITATIONS,
    SAMPLE_QUARANTINE,
    SAMPLE_STATE_HISTORY,
    SAMPLE_UNTRACKED_NAMES,
)

# The life of a sample; each transition is a row of sample_state_history.
PENDING, VALIDATING, VALID, INVALID, EXTRACTING, EXTRACTED, COMPLETED, FAILED = (
    "pending", "validating", "valid", "invalid", "extracting", "extracted", "completed", "failed")
EXCERPT_RADIUS = 20
# A citation mark of the text and the source number it refers to: [1], [^1^], [ref_1], [citation:1].
CITATION_MARK = re.compile(r"\[(?:\^|ref_|citation:\s*)?(\d{1,3})\^?\]")


@dataclass
class RawAnswer:
    request_key: str
    date: str
    platform: str
    question_id: str
    question_text: str
    category: str
    round: int
    answer_text: str
    outcome: str = ANSWERED  # answered | truncated | moderated, as collected
    platform_citations: tuple[str, ...] = ()  # URLs the platform gave in its structured field
    variant: str | None = None  # the question's variant asked; None: its own text
    platform_indexes: tuple[int | None, ...] = ()  # the number of each platform source, as the platform gave it


@dataclass
class CleanedBatch:
    samples: list[dict] = field(default_factory=list)
    brand_results: list[dict] = field(default_factory=list)
    matches: list[dict] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)
    quarantine: list[dict] = field(default_factory=list)
    citations: list[dict] = field(default_factory=list)
    untracked: list[dict] = field(default_factory=list)

    def tables(self) -> dict[str, pa.Table]:
        return {table.name: table.from_dicts(rows)
                for table, rows in ((CLEANED_SAMPLES, self.samples), (SAMPLE_BRAND_RESULTS, self.brand_results),
                                    (ENTITY_MATCHES, self.matches), (SAMPLE_STATE_HISTORY, self.history),
                                    (SAMPLE_QUARANTINE, self.quarantine), (SAMPLE_CITATIONS, self.citations),
                                    (SAMPLE_UNTRACKED_NAMES, self.untracked))}


def _cites_domain(hosts: list[str], domains: tuple[str, ...]) -> bool:
    return any(host == d or host.endswith("." + d) for host in hosts for d in domains)


NOT_NAMED = BrandResult()  # read only: the result of every brand an answer does not name


class SampleCleaner:
    """weights: each question's weight (questions.yaml); a question not in it weighs 1."""

    def __init__(self, catalog: BrandCatalog, run_id: str, domains: Sequence[DomainClass] = (),
                 max_answer_chars: int = MAX_ANSWER_CHARS, weights: Mapping[str, float] | None = None):
        self.catalog, self.run_id, self.weights = catalog, run_id, weights or {}
        self.analyzer = Analyzer(catalog, max_answer_chars)
        self.domain_table = DomainTable(catalog, domains)
        self.domains = {b.name: tuple(d.lower() for d in b.domains) for b in catalog.brands}

    def clean(self, answers: list[RawAnswer]) -> CleanedBatch:
        batch = CleanedBatch()
        for answer in answers:
            history = _History(answer, self.run_id, batch.history)
            history.move(PENDING)
            try:
                self._clean_one(answer, history, batch)
            except Exception as exc:  # a sample that cannot be analysed must not sink the partition
                error = f"{type(exc).__name__}: {exc}"
                history.move(FAILED, error)
                batch.quarantine.append({**history.key, "run_id": self.run_id, "error": error[:1000], "at": _now()})
        return batch

    def _clean_one(self, answer: RawAnswer, history: _History, batch: CleanedBatch) -> None:
        if answer.category not in self.analyzer.brand_names and answer.category != CANARY:
            raise ValueError(f"category {answer.category!r} is not in the brand catalog")
        history.move(VALIDATING)
        analysis = self.analyzer.analyze(answer.answer_text, answer.question_text, answer.category)
        text_urls = list(analysis.citations)
        if answer.outcome != ANSWERED:  # cut off or moderated: not a complete answer
            analysis = analysis.as_invalid(answer.outcome)
        elif analysis.valid and answer.platform_citations:
            analysis.citations = list(dict.fromkeys([*answer.platform_citations, *analysis.citations]))
            analysis.has_citation = True
        history.move(VALID if analysis.valid else INVALID, analysis.invalid_reason)
        if analysis.valid:
            history.move(EXTRACTING)
            history.move(EXTRACTED, f"{len(analysis.mentioned)} brands")
        batch.samples.append(self._sample_row(answer, analysis, history.key))
        batch.brand_results.extend(self._brand_rows(answer, analysis, history.key))
        batch.matches.extend(self._match_rows(answer, analysis, history.key))
        if analysis.valid:
            marked = {int(n) for n in CITATION_MARK.findall(answer.answer_text or "")}
            batch.citations.extend(self._citation_rows(answer, marked, text_urls, history.key))
            batch.untracked.extend({**history.key, "category": answer.category, "name": name.name,
                                    "name_key": name.key, "other_form": name.other_form,
                                    "other_key": name.other_key, "list_rank": name.list_rank}
                                   for name in analysis.untracked)
        history.move(COMPLETED)

    def _sample_row(self, answer: RawAnswer, analysis: Analysis, key: dict) -> dict:
        return {**key, "question_id": answer.question_id, "question_weight": self.weights.get(answer.question_id, 1.0),
                "category": answer.category,
                "round": answer.round, "variant": answer.variant, "state": COMPLETED, "valid": analysis.valid,
                "invalid_reason": analysis.invalid_reason, "brands_mentioned": len(analysis.mentioned),
                "option_list_kind": analysis.option_list_kind, "citations": analysis.citations,
                "has_citation": analysis.has_citation, "analyzer_version": ANALYZER_VERSION,
                "config_version": self.catalog.version, "run_id": self.run_id, "cleaned_at": _now(),
                "answer_chars": len(answer.answer_text or ""), "analysis_capped": analysis.capped}

    def _brand_rows(self, answer: RawAnswer, analysis: Analysis, key: dict) -> list[dict]:
        hosts = [(urlsplit(url).hostname or "").lower() for url in analysis.citations]
        rows = []
        for name in analysis.category_brands:
            result = analysis.mentioned.get(name, NOT_NAMED)
            rows.append({**key, "category": answer.category, "brand": name, "valid": analysis.valid,
                         "has_citation": analysis.has_citation, "mentioned": result.mentioned, "mention_count": result.mention_count,
                         "first_mention_order": result.first_mention_order, "list_rank": result.list_rank,
                         "recommended": result.recommended, "named_unknown": result.named_unknown,
                         "cites_own_domain": result.mentioned and _cites_domain(hosts, self.domains[name]),
                         "sentiment": result.sentiment})
        return rows

    def _citation_rows(self, answer: RawAnswer, marked: set[int], text_urls: Sequence[str], key: dict) -> list[dict]:
        """A row per cited URL and where it came from (a URL both in the platform's field and in
        the text has a row for each). `cited`: a link in the text is cited; a platform source is
        cited when the text marks its number ([1], [ref_1]), retrieved but not cited when the text
        marks others only, and unknown (null) when the text marks none or the source has no number."""
        indexes = answer.platform_indexes or (None,) * len(answer.platform_citations)
        platform = {}
        for url, index in zip(answer.platform_citations, indexes):
            known = None if not marked or index is None else index in marked
            before = platform.get(url)  # a URL given twice is cited if either is
            platform[url] = known if before is None else (before or bool(known))
        rows = []
        for source, cited in ((PLATFORM, platform), (TEXT, dict.fromkeys(text_urls, True))):
            for url, is_cited in cited.items():
                classified = self.domain_table.classify(url)
                if classified is not None:
                    domain, kind, brand = classified
                    rows.append({**key, "url": url, "source": source, "domain": domain, "domain_class": kind,
                                 "own_brand": brand, "cited": is_cited})
        return rows

    @staticmethod
    def _match_rows(answer: RawAnswer, analysis: Analysis, key: dict) -> list[dict]:
        text = answer.answer_text
        rows = []
        mentions = {name: iter(result.mention_sentiments) for name, result in analysis.mentioned.items()}
        for hit, (start, end) in zip(analysis.hits, analysis.hit_spans):
            judged = next(mentions[hit.brand], None) if hit.accepted and hit.brand in mentions else None
            rows.append({**key, "brand": hit.brand, "brand_category": hit.category, "alias": hit.alias,
                         "start_pos": start, "end_pos": end, "matched_text": text[start:end],
                         "accepted": hit.accepted, "rule": hit.rule,
                         "excerpt": text[max(0, start - EXCERPT_RADIUS):end + EXCERPT_RADIUS],
                         "sentiment": judged.label if judged else None,
                         "sentiment_cues": list(judged.cues) if judged else None})
        return rows


class _History:
    def __init__(self, answer: RawAnswer, run_id: str, sink: list[dict]):
        self.key, self.run_id, self.sink, self.seq = _key(answer), run_id, sink, 0

    def move(self, state: str, detail: str | None = None) -> None:
        self.seq += 1
        self.sink.append({**self.key, "seq": self.seq, "state": state, "at": _now(),
                          "run_id": self.run_id, "detail": detail})


def _key(answer: RawAnswer) -> dict:
    return {"request_key": answer.request_key, "date": answer.date, "platform": answer.platform}


def _now() -> datetime:
    return datetime.now(UTC)
