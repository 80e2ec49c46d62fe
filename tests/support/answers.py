"""Model answers built from the request itself, for the scripted server's responder:
a valid answer to whichever prompt was sent (verify, analyse, oppositions, propose).

    llm_server.respond(Answers().respond)                    # every request answered
    llm_server.respond(Answers(oppositions="empty").respond)

What the answer holds comes from the prompt only: the pair keys "Paire p1…" of a
verify request, a line of the note text of an analyse request, two ids of an
oppositions request, a section and an uncited extraction of a propose request. So a
test never needs to know in advance what a command will send.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from support.llm_server import Scripted, reply


def prompt_of(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return str(messages[-1].get("content", "")) if messages else ""


def verify_answer(prompt: str, verdict: str = "supported", garnish: str = "") -> dict[str, Any]:
    keys = re.findall(r"^(?:Paire|Pair) (p\d+)\s*$", prompt, re.M)  # a French or an English prompt
    return {"verdicts": [{"pair": key, "verdict": verdict, "rationale": "Le passage le dit." + garnish}
                         for key in keys]}


def note_lines(prompt: str) -> list[str]:
    """The lines of note text an analyse request sent to be read (context blocks left out)."""
    french = "Texte de la note" in prompt
    start = prompt.find("Texte de la note" if french else "Text of the note")
    end = prompt.rfind("Pour chaque passage" if french else "For each passage")
    if start < 0 or end < 0:
        return []
    body = prompt[prompt.find("\n", start) + 1:end]
    body = re.sub(r"<<< (contexte, déjà analysé|context, already analysed) >>>.*?<<< (fin du contexte|end of context) >>>",
                  "", body, flags=re.S)
    return [line.strip() for line in body.split("\n")
            if line.strip() and not line.startswith(("===", "<<<"))]


def analyse_answer(prompt: str, chance: random.Random | None = None, garnish: str = "") -> dict[str, Any]:
    kinds_line = re.search(r"^(?:Types de passage :|Passage kinds:) (.+?)\.\s*$", prompt, re.M)
    kinds = [k.strip() for k in kinds_line.group(1).split(",")] if kinds_line else ["fait"]
    lines = [line for line in note_lines(prompt) if len(line.split()) >= 4]
    if not lines:
        return {"passages": []}
    # the longest line is the one least likely to occur twice in the note
    chosen = max(lines, key=len) if chance is None else chance.choice(lines)
    words = chosen.split()
    quote = " ".join(words[: max(4, min(len(words), 12))])
    categories = [{"axis": "theme", "category": "Budget" + garnish}] if garnish else []
    return {"passages": [{"quote": quote, "kind": kinds[0], "categories": categories}]}


def opposition_ids(prompt: str) -> list[str]:
    return re.findall(r"^\[([^\]\s]+)\] [«“]", prompt, re.M)


def oppositions_answer(prompt: str, empty: bool = False, garnish: str = "") -> dict[str, Any]:
    ids = opposition_ids(prompt)
    if empty or len(ids) < 2:
        return {"oppositions": []}
    return {"oppositions": [{"a": ids[0], "b": ids[-1], "question": "Faut-il dépenser plus ?" + garnish}]}


def propose_answer(prompt: str, append: bool = True, garnish: str = "") -> dict[str, Any]:
    headings = re.findall(r"^--- (.+) ---$", prompt, re.M)
    evidence = re.findall(r"^- \[\[ext:([^\]]+)\]\] \(", prompt, re.M)
    if not append or not evidence or not headings:
        return {"operations": [{"op": "NoChange", "heading": "", "after_heading": "", "content": ""}]}
    heading = "" if headings[-1] in ("(chapeau)", "(lead)") else headings[-1]
    return {"operations": [{"op": "AppendToSection", "heading": heading, "after_heading": "",
                            "content": f"Une pièce de plus{garnish} est versée au dossier [[ext:{evidence[0]}]]."}]}


@dataclass
class Answers:
    """A responder answering every kind of request validly. ``oppositions``: ``pair`` or
    ``empty``; ``propose``: ``append`` or ``nochange``; ``model``: the model name the
    answers carry (None: the one asked for); ``garnish``: text added to every free-text
    field of the answers (a rationale, a question, a section's content, a category), to
    see what hostile text does."""

    oppositions: str = "pair"
    propose: str = "append"
    model: str | None = None
    seed: int | None = None
    garnish: str = ""
    seen: list[str] = field(default_factory=list)

    def answer(self, prompt: str) -> dict[str, Any]:
        chance = random.Random(self.seed) if self.seed is not None else None
        if ("Paire p" in prompt or "Pair p" in prompt) and '"verdicts"' in prompt:
            self.seen.append("verify")
            return verify_answer(prompt, garnish=self.garnish)
        if '"passages"' in prompt:
            self.seen.append("analyse")
            return analyse_answer(prompt, chance, self.garnish)
        if '"oppositions"' in prompt:
            self.seen.append("oppositions")
            return oppositions_answer(prompt, self.oppositions == "empty", self.garnish)
        if '"operations"' in prompt:
            self.seen.append("propose")
            return propose_answer(prompt, self.propose == "append", self.garnish)
        raise ValueError(f"a prompt this responder does not know: {prompt[:80]!r}")

    def respond(self, body: dict[str, Any]) -> Scripted | None:
        if "input" in body and "messages" not in body:  # embeddings: the server makes the vectors
            return Scripted(model=self.model)
        step = reply(json.dumps(self.answer(prompt_of(body)), ensure_ascii=False))
        step.model = self.model
        return step
