"""An :class:`~generator.answering.answer.Answer` for the terminal (text) and for tools
(JSON). Both render the same facts, decided in the core; every string from the model
or the corpus is shown through :func:`generator.terminal.visible`."""

from __future__ import annotations

import json
from typing import Any

from generator.answering.answer import Answer, Citation, landing
from generator.site.model import note_path
from generator.terminal import visible
from generator.verification.states import PairState


def _state(state: PairState) -> str:
    return f"{state.state.value} ({state.reason.value})"


def _states_of(answer: Answer, number: int) -> list[str]:
    """The distinct states of the pairs citing source ``number``, in order."""
    seen: list[str] = []
    for statement in answer.statements:
        for cited, state in zip(statement.citations, statement.states, strict=True):
            if cited == number and _state(state) not in seen:
                seen.append(_state(state))
    return seen


def url(answer_base: str, citation: Citation) -> str:
    return landing(answer_base, note_path(citation.note), citation)


def passage_url(base_url: str, passage: str) -> str:
    """Where a passage (``<note>#<element id>``) is on the site."""
    note, _, element = passage.partition("#")
    return f"{base_url}{note_path(note)}#{element}"


def no_answer(answer: Answer) -> str | None:
    """What "not in the corpus" means for this answer, in words that claim no more than
    was done: nothing retrieved, or the model's reading of the passages it was given
    (never that the notebooks hold nothing); ``None`` for an answer."""
    if not answer.not_in_corpus:
        return None
    searched = ", ".join(answer.searched) or "none"
    count = len(answer.retrieved)
    if not count:
        return (f"No passage found: the search matched no published passage of the notebooks searched ({searched}). "
                "Passages that say it in other words may exist.")
    passages = "passage" if count == 1 else "passages"
    return (f"No answer found in the {count} {passages} searched: the model read {'it' if count == 1 else 'them'} "
            f"and found no answer to the question there. That is the model's reading of these {passages}, not a "
            f"proof that the notebooks searched ({searched}) hold no answer.")


def as_text(answer: Answer, base_url: str) -> str:
    lines = [f"Question: {visible(answer.question)}", ""]
    searched = ", ".join(answer.searched) or "none"
    said = no_answer(answer)
    if said is not None:
        lines.append(said)
        if answer.dropped:
            lines.append(f"(the model wrote {answer.dropped} statement(s) without a passage to rest on: not shown)")
    for statement in answer.statements:
        marks = "".join(f"[{n}]" for n in statement.citations) if statement.sourced else "(unsourced: no citation anchored)"
        lines.append(f"{visible(statement.text)} {marks}")
    if answer.citations:
        lines += ["", "Sources"]
        for citation in answer.citations:
            lines.append(f"[{citation.number}] {visible(citation.title)} — «{visible(citation.text)}»")
            lines.append(f"    {url(base_url, citation)}")
            lines.append(f"    {'; '.join(_states_of(answer, citation.number))}")
    if answer.not_in_corpus and answer.retrieved:
        lines += ["", "Passages searched"]
        lines += [f"  {visible(p)}  {passage_url(base_url, p)}" for p in answer.retrieved]
    if answer.refused:
        lines += ["", "Quotes refused (not shown as citations)"]
        for refused in answer.refused:
            lines.append(f"  statement {refused.statement}, passage {visible(refused.passage[:100])}: "
                         f"{refused.refusal.value} — {visible(refused.detail)}: «{visible(refused.quote[:120])}»")
    lines += ["", f"Mode: {answer.mode.value}; notebooks searched: {searched}; passages retrieved: "
                  f"{len(answer.retrieved)}, cited: {len(answer.retrieved) - len(answer.discarded)}"]
    model = answer.provenance.get("model")
    if model:
        usage = answer.provenance.get("usage") or {}
        lines.append(f"Model: {visible(str(model))} at {visible(str(answer.provenance.get('endpoint', '')))}; "
                     f"tokens reported: {', '.join(f'{k} {v}' for k, v in usage.items()) or 'none'}")
    return "\n".join(lines) + "\n"


def as_json(answer: Answer, base_url: str) -> str:
    data: dict[str, Any] = {
        "question": answer.question,
        "mode": answer.mode.value,
        "not_in_corpus": answer.not_in_corpus,
        "no_answer": no_answer(answer),
        "searched": list(answer.searched),
        "passages_searched": [{"passage": p, "url": passage_url(base_url, p)} for p in answer.retrieved],
        "statements": [{"text": s.text, "citations": list(s.citations),
                        "states": [{"state": st.state.value, "reason": st.reason.value} for st in s.states],
                        "sourced": s.sourced} for s in answer.statements],
        "citations": [{"number": c.number, "note": c.note, "title": c.title, "quote": c.text,
                       "passages": list(c.passages), "url": url(base_url, c)} for c in answer.citations],
        "refused": [{"statement": r.statement, "passage": r.passage, "quote": r.quote, "refusal": r.refusal.value,
                     "detail": r.detail} for r in answer.refused],
        "retrieved": list(answer.retrieved),
        "discarded": list(answer.discarded),
        "dropped": answer.dropped,
        "provenance": answer.provenance,
    }
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
