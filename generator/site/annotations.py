"""W3C Web Annotation export: a note's published extractions and comments as an
``AnnotationCollection`` (JSON-LD). Pure: site model in, JSON-ready data out.

Each live extraction is a ``highlighting`` annotation with three kinds of targets:
its portions in the note's text projection (``notes/<slug>.txt``, offsets in code
points, with a quote selector for robustness), its place on the HTML page
(RFC 3236 fragment), and, in a transcript, its time range in the recording (Media
Fragments). Comments are ``replying`` annotations whose target is the extraction's
annotation.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from generator.anchoring.timing import time_range
from generator.corpus.authors import MACHINE_AUTHORS
from generator.kinds import WikiKind
from generator.site.model import SiteModel, annotations_path, note_path, text_path

CONTEXT = "http://www.w3.org/ns/anno.jsonld"
HTML_FRAGMENT = "http://tools.ietf.org/rfc/rfc3236"
MEDIA_FRAGMENT = "http://www.w3.org/TR/media-frags/"
CONTEXT_CHARS = 32
"""Characters of prefix and suffix kept in each TextQuoteSelector."""


def _datetime(value: dt.date | None) -> str | None:
    return f"{value.isoformat()}T00:00:00Z" if value else None


def _seconds(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def _assessing(site: SiteModel, slug: str, collection_id: str, page_iri: str,
               rights: str | None) -> list[dict[str, Any]]:
    """One ``assessing`` annotation per (claim, source) pair of an article: its state and
    what established it. Deliberately not a schema.org ClaimReview (not a fact-check)."""
    items = []
    for number, assessment in enumerate(site.assessments.get(slug, []), start=1):
        link, state = assessment.link, assessment.state
        if not link.note or link.note not in site.publication.notes:
            continue
        # an extraction or comment is an annotation of its note; an answer's quote, the note's words
        # themselves: its element on the page, refined by the quote
        source_iri: str | dict[str, Any] = f"{site.base_url}{annotations_path(link.note)}#{link.fragment}"
        if link.marker.kind is WikiKind.QUOTE:
            source_iri = {"type": "SpecificResource", "source": site.base_url + note_path(link.note),
                          "selector": {"type": "FragmentSelector", "conformsTo": HTML_FRAGMENT, "value": link.element,
                                       "refinedBy": {"type": "TextQuoteSelector", "exact": link.text}}} \
                if link.element else site.base_url + note_path(link.note)
        value = f"{state.state}: {state.reason} ({state.verifier.method})"
        item = {
            "id": f"{collection_id}#pair-{number}",
            "type": "Annotation",
            "motivation": "assessing",
            "body": {"type": "TextualBody", "value": value, "format": "text/plain", "purpose": "assessing"},
            "target": [
                {"type": "SpecificResource", "source": page_iri,
                 "selector": {"type": "FragmentSelector", "conformsTo": HTML_FRAGMENT, "value": assessment.claim.id}},
                source_iri,
            ],
        }
        if rights:
            item["rights"] = rights
        items.append(item)
    return items


def note_annotations(site: SiteModel, slug: str) -> dict[str, Any]:
    publication = site.publication
    note = publication.notes[slug]
    anchored = site.anchored[slug]
    document = anchored.document
    projection = document.projection  # made once here: the document keeps its elements' texts only
    base = site.base_url
    collection_id = base + annotations_path(slug)
    text_iri, page_iri = base + text_path(slug), base + note_path(slug)
    media_iri = base + note.media if note.media else None
    language = publication.settings.language
    rights = publication.settings.licence.url

    items: list[dict[str, Any]] = []
    for extraction in note.extractions:
        anchor = anchored.anchors[extraction.id]
        if not anchor.status.is_live:
            continue
        annotation_id = f"{collection_id}#ext-{extraction.id}"
        targets: list[dict[str, Any]] = []
        for portion in anchor.portions:
            start = document.starts[portion.element] + portion.start
            end = document.starts[portion.element] + portion.end
            targets.append({
                "type": "SpecificResource",
                "source": text_iri,
                "selector": [
                    {"type": "TextQuoteSelector", "exact": projection[start:end],
                     "prefix": projection[max(0, start - CONTEXT_CHARS):start],
                     "suffix": projection[end:end + CONTEXT_CHARS]},
                    {"type": "TextPositionSelector", "start": start, "end": end},
                ],
            })
        targets.append({
            "type": "SpecificResource",
            "source": page_iri,
            "selector": {"type": "FragmentSelector", "conformsTo": HTML_FRAGMENT, "value": f"ext-{extraction.id}"},
        })
        timing = time_range(document.elements, anchor, note.duration) if media_iri else None
        if timing is not None and media_iri is not None:
            value = f"t=npt:{_seconds(timing.start)}" + (f",{_seconds(timing.end)}" if timing.end is not None else "")
            targets.append({
                "type": "SpecificResource",
                "source": media_iri,
                "selector": {"type": "FragmentSelector", "conformsTo": MEDIA_FRAGMENT, "value": value},
            })
        annotation: dict[str, Any] = {
            "id": annotation_id,
            "type": "Annotation",
            "motivation": "highlighting",
            "creator": _creator(publication.name(slug, extraction.author), extraction.author),
            "target": targets,
        }
        if extraction.date:
            annotation["created"] = _datetime(extraction.date)
        if rights:
            annotation["rights"] = rights
        items.append(annotation)
        for comment in sorted(extraction.comments, key=lambda c: (c.date, c.id)):
            body_text = comment.text if comment.withdrawn is None else \
                f"[withdrawn {comment.withdrawn.date.isoformat()}: {comment.withdrawn.reason}] sha256:{comment.text_sha256}"
            reply: dict[str, Any] = {
                "id": f"{collection_id}#com-{comment.id}",
                "type": "Annotation",
                "motivation": "replying",
                "created": _datetime(comment.date),
                "creator": _creator(publication.name(slug, comment.author), comment.author),
                "body": {"type": "TextualBody", "value": body_text, "format": "text/plain", "language": language,
                         "purpose": "replying"},
                "target": annotation_id,
            }
            if rights:
                reply["rights"] = rights
            items.append(reply)

    # partOf describes the collection (id, label, total) rather than naming it: the
    # model allows both, and readers of a page alone then know what it belongs to
    items += _assessing(site, slug, collection_id, page_iri, rights)
    page = {
        "id": f"{collection_id}#page-1",
        "type": "AnnotationPage",
        "partOf": {"id": collection_id, "label": note.title, "total": len(items)},
        "startIndex": 0,
        "items": items,
    }
    collection: dict[str, Any] = {
        "@context": CONTEXT,
        "id": collection_id,
        "type": "AnnotationCollection",
        "label": note.title,
        "total": len(items),
    }
    if items:
        collection["first"] = page
        collection["last"] = page["id"]
    if rights:
        collection["rights"] = rights
    return collection


def _creator(shown: str, author: str) -> dict[str, str]:
    """The W3C agent: extractions added by 'carnet analyse' were marked by software."""
    return {"type": "Software" if author in MACHINE_AUTHORS else "Person", "name": shown}
