"""Record the example corpus's two saved answers, written by a person (``method: human``).

No model ran: Carnet's own search (what ``carnet ask --no-tools`` sends a model) retrieved
the passages for each question, and a person read them and wrote the answer below, citing
by quoting, as a model is asked to. The answer then goes through the very code a model's
answer does — quotes anchored exactly or refused, the file written through ``--save``'s
writer and read back — and the person's verdicts on its pairs go to
``content/verdicts/<slug>.yaml``. The second question is not answered by the corpus: the
passages retrieved do not say, and the answer says so. Rerunning it rewrites the files.

    python scripts/record_answers.py
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
from pathlib import Path

from generator.answering import Mode, Scope
from generator.answering.answer import assemble
from generator.commands.ask import MAX_RESULTS, library, save
from generator.corpus.verdicts import text_hash

ASKED_ON = dt.date(2025, 12, 1)
AUTHOR = "Équipe du carnet (exemple)"
NOTEBOOK = "cvl"
# slug → (question, statements: (text, [(passage, quote)]), not in the corpus, verdicts: statement → (verdict, why))
ANSWERS = {
    "subvention-du-foyer": (
        "Combien la Région a-t-elle accordé pour le mobilier du foyer, et à quelles conditions est-elle versée ?",
        [("La Région a accordé au CVL une subvention de 1 440 € pour le mobilier du foyer, soit 80 % du montant "
          "présenté.",
          [("cvl-2025-03-13#e-a36ad7672e", "La commission permanente de la Région a accordé au CVL une subvention de "
            "1 440 € pour le mobilier du foyer, soit 80 % du montant présenté")]),
         ("Elle est versée sur présentation des factures acquittées.",
          [("cvl-2025-03-13#e-a36ad7672e", "Le versement interviendra sur présentation des factures acquittées.")]),
         ("Les factures ont été transmises à la Région une fois le mobilier livré, le 5 mai.",
          [("cvl-2025-05-15#e-2a07c02fe1", "a été livré le 5 mai"),
           ("cvl-2025-05-15#e-2a07c02fe1", "Les factures ont été transmises à la Région pour le versement de la "
            "subvention.")])],
        False,
        {0: ("supported", "Le passage donne le montant, l'objet et le taux de 80 %."),
         1: ("supported", "Le passage pose la même condition de versement.")}),
    "voyage-a-l-etranger": (
        "Le CVL a-t-il organisé un voyage scolaire à l'étranger ?",
        [], True, {}),
}


def main() -> int:
    content = Path("content")
    for slug in ANSWERS:  # rerunning rewrites: the old files go first, then --save's writer writes anew
        for old in (content / "notes" / "answers" / f"{slug}.md", content / "verdicts" / f"{slug}.yaml"):
            old.unlink(missing_ok=True)
    scope = Scope(notebook=NOTEBOOK)
    found = library(content, scope)
    for slug, (question, statements, not_in_corpus, judged) in ANSWERS.items():
        given = {p.id: p for p, _score in found.index.search(question, MAX_RESULTS)}
        data = {"not_in_corpus": not_in_corpus, "statements": [
            {"text": text, "citations": [{"passage": p, "quote": q} for p, q in cited]} for text, cited in statements]}
        provenance = {"method": "human", "author": AUTHOR, "date": ASKED_ON.isoformat(), "mode": Mode.RETRIEVAL.value,
                      "queries": [question]}
        answer = assemble(question, data, given, found.analysis.anchored, Mode.RETRIEVAL, found.searched, provenance)
        if answer.refused:
            print(f"{slug}: quotes refused: {answer.refused}", file=sys.stderr)
            return 1
        by_number = {c.number: c for c in answer.citations}
        records = []
        for index, (verdict, rationale) in sorted(judged.items()):
            statement = answer.statements[index]
            for number in statement.citations:
                records.append({"claim": statement.text, "claim_sha256": text_hash(statement.text),
                                "source": f"quote:q{number}", "source_sha256": text_hash(by_number[number].text),
                                "verdict": verdict, "rationale": rationale,
                                "provenance": {"method": "human", "author": AUTHOR, "date": ASKED_ON.isoformat(),
                                               "threshold": "supported"}})
        answer = dataclasses.replace(answer, verdicts=tuple(records))
        for rel in save(content, found, answer, slug, scope, ASKED_ON):
            print(f"wrote content/{rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
