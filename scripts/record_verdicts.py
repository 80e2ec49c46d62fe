"""Record verdicts judged by a person (``method: human``) for the example corpus.

The judgements below were made by reading each claim and its passage; this script
only fills in what is derivable — the claim and source hashes the cache is keyed by —
and writes ``content/verdicts/<article>.yaml``. Rerunning it rewrites those files.

    python scripts/record_verdicts.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from generator.pipeline import check_content
from generator.writes import ALL, PlannedWrite, read_back, write_content

JUDGED_ON = "2025-12-01"
AUTHOR = "Équipe du carnet (exemple)"
# (article, claim text starts with, source id) → (verdict, rationale)
JUDGEMENTS = {
    ("cvl-wiki-budget", "Le budget 2024-2025", "cvl-1114-budget-total"): (
        "supported", "Le passage donne le même montant pour la même année."),
    ("cvl-wiki-budget", "Les dépenses importantes", "cvl-1114-seuil-statuts"): (
        "supported", "Le passage dit que toute dépense de plus de 500 € est votée en séance."),
    ("cvl-wiki-budget", "Elle a accordé 1 440 €", "cvl-0313-subvention-accordee"): (
        "partial", "Le passage donne les 1 440 € mais pas le taux de 80 %."),
    ("cvl-wiki-budget", "Elle a accordé 1 440 €", "cvl-0313-taux"): (
        "supported", "Le passage donne le montant et le taux de 80 %."),
    ("cvl-wiki-foyer", "L'ouverture du mercredi", "cvl-1010-essai"): (
        "partial", "Le passage parle de l'essai, pas de sa prolongation."),
    ("cvl-wiki-foyer", "L'ouverture du mercredi", "cvl-0515-prolongation"): (
        "supported", "Le passage dit que l'ouverture à l'essai a été prolongée jusqu'à la fin de l'année."),
    ("cvl-wiki-foyer", "Il ouvre aussi le soir", "cvl-0612-horaires"): (
        "unsupported", "Le passage fixe l'ouverture de 12 h à 13 h 45 ; il ne parle pas du soir."),
    ("cvl-synthese-budget-2024-2025", "Le budget du conseil", "cvl-1114-budget-total"): (
        "supported", "Le passage donne le même montant pour la même année."),
    ("cvl-synthese-budget-2024-2025", "Le mobilier du foyer", "cvl-0612-ligne-foyer"): (
        "supported", "La ligne du bilan prévoit 1 800 € et en dépense 710 €."),
}


def main() -> int:
    content = Path("content")
    analysis = check_content(content)
    by_article: dict[str, list[dict]] = {}
    for (article, start, source), (verdict, rationale) in JUDGEMENTS.items():
        matches = [a for a in analysis.assessments[article]
                   if a.claim.text.startswith(start) and a.link.marker.key == source]
        if len(matches) != 1:
            print(f"{article}: no single pair for «{start}» / {source}", file=sys.stderr)
            return 1
        pair = matches[0]
        by_article.setdefault(article, []).append({
            "claim": pair.claim.text, "claim_sha256": pair.claim_sha256,
            "source": f"ext:{source}", "source_sha256": pair.source_sha256,
            "verdict": verdict, "rationale": rationale,
            "provenance": {"method": "human", "author": AUTHOR, "date": JUDGED_ON,
                           "threshold": "supported"},
        })
    for article, records in sorted(by_article.items()):
        rel = f"verdicts/{article}.yaml"
        existing, _problems = read_back(rel, (content / rel).read_bytes()) if (content / rel).is_file() else (None, [])
        others = [r for r in (existing or {}).get("verdicts") or []
                  if not isinstance(r, dict) or (r.get("provenance") or {}).get("author") != AUTHOR]
        if others:  # a verdict this script did not write (a model's, a person's) is never dropped
            print(f"{rel} holds {len(others)} verdict(s) this script did not write: left as it is", file=sys.stderr)
            return 1
        header = ("# Verdicts written by a person for the example corpus (scripts/record_verdicts.py):\n"
                  "# no model judged them. Keyed by the hashes of the claim and of the cited passage.\n")
        data = header + yaml.safe_dump({"verdicts": records}, allow_unicode=True, sort_keys=False, width=100)
        write_content(content, "scripts/record_verdicts.py", PlannedWrite(rel, data.encode("utf-8"),
                                                                           {"verdicts": records}, ALL))
    return 0


if __name__ == "__main__":
    sys.exit(main())
