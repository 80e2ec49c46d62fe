"""Print what a content directory holds, computed from the loaded and anchored corpus
(never typed by hand): notes, extractions, comments by stance, overlaps, transcripts.

    python scripts/corpus_stats.py [content]
"""

from __future__ import annotations

import sys
from collections import Counter
from itertools import combinations
from pathlib import Path

from generator.anchoring import AnchorStatus
from generator.pipeline import check_content


def main(argv: list[str]) -> int:
    content = Path(argv[0] if argv else "content")
    analysis = check_content(content)
    corpus = analysis.corpus
    print(f"{content}: {len(corpus.notes)} notes, {len(corpus.notebooks)} notebooks, {len(corpus.bases)} bases, "
          f"{len(corpus.assets)} assets, {len(analysis.problems)} problems")
    for base in corpus.bases.values():
        print(f"  base {base.slug}: notebooks {', '.join(base.notebooks)}")
    shared = [n.slug for n in corpus.notes.values() if len(n.memberships) > 1]
    print(f"  notes in several notebooks: {', '.join(shared) or 'none'}")
    for slug, notebook in corpus.notebooks.items():
        notes = corpus.notes_of(slug)
        types = Counter(n.type.value for n in notes)
        years = sorted({c for n in notes for c in n.membership(slug).categories.get("annee", ())})
        extractions = [e for n in notes for e in n.extractions]
        comments = [c for e in extractions for c in e.comments]
        stances = Counter(c.stance for c in comments)
        multi = overlaps = detached = 0
        for note in notes:
            anchors = analysis.anchored[note.slug].anchors
            live = [(e.id, anchors[e.id]) for e in note.extractions if not e.masked]
            detached += sum(a.status is AnchorStatus.DETACHED for _i, a in live)
            multi += sum(len(a.portions) > 1 for _i, a in live)
            spans = [{(p.element, o) for p in a.portions for o in range(p.start, p.end)} for _i, a in live]
            overlaps += sum(bool(x & y) for x, y in combinations(spans, 2))
        turns = sum(e.kind == "turn" for n in notes for e in analysis.anchored[n.slug].document.elements)
        print(f"notebook {slug} ({notebook.visibility.value}, names: {notebook.author_rule.value}): "
              f"{dict(sorted(types.items()))} notes; school years {years or '-'}; "
              f"{len(extractions)} extractions ({sum(e.masked for e in extractions)} masked, {multi} over several "
              f"elements, {overlaps} overlapping pairs, {detached} detached); {len(comments)} comments "
              f"{dict(sorted(stances.items()))} ({sum(c.withdrawn is not None for c in comments)} withdrawn); "
              f"{sum(n.media is not None for n in notes)} transcript(s) with {turns} speaker turns")
    total = sum(len(n.extractions) for n in corpus.notes.values())
    print(f"total: {total} extractions, {sum(len(e.comments) for n in corpus.notes.values() for e in n.extractions)} comments")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
