"""The converter of real meeting minutes (bench/meetings.py), on a few minutes written here:
what it writes loads with no error, and every extraction it chose is placed exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.meetings import AUTHOR, InputError, Topic, WikiPlan, convert, main
from generator.anchoring import AnchorStatus
from generator.corpus.model import NoteType
from generator.pipeline import check_content
from generator.problems import Severity

TEMPLATE = "Extracted from tsc-agenda labeled issues and pull requests from the nodejs org prior to the meeting."
REPEATED = "The same sentence is written twice in this meeting, so it can never be placed once."

MINUTES = {
    "2023-03-08.md": f"""# Node.js Technical Steering Committee (TSC) Meeting 2023-03-08

## Links

* **Recording**: <https://www.youtube.com/watch?v=example>
* **GitHub Issue**: <https://github.com/nodejs/TSC/issues/1>

## Present

* Ada Example @ada (voting member)
* Grace Sample @grace (scribe)

## Agenda

### Announcements

*{TEMPLATE}

### nodejs/node

* Security release planned for next week, with fixes for two vulnerabilities in OpenSSL.
  * Ada will follow up with the security team about the CVE assignment process.
  * No objections, the TSC agreed to ship the security release on Tuesday.
* Should we move the threat model document into the main repository? Grace is not sure.
* {REPEATED}
* {REPEATED}

Long paragraph about the permission model. The permission model is still experimental in this release line. The team proposed to document its limits before it becomes stable. Another sentence that is long enough to be quoted on its own by the script, about the security policy.
""",
    "2024-05-15.md": f"""# Node.js Technical Steering Committee (TSC) Meeting 2024-05-15

## Present

* Ada Example @ada

## Agenda

*{TEMPLATE}

* The collaborator summit will be held in Dublin, with travel funding for those who need it.
* Moderation team reported three code of conduct reports handled this month.
* Onboarding of two new collaborators is planned; Ada volunteered to mentor them.
* Survey results about the mentorship program will be shared on the community repository.
* A question was asked about the budget of the summit and the travel fund's remaining money.
* We suggest that the outreach working group reports to the TSC every quarter from now on.
""",
    "2025-01-08.md": f"""# Node.js Technical Steering Committee (TSC) Meeting 2025-01-08

## Agenda

*{TEMPLATE}

* The LTS release of v22.x is planned for October, with backports of the security fixes.
* Release team asked whether the v18.x line should get one more release before its end of life.
* The TSC agreed by consensus to keep the release schedule as it is for this year.
* A security audit of the OpenSSL update will be funded by the foundation's security fund.
* Backport policy: semver-minor changes land in the LTS release line after two weeks.
""",
    "io.js/2014-12-10.md": """* The build team will set up CI machines for the new release process of the fork.
* Discussed the potential difference with the joyent repository and its release branches.
* Rod will land the licence change after the meeting, as agreed by the committee.
* The committee decided to publish minutes of every meeting in this repository.
""",
}

PLANS = (
    WikiPlan("wiki-security", "Security", (Topic.SECURITY,), 1, None),
    WikiPlan("wiki-community", "Community", (Topic.COMMUNITY, Topic.FUNDING), 1, 100),
)


def _minutes(folder: Path) -> Path:
    for name, text in MINUTES.items():
        path = folder / "meetings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "meetings" / "gen-meeting.sh").write_text("echo not minutes\n", encoding="utf-8")
    return folder / "meetings"


def test_the_converted_minutes_load_without_error_and_every_extraction_is_placed_once(tmp_path: Path) -> None:
    out = tmp_path / "content"
    converted = convert(_minutes(tmp_path), out, PLANS)
    checked = check_content(out)
    assert [p for p in checked.problems if p.severity in (Severity.ERROR, Severity.WARNING)] == []  # no broken citation
    corpus = checked.corpus
    meetings = {slug: note for slug, note in corpus.notes.items() if note.type is NoteType.NOTE}
    assert sorted(meetings) == ["io-js-2014-12-10", "tsc-2023-03-08", "tsc-2024-05-15", "tsc-2025-01-08"]
    assert meetings["tsc-2023-03-08"].authors == ("Grace Sample",)
    extractions = [e for note in meetings.values() for e in note.extractions]
    assert len(extractions) == converted.extractions >= 12
    landed = [status for slug in meetings for status, _ in checked.facts[slug].landed.values()]
    assert len(landed) == len(extractions) and set(landed) == {AnchorStatus.ANCHORED}
    assert not any(p.code == "detached-anchor" for p in checked.problems)
    quotes = {e.quote for e in extractions}
    assert all(40 <= len(q) <= 300 for q in quotes)
    assert REPEATED not in quotes  # twice in its note: never placed once
    assert not any(TEMPLATE[:40] in q for q in quotes)  # the template's sentence, in three meetings
    assert {e.author for e in extractions} == {AUTHOR}
    stances = {c.stance for e in extractions for c in e.comments}
    assert "disagree" in stances
    # the wikis' perimeters and the synthesis's recorded one
    assert set(converted.perimeters) == {"wiki-security", "wiki-community"}
    for plan in PLANS:
        audit = checked.articles[plan.slug]
        assert audit.perimeter_extractions is not None
        assert len(audit.perimeter_extractions) == converted.perimeters[plan.slug][1] > 0
        assert audit.links
    synthesis = corpus.notes["synthesis-security-recent"]
    assert synthesis.type is NoteType.SYNTHESIS and synthesis.article.recorded is not None


def test_the_same_minutes_give_the_same_bytes(tmp_path: Path) -> None:
    minutes = _minutes(tmp_path)
    convert(minutes, tmp_path / "one", PLANS)
    convert(minutes, tmp_path / "two", PLANS)
    one = {p.relative_to(tmp_path / "one"): p.read_bytes() for p in (tmp_path / "one").rglob("*") if p.is_file()}
    two = {p.relative_to(tmp_path / "two"): p.read_bytes() for p in (tmp_path / "two").rglob("*") if p.is_file()}
    assert one == two and len(one) > 8


def test_a_perimeter_that_cannot_fit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="wiki 'wiki-huge'"):
        convert(_minutes(tmp_path), tmp_path / "out", (WikiPlan("wiki-huge", "Huge", tuple(Topic), 5000, None),))


def test_the_command_refuses_a_missing_folder_and_a_full_output(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 2
    assert "not a folder" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("", encoding="utf-8")
    assert main([str(tmp_path), "--out", str(tmp_path / "full")]) == 2
    assert "not empty" in capsys.readouterr().err
