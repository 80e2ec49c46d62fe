"""The ``carnet`` command line: parses arguments, calls one function per command,
prints problems. No logic of its own.

Exit codes, the same for every command (those that call a model included: verify,
analyse, propose, select --oppositions, and review / apply of their proposals):

- 0 (``EXIT_OK``): done. For ``apply``, done means every decision recorded, accepted or
  not: a rejected operation or passage is the applier's verdict, printed with its reason
  and counted in the closing line ("0 operation(s) applied (…, 2 rejected): the article
  was not changed"), not a failure. A command that does nothing says so.
- 1 (``EXIT_CONTENT``): the content has errors (or warnings under ``--strict``).
- 2 (``EXIT_USAGE``): usage, settings (``llm:`` in carnet.yaml included), the disk, or
  a refused write (a stale proposal, a file changed since).
- 3 (``EXIT_MODEL``): the endpoint or its answers failed, so all or part of the
  requested work was not done: a batch that failed or was refused, an item of an
  answer refused, a note whose analysis failed, the endpoint unreachable. What was
  done before is kept; the message says what to run again.

Everything a model, a proposal file or a note wrote is printed through
:func:`generator.terminal.visible`: control and bidi characters are shown, never
obeyed by the terminal.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from generator import __version__
from generator.problems import (
    EXIT_CONTENT,
    EXIT_MODEL,
    EXIT_OK,
    EXIT_USAGE,
    CarnetError,
    ContentError,
    Problem,
    Severity,
    print_problems,
)
from generator.terminal import visible

if TYPE_CHECKING:  # the pipeline is imported only by the commands that run it (a fast --version, help)
    from generator.corpus.model import SiteSettings
    from generator.llm.plan import Plan
    from generator.pipeline import CheckedContent


def _jobs(value: str) -> int:
    """``--jobs N``: a whole number of requests in flight at once, at least 1."""
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of requests at once, at least 1 (not {value!r})")
    return jobs


def _tokens(value: str) -> int:
    """``--max-tokens N``: a whole number of tokens above 0."""
    try:
        tokens = int(value.replace("_", "").replace(",", ""))
    except ValueError:
        tokens = 0
    if tokens < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of tokens above 0 (not {value!r})")
    return tokens


def _model_options(command: argparse.ArgumentParser, what: str = "") -> None:
    """--dry-run and --max-tokens, the same on every command that calls a model."""
    command.add_argument("--dry-run", action="store_true",
                         help=f"{what}print the plan (requests, characters, estimated prompt and completion "
                              "tokens, within llm.context_tokens) and send nothing")
    command.add_argument("--max-tokens", type=_tokens, metavar="N",
                         help=f"{what}the run's token budget (default: llm.max_tokens_per_run, or 200,000): a plan "
                              "over it sends nothing and exits 2; the run stops before it would spend past it")


JOBS_HELP = ("requests in flight at once (default: 1); the files written are the same whatever N, so use what "
             "the endpoint can serve (a vLLM or hosted endpoint: 4 or more)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="carnet",
        description="Compile notebooks of notes, extractions and debates into an auditable static wiki.",
        epilog="Run 'carnet COMMAND --help' for the options of a command. Content format: docs/content-format.md.",
    )
    parser.add_argument("--version", action="version", version=f"carnet {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    build = commands.add_parser(
        "build", help="build the site (offline, deterministic)",
        description="Check the content, then write the whole site into a new directory swapped in at the end. "
                    "Stops on any content error (and on warnings with --strict); the previous site stays "
                    "intact. Refuses an output directory it did not create.")
    build.add_argument("content", nargs="?", default="content", type=Path,
                       help="content directory (default: content)")
    build.add_argument("--out", default=Path("build"), type=Path, help="output directory (default: build)")
    build.add_argument("--strict", action="store_true", help="treat warnings as errors (for CI)")
    build.add_argument("--base-url", help="absolute URL the site is published at (overrides carnet.yaml)")
    build.add_argument("--theme", type=Path, help="theme directory (default: the bundled theme)")
    build.add_argument("--quiet", action="store_true", help="print only problems")
    build.add_argument("--no-search", action="store_true", help="skip the Pagefind search index (quick previews)")
    build.add_argument("--no-cache", action="store_true",
                       help="a full build, without reading or writing the build cache")
    build.add_argument("--jobs", type=_jobs, metavar="N",
                       help="worker processes for the per-note work: parse, anchor, render (default: the cores "
                            "available); the site is the same bytes whatever N")
    build.add_argument("--cache", type=Path, metavar="FILE",
                       help="the build cache (default: .carnet-cache/<out name>.pickle beside the output directory; "
                            "always safe to delete)")

    check = commands.add_parser(
        "check", help="check the content without building",
        description="Load and validate every content file and report all problems with file:line. "
                    "Exits 1 when there are errors (or warnings with --strict).")
    check.add_argument("content", nargs="?", default="content", type=Path,
                       help="content directory (default: content)")
    check.add_argument("--format", choices=("text", "github"), default="text",
                       help="text (default) or github (workflow annotations ::error file=…,line=…::)")
    check.add_argument("--strict", action="store_true", help="exit non-zero on warnings too")
    check.add_argument("--site", type=Path, metavar="DIR",
                       help="check a built site instead: every internal link and #fragment resolves (INV-17)")
    check.add_argument("--fix-anchors", action="store_true",
                       help="show the quote each relocated extraction would get from the note's current text")
    check.add_argument("--write", action="store_true",
                       help="with --fix-anchors: write those quotes into the extractions files (comments and "
                            "layout kept; detached extractions are never changed)")
    adopt = commands.add_parser(
        "adopt", help="adopt a directed synthesis (freeze its perimeter, record the adoption)",
        description="Freeze the synthesis's perimeter in its file (unless recorded at production), record who "
                    "adopted it and when with a hash of its body and adoption block, and append 'adopted' to its "
                    "history. Adopted acts are immutable afterwards.")
    adopt.add_argument("file", type=Path, help="the synthesis (.md) inside a content directory")
    adopt.add_argument("--by", required=True, help="who adopts it (a body, e.g. 'Conseil de vie lycéenne')")
    adopt.add_argument("--date", type=dt.date.fromisoformat, help="adoption date, YYYY-MM-DD (default: today)")
    adopt.add_argument("--no-perimeter", action="store_true",
                       help="adopt a historical act whose perimeter was never recorded (its page says so)")
    propose = commands.add_parser(
        "propose", help="propose section operations for a wiki (writes a proposal file)",
        description="Write proposals/sections/WIKI/<id>.yaml: section operations that bring uncited evidence of the "
                    "wiki's perimeter into it, most debated first. The default provider is offline and "
                    "deterministic (verbatim quotes, method: scripted); 'llm' asks the endpoint of carnet.yaml.")
    propose.add_argument("wiki", help="the wiki's slug")
    propose.add_argument("--content", type=Path, default=Path("content"), help="content directory (default: content)")
    propose.add_argument("--provider", choices=("extractive", "llm"), default="extractive")
    propose.add_argument("--max-operations", type=int, default=5, metavar="N",
                         help="operations each request may propose (default: 5); with 'llm', the uncited evidence "
                              "is spread over as many requests as the model's context needs, group by group")
    _model_options(propose, "with 'llm': ")
    analyse = commands.add_parser(
        "analyse", help="propose extractions for notes with the model (writes proposals/extractions/)",
        description="Cut each note into chunks on element boundaries, ask the endpoint of carnet.yaml for passages "
                    "(verbatim quote, kind, categories of the notebook's axes), anchor each quote in the note and "
                    "write proposals/extractions/NOTE/<id>.yaml with the note's own text. Ambiguous or unfound "
                    "quotes and categories outside the axes are reported, never placed. A re-analysis sends only the "
                    "elements changed since the last one. Review and apply the proposal like any other.")
    analyse.add_argument("notes", nargs="+", metavar="NOTE", help="note slugs (or paths of their .md files)")
    analyse.add_argument("--notebook", help="the notebook whose writing guide and axes to use "
                                            "(required when a note is in several)")
    analyse.add_argument("--content", type=Path, default=Path("content"), help="content directory (default: content)")
    analyse.add_argument("--budget", type=int, metavar="CHARS",
                         help="characters of note text per request (default: analysis.chunk_characters or 6000)")
    analyse.add_argument("--all", action="store_true", dest="whole",
                         help="send the whole note again, not only what changed since the last analysis")
    analyse.add_argument("--jobs", type=_jobs, default=1, metavar="N", help=JOBS_HELP)
    _model_options(analyse)
    review = commands.add_parser("review", help="show a proposal's operations or passages, and their verdicts",
                                 description="Section operations: the diff each makes, the text a ReplaceSection "
                                             "removes, and the applier's verdict. Extractions: each passage, where "
                                             "it lands now, its categories, and what the analysis left out. "
                                             "Changes nothing.")
    review.add_argument("proposal", type=Path)
    apply = commands.add_parser("apply", help="apply a proposal (section operations, or extractions of a note)",
                                description="Apply the operations or passages (all, or those given with --only), "
                                            "each accepted or rejected with its reason; write the article or the "
                                            "note's extractions file atomically and record the decisions in the "
                                            "proposal. A stale section proposal is refused; a passage the note no "
                                            "longer holds as recorded is rejected.")
    apply.add_argument("proposal", type=Path)
    apply.add_argument("--only", type=int, nargs="+", metavar="N",
                       help="apply only these operations or passages (1-based)")
    verify = commands.add_parser(
        "verify", help="judge unjudged (claim, source) pairs with the model (writes content/verdicts/)",
        description="Send the pairs that passed the verbatim check and have no verdict yet, in batches, to the "
                    "endpoint of carnet.yaml; append each batch's verdicts to content/verdicts/<article>.yaml. "
                    "A failing batch keeps the others answered (before it, or beside it with --jobs); what was not "
                    "judged is reported.")
    verify.add_argument("articles", nargs="*", help="article slugs (default: every wiki and synthesis)")
    verify.add_argument("--content", type=Path, default=Path("content"), help="content directory (default: content)")
    verify.add_argument("--batch", type=int, default=8, help="pairs per request (default: 8)")
    verify.add_argument("--jobs", type=_jobs, default=1, metavar="N", help=JOBS_HELP)
    _model_options(verify)
    verify.add_argument("--calibrate", action="store_true",
                        help="judge Carnet's labelled pairs in the site's language instead, record the judge's "
                             "balanced accuracy in content/verdicts/calibrations.yaml and say whether it qualifies "
                             "(its verdicts change states only then)")
    selection = commands.add_parser(
        "select", help="print a wiki's evidence groups, chaining warnings and oppositions",
        description="Group the wiki's perimeter by single linkage under a distance threshold (0–100), explain each "
                    "membership by its edge, warn about chaining; with --oppositions, run the oppositions pass "
                    "through the endpoint of carnet.yaml and record it under content/oppositions/.")
    selection.add_argument("wiki", help="the wiki's slug")
    selection.add_argument("--content", type=Path, default=Path("content"), help="content directory (default: content)")
    selection.add_argument("--threshold", type=float, help="distance threshold, 0–100 (default: carnet.yaml or 75)")
    selection.add_argument("--oppositions", action="store_true", help="run and record the oppositions pass (model)")
    selection.add_argument("--jobs", type=_jobs, metavar="N", help=f"with --oppositions: {JOBS_HELP}")
    _model_options(selection, "with --oppositions: ")
    selection.add_argument("--reindex", action="store_true",
                           help="embed the texts missing from the endpoint model's cache (embeddings: provider endpoint)")
    context = commands.add_parser(
        "context", help="a deterministic, cited markdown bundle for agents",
        description="Seed nodes from a lexical search, rank the graph around them (personalised PageRank), and "
                    "write three sections within a character budget: what the wikis say, the evidence passages "
                    "with their states and links, the open debates. A failing section is left empty.")
    context.add_argument("query")
    context.add_argument("--content", type=Path, default=Path("content"), help="content directory (default: content)")
    context.add_argument("--budget", type=int, default=8000, help="characters (default: 8000)")
    mcp = commands.add_parser(
        "mcp", help="serve the published corpus to agents as Model Context Protocol tools (stdio)",
        description="Read and publish the content once, as build does, then answer an MCP client on stdin/stdout: "
                    "search, passage, article and context tools, and each note's Markdown mirror as a resource. "
                    "Read-only; only what the site publishes. See docs/mcp.md.")
    mcp.add_argument("content", nargs="?", default="content", type=Path)
    ask = commands.add_parser(
        "ask", help="answer a question from the corpus, every citation anchored and checked",
        description="Search the published passages (through the model's tool calls where the endpoint of "
                    "carnet.yaml takes them, else Carnet searches and sends them in one request), ask the model "
                    "for an answer that quotes them, anchor every quote exactly in its note (a quote that does "
                    "not anchor is refused, never shown) and give each (statement, passage) pair its state. "
                    "Nothing relevant found: 'not in the corpus', with the notebooks searched. Private notes "
                    "and masked passages are never sent.")
    ask.add_argument("question")
    ask.add_argument("--content", type=Path, default=Path("content"), help="content directory (default: content)")
    ask.add_argument("--notebook", default="", help="search this public notebook only")
    ask.add_argument("--category", action="append", default=[], metavar="AXIS=VALUE",
                     help="only notes with this category (repeatable: all must hold)")
    ask.add_argument("--format", choices=("text", "json"), default="text", help="output (default: text)")
    ask.add_argument("--no-tools", action="store_true",
                     help="do not offer the model tools: Carnet searches and sends the passages in one request")
    ask.add_argument("--no-judge", action="store_true",
                     help="leave the (statement, passage) pairs unjudged (verbatim check only)")
    _model_options(ask)
    ask.add_argument("--save", metavar="SLUG", default="",
                     help="keep the answer as content/notes/answers/SLUG.md (type answer: the build publishes it "
                          "like a synthesis) and the judge's verdicts in content/verdicts/SLUG.yaml")
    serve = commands.add_parser(
        "serve", help="build, serve on 127.0.0.1 and rebuild on every change (live reload)",
        description="Build the site, serve it with the published security headers, watch content/, the theme and "
                    "the prompts, rebuild after each change and reload the open page; a content error shows an "
                    "overlay with file:line while the previous site stays served.")
    serve.add_argument("content", nargs="?", default="content", type=Path)
    serve.add_argument("--out", default=Path("build"), type=Path)
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--theme", type=Path)
    serve.add_argument("--no-search", action="store_true", help="no search index")
    serve.add_argument("--edit", action="store_true",
                       help="authoring in the browser: mark passages, comment, mask, judge and contest citations, "
                            "apply proposals, adopt, undo; the records are written into the content files "
                            "(127.0.0.1 only, through the address printed; see docs/authoring.md)")
    serve.add_argument("--as", dest="author", metavar="NAME",
                       help="with --edit: the name the records carry (asked at the first write otherwise)")
    return parser


def run_serve(args: argparse.Namespace) -> int:
    import time

    from generator.commands.serve import Server

    if args.author and not args.edit:
        raise CarnetError("--as NAME goes with --edit: it names the author of what the browser records")
    editing = None
    if args.edit:
        from generator.authoring.api import edit_layer

        editing = edit_layer(args.content, args.author, lambda line: print(line, flush=True))
    server = Server(args.content, args.out, port=args.port, theme=args.theme, search=not args.no_search,
                    edit=editing)
    server.start()
    print(f"serving {args.out} at {server.url} — watching for changes (Ctrl+C to stop)")
    if server.editing is not None:
        print(f"editing: open {server.editing.address(server.url)} (this address holds this run's secret: "
              "keep it to yourself)")
    try:
        while True:
            time.sleep(3600)
    finally:
        server.close()


def run_ask(args: argparse.Namespace) -> int:
    from generator.answering import Scope, parse_category
    from generator.answering.render import as_json, as_text
    from generator.commands.ask import ask, ask_plan, judge_answer, library, save
    from generator.commands.save_answer import check_slug
    from generator.llm import LLMClient, llm_settings
    from generator.llm.plan import limits_from

    scope = Scope(args.notebook.strip(), tuple(parse_category(value) for value in args.category))
    found = library(args.content, scope)
    if args.save:  # before the model is paid: a slug that cannot be saved is said first
        check_slug(args.save, set(found.analysis.corpus.notes), args.content)
    extra = found.analysis.corpus.settings.extra
    limits = limits_from(extra, args.max_tokens)
    client = LLMClient(llm_settings(extra), limits=limits)
    plan = ask_plan(found, client, args.question, not args.no_tools, not args.no_judge, limits)
    if dry_run_or_refused(plan, args.dry_run):
        return EXIT_OK
    answer = ask(found, client, args.question, notice=client.say, tools=not args.no_tools)
    if not args.no_judge:
        answer = judge_answer(answer, client, notice=client.say, language=found.analysis.corpus.settings.language)
    render = as_json if args.format == "json" else as_text
    sys.stdout.write(render(answer, found.base_url))
    if args.save:
        written = save(args.content, found, answer, args.save, scope, dt.date.today())
        print(f"saved: {', '.join(f'content/{rel}' for rel in written)} — 'carnet build' publishes the answer",
              file=sys.stderr)
    return EXIT_OK


def run_mcp(args: argparse.Namespace) -> int:
    from generator.agents.server import serve

    try:
        serve(args.content)
    except ContentError as exc:  # errors only: the server does not start (stderr: stdout is the protocol's)
        _print_problems([p for p in exc.problems if p.is_error], args.content)
        print("carnet: mcp not started: the content has errors (as 'carnet build' would refuse it)", file=sys.stderr)
        return EXIT_CONTENT
    return EXIT_OK


def run_context(args: argparse.Namespace) -> int:
    from generator.commands.context import context_bundle

    sys.stdout.write(context_bundle(args.content, args.query, max(200, args.budget)))
    return EXIT_OK


def run_selection(args: argparse.Namespace) -> int:
    from generator.commands.select import run_select

    if args.jobs is not None and not args.oppositions:
        print("carnet: --jobs goes with --oppositions (the only pass of select that sends requests)", file=sys.stderr)
        return EXIT_USAGE
    if (args.dry_run or args.max_tokens is not None) and not args.oppositions:
        print("carnet: --dry-run and --max-tokens go with --oppositions (the only pass of select that sends requests)",
              file=sys.stderr)
        return EXIT_USAGE
    return run_select(args.content, args.wiki, args.threshold, args.oppositions, reindex_vectors=args.reindex,
                      jobs=args.jobs or 1, dry_run=args.dry_run, max_tokens=args.max_tokens)


def run_verify(args: argparse.Namespace) -> int:
    from generator.llm import LLMClient, llm_settings
    from generator.llm.plan import limits_from
    from generator.pipeline import check_content
    from generator.verification.judge import judge, verify_plan

    if args.calibrate and args.articles:
        print("carnet: --calibrate judges Carnet's labelled pairs, not articles: name none", file=sys.stderr)
        return EXIT_USAGE
    analysis = check_content(args.content)
    if args.calibrate:
        return _run_calibrate(args, analysis.corpus.settings)
    unknown = [a for a in args.articles if a not in analysis.assessments]
    if unknown:
        print(f"carnet: not a wiki or synthesis: {', '.join(unknown)}", file=sys.stderr)
        return EXIT_USAGE
    chosen = args.articles or sorted(analysis.assessments)
    pending = {a: [x for x in analysis.assessments[a] if x.judgeable] for a in chosen}
    pending = {a: items for a, items in pending.items() if items}
    if not pending:
        print("nothing to judge: every pair that passed the verbatim check has a verdict")
        return EXIT_OK
    extra, language = analysis.corpus.settings.extra, analysis.corpus.settings.language
    limits = limits_from(extra, args.max_tokens)
    client = LLMClient(llm_settings(extra), limits=limits)
    plan = verify_plan(pending, max(1, args.batch), client, language, limits)
    if dry_run_or_refused(plan, args.dry_run, "; a smaller --batch makes smaller requests"):
        return EXIT_OK
    report = judge(args.content, pending, client, max(1, args.batch), jobs=args.jobs, language=language)
    print(f"judged {report.judged} pair(s); {len(report.unjudged)} left unjudged")
    for failure in report.failed_batches:
        print(visible(f"  failed batch: {failure}"), file=sys.stderr)
    for refused in report.refused:
        print(visible(f"  refused: {refused.describe()}"), file=sys.stderr)
    if report.write_error:
        print(visible(f"carnet: {report.write_error}"), file=sys.stderr)
        print("  stopped sending: the verdicts written before are kept; run 'carnet verify' again once the "
              "file can be written", file=sys.stderr)
        return EXIT_USAGE
    if report.stopped:
        print("  stopped sending once the endpoint failed: the verdicts above are kept; run 'carnet verify' "
              "again when it answers", file=sys.stderr)
    elif report.budget_spent:
        print("  stopped sending before the run's budget was spent: the verdicts above are kept; run 'carnet "
              "verify' again (with --max-tokens N to allow more) to send the pairs left unjudged", file=sys.stderr)
    elif report.refused_batches and args.batch > 1:
        print(f"  {report.refused_batches} batch(es) were refused whole: at temperature 0 the same batch gets the "
              "same answer, so run 'carnet verify --batch 1' to send their pairs one by one", file=sys.stderr)
    elif not report.complete:
        print("  the verdicts above are kept; run 'carnet verify' again to send the pairs left unjudged",
              file=sys.stderr)
    return EXIT_OK if report.complete else EXIT_MODEL


def _run_calibrate(args: argparse.Namespace, settings: SiteSettings) -> int:
    from generator.llm import LLMClient, llm_settings
    from generator.llm.plan import limits_from
    from generator.llm.prompts import load_prompt
    from generator.verification.assess import min_balanced_accuracy
    from generator.verification.calibration import calibrate, calibration_batches, describe, load_pair_set
    from generator.verification.judge import batches_plan

    bar, problem = min_balanced_accuracy(settings.extra)
    if problem is not None:
        print(problem.format_text(str(args.content)), file=sys.stderr)
        return EXIT_USAGE
    pair_set = load_pair_set(settings.language)
    limits = limits_from(settings.extra, args.max_tokens)
    client = LLMClient(llm_settings(settings.extra), limits=limits)
    # the figures need every pair: the whole plan fits the budget, or nothing is sent
    size = max(1, args.batch)
    plan = batches_plan("carnet verify --calibrate", calibration_batches(pair_set, size), client,
                        load_prompt("verify_pairs", settings.language), limits)
    if dry_run_or_refused(plan, args.dry_run):
        return EXIT_OK
    report = calibrate(args.content, pair_set, client, size, settings.language)
    lines, errors = describe(report, pair_set, bar)
    print("\n".join(visible(line) for line in lines))
    for line in errors:
        print(visible(f"  {line}"), file=sys.stderr)
    return EXIT_OK if report.record is not None else EXIT_MODEL


def run_propose(args: argparse.Namespace) -> int:
    from generator.commands.proposals import propose

    if args.provider != "llm" and (args.dry_run or args.max_tokens is not None):
        print("carnet: --dry-run and --max-tokens go with --provider llm (the extractive provider sends nothing)",
              file=sys.stderr)
        return EXIT_USAGE
    done = propose(args.content, args.wiki, args.provider, args.max_operations, dry_run=args.dry_run,
                   max_tokens=args.max_tokens)
    if done.plan is not None and (args.dry_run or done.path is None):
        print_plan(done.plan)
    for line in done.failed:
        print(visible(f"  {line}"), file=sys.stderr)
    if args.dry_run:
        print("dry run: nothing was sent", file=sys.stderr)
        return EXIT_OK
    if done.path is None:
        if done.plan is None:
            print(f"nothing to propose: every extraction of {args.wiki}'s perimeter is cited; no request was sent")
            return EXIT_OK
        print(f"no operation to propose: no request gave a usable answer ({len(done.failed)} failed or not sent); "
              "nothing was written", file=sys.stderr)
        return EXIT_MODEL
    for note in done.plan.notes if done.plan is not None else ():
        print(visible(f"  note: {note}"), file=sys.stderr)
    requests = f" from {len(done.plan.requests)} request(s)" if done.plan is not None else ""
    print(f"wrote {done.operations} operation(s){requests} into {done.path}; review it with "
          f"'carnet review {done.path}'")
    if not _usable_operations(done.path):  # a command that does nothing says so
        print("  no usable operation: the proposal holds only NoChange, so applying it would change nothing")
    if done.failed:
        print(f"  {len(done.failed)} request(s) failed or were not sent: their evidence is not in the proposal; run "
              "'carnet propose' again for it (the proposal records which evidence each request held)", file=sys.stderr)
        return EXIT_MODEL
    return EXIT_OK


def _usable_operations(path: Path) -> int:
    """The operations of the proposal at ``path`` that would change its article (not
    NoChange), as read back from the file."""
    from generator.commands.proposal_files import load_proposal
    from generator.corpus.proposal import Op

    _content, proposal = load_proposal(path)
    return sum(1 for o in getattr(proposal, "operations", ()) if o.op is not Op.NO_CHANGE)


def dry_run_or_refused(plan: Plan, dry_run: bool, hint: str = "") -> bool:
    """With --dry-run, print the plan and say nothing was sent (True: the command is done);
    else raise PlanRefused when the plan must not be sent (:meth:`Plan.check`)."""
    if dry_run:
        print_plan(plan)
        print("dry run: nothing was sent", file=sys.stderr)
        return True
    plan.check(hint)
    return False


def print_plan(plan: object) -> None:
    """A command's plan (:class:`generator.llm.plan.Plan`), as a person reads it."""
    from generator.llm.plan import Plan

    if isinstance(plan, Plan):
        for line in plan.lines():
            print(visible(line))


def run_analyse(args: argparse.Namespace) -> int:
    from generator.commands.analyse import AnalyseReport, print_report, run_analyse

    report = run_analyse(args.content, args.notes, args.notebook, args.budget, args.whole, jobs=args.jobs,
                         dry_run=args.dry_run, max_tokens=args.max_tokens)
    if not isinstance(report, AnalyseReport):  # a dry run: the plan
        print_plan(report)
        print("dry run: nothing was sent", file=sys.stderr)
        return EXIT_OK
    print_report(report)
    refused = any(left.refused for note in report.notes for left in note.left_out)
    if any(not note.model_failed for note in report.failed):  # the content or the disk, not the model
        return EXIT_USAGE
    return EXIT_MODEL if report.failed or refused else EXIT_OK


def run_review(args: argparse.Namespace) -> int:
    from generator.commands.proposals import review

    return review(args.proposal)


def run_apply(args: argparse.Namespace) -> int:
    from generator.commands.proposals import apply
    from generator.extracting.plan import PassageDecision
    from generator.synthesis.sections import OperationResult

    results = apply(args.proposal, args.only)
    for result in results:
        if isinstance(result, PassageDecision):  # a passage of an extraction proposal
            print(visible(result.describe()))
        elif isinstance(result, OperationResult):
            verdict = "accepted" if result.accepted else f"rejected: {result.reason}"
            # the heading as written (a model's controls are escapes already): no repr doubling their backslashes
            print(visible(f"[{result.index + 1}] {result.operation.op} '{result.operation.heading}': {verdict}"))
    print(_applied(results))
    return EXIT_OK  # every decision is recorded, rejections included: see the exit codes above


def _applied(results: Sequence[object]) -> str:
    """What ``apply`` did, in one line: how many were accepted and rejected, and whether
    anything changed (a command that does nothing says so)."""
    from generator.corpus.proposal import Op
    from generator.extracting.plan import PassageDecision
    from generator.synthesis.sections import OperationResult

    passages = [r for r in results if isinstance(r, PassageDecision)]
    operations = [r for r in results if isinstance(r, OperationResult)]
    if passages:
        counts = Counter(p.decision for p in passages)
        skipped = f", {counts['skipped']} not chosen" if counts["skipped"] else ""
        tail = "" if counts["accepted"] else ": the note's extractions were not changed"
        return (f"{counts['accepted']} passage(s) added as extractions ({counts['accepted']} accepted, "
                f"{counts['rejected']} rejected{skipped}){tail}; the decisions are recorded in the proposal")
    if not operations:
        return "nothing was applied: the proposal holds no operation (or passage)"
    accepted = [r for r in operations if r.accepted]
    changing = [r for r in accepted if r.operation.op is not Op.NO_CHANGE]
    only = ": NoChange only" if accepted and not changing else ""
    tail = "" if changing else ": the article was not changed"
    return (f"{len(changing)} operation(s) applied ({len(accepted)} accepted{only}, "
            f"{len(operations) - len(accepted)} rejected){tail}; the decisions are recorded in the proposal")


def run_adopt(args: argparse.Namespace) -> int:
    from generator.commands.adopt import adopt

    date = args.date or dt.date.today()
    print(adopt(args.file, args.by, date, record_perimeter=not args.no_perimeter))
    return EXIT_OK


def _print_problems(problems: Sequence[Problem], root: Path, fmt: str = "text") -> None:
    print_problems(problems, root, fmt, sys.stdout if fmt == "github" else sys.stderr)


def _summary(problems: Sequence[Problem]) -> str:
    counts = Counter(p.severity for p in problems)
    text = f"{counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} warning(s)"
    return text + (f", {counts[Severity.NOTICE]} notice(s)" if counts[Severity.NOTICE] else "")


class _Progress:
    """The current stage on one rewritten terminal line; silent when stderr is not a
    terminal (CI logs) or with --quiet."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.shown = False

    def __call__(self, stage: str) -> None:
        if self.enabled:
            print(f"\r\033[K  {stage}…", end="", file=sys.stderr, flush=True)
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
            self.shown = False


def run_build(args: argparse.Namespace) -> int:
    import os
    import time

    from generator.engine.cache import BuildCache, build_options, default_cache_path, unchanged_build
    from generator.site import DEFAULT_THEME

    started = time.perf_counter()
    progress = _Progress(sys.stderr.isatty() and not args.quiet and os.environ.get("CI") != "true")
    cache = None if args.no_cache else BuildCache.open(args.cache or default_cache_path(args.out))
    result = None
    if cache is not None and (args.theme is None or (args.theme / "templates").is_dir()) and args.content.is_dir():
        # nothing changed? answered before the pipeline (parser, numpy, scipy) is even imported
        theme_root = args.theme or DEFAULT_THEME
        options = build_options(args.strict, args.base_url, not args.no_search, theme_root)
        if args.base_url is None or args.base_url.startswith(("http://", "https://")):
            result = unchanged_build(cache, args.content, args.out, theme_root, options)
    try:
        if result is None:
            from generator.engine.jobs import available_cores
            from generator.pipeline import build

            result = build(args.content, args.out, strict=args.strict, base_url=args.base_url,
                           theme_dir=args.theme, search=not args.no_search, cache=cache, progress=progress,
                           jobs=args.jobs or available_cores())
    except ContentError as exc:
        progress.clear()
        _print_problems(exc.problems, args.content)
        print(f"carnet: build stopped: {exc}", file=sys.stderr)
        return EXIT_CONTENT
    finally:
        progress.clear()
    _print_problems(result.problems, args.content)
    if cache is not None and cache.save_error:
        print(f"carnet: warning: {cache.save_error}; the next build will be a full one", file=sys.stderr)
    if not args.quiet:
        for report in result.reports:
            authors = ", ".join(report.authors) or "nobody"
            withdrawn = f" (+{report.withdrawn} withdrawn, shown as tombstones)" if report.withdrawn else ""
            print(f"published notebook {report.notebook}: {report.notes} note(s), {report.comments} "
                  f"comment(s){withdrawn}; names shown: {authors}")
            if report.stricter:
                shown = ", ".join(report.stricter[:5]) + (f" and {len(report.stricter) - 5} more"
                                                          if len(report.stricter) > 5 else "")
                print(f"  {len(report.stricter)} of its note(s) show names by a stricter rule, of another "
                      f"notebook they are also in: {shown}")
        elapsed = time.perf_counter() - started
        print(f"built {result.files} files into {result.out_dir} in {elapsed:.2f} s ({result.what_changed}; "
              f"{_summary(result.problems)})")
        for line in result.summary.lines():
            print(line)
    return EXIT_OK


def run_check(args: argparse.Namespace) -> int:
    from generator.pipeline import blocking, check_content, few_collections

    if args.site is not None:
        from generator.site.integrity import check_site

        if not args.site.is_dir():
            print(f"carnet: no built site at {args.site}", file=sys.stderr)
            return EXIT_USAGE
        problems = check_site(args.site)
        _print_problems(problems, args.site, args.format)
        pages = sum(1 for _ in args.site.rglob("*.html"))
        print(f"checked the links of {pages} pages: {len(problems)} broken", file=sys.stderr)
        return EXIT_CONTENT if problems else EXIT_OK
    from generator.engine.jobs import available_cores

    with few_collections():
        analysis = check_content(args.content, jobs=available_cores())  # a large corpus is read on every core
    if args.write and not args.fix_anchors:
        print("carnet: --write goes with --fix-anchors", file=sys.stderr)
        return EXIT_USAGE
    if args.fix_anchors:
        return _fix_anchors(args, analysis)
    _print_problems(analysis.problems, args.content, args.format)
    if args.format == "text":
        print(f"checked {len(analysis.corpus.notes)} notes: {_summary(analysis.problems)}", file=sys.stderr)
    return EXIT_CONTENT if blocking(analysis.problems, args.strict) else EXIT_OK


def _fix_anchors(args: argparse.Namespace, analysis: CheckedContent) -> int:
    from generator.commands.fix_anchors import relocated_fixes, write_fixes
    from generator.pipeline import check_content

    fixes = relocated_fixes(analysis)
    for fix in fixes:
        print(f"{args.content}/{fix.file}:{fix.line}: {fix.extraction} relocated: {fix.diff}\n"
              f"    quote now: {fix.new!r}")
    detached = [p for p in analysis.problems if p.code == "detached-anchor"]
    for problem in detached:
        print(problem.format_text(str(args.content)))
    if not args.write:
        hint = " (run again with --write to record them)" if fixes else ""
        print(f"{len(fixes)} relocated, {len(detached)} detached extraction(s){hint}", file=sys.stderr)
        return EXIT_OK
    written = write_fixes(args.content, analysis, fixes)
    after = check_content(args.content)
    still = [f for f in relocated_fixes(after) if f.extraction in {fix.extraction for fix in fixes}]
    print(f"wrote {len(fixes) - len(still)} quote(s) into {len(written)} file(s); "
          f"{len(detached)} detached extraction(s) left as they are", file=sys.stderr)
    return EXIT_CONTENT if still or after.errors else EXIT_OK


READ_ONLY = {"build", "check", "review", "context", "serve", "mcp"}


def _interrupted_change(args: argparse.Namespace) -> None:
    """A change that a killed command left half made (see generator/journal.py): a command
    that writes content undoes it first; one that only reads says so and changes nothing."""
    from generator.journal import interrupted, recover

    given = getattr(args, "content", None) or getattr(args, "proposal", None) or getattr(args, "file", None)
    if given is None:
        return
    start = Path(given).resolve()
    root = next((p for p in (start, *start.parents) if (p / "carnet.yaml").is_file()), None)
    if root is None:
        return
    if args.command in READ_ONLY and not getattr(args, "write", False):
        command = interrupted(root)
        # build and check report it with the content's problems (a warning: --strict fails)
        if command and args.command not in ("build", "check"):
            print(f"carnet: warning: '{command}' was interrupted and left a change half made; the next command "
                  "that writes content (run it again) puts its files back first", file=sys.stderr)
        return
    try:
        lines = recover(root)
    except OSError as exc:  # a full or read-only disk: the journal stays for the next try
        raise CarnetError(f"an interrupted change under {root} could not be put back ({exc.strerror or exc}); "
                          "its journal .carnet-change.json is kept: free some space or make the directory "
                          "writable, then run the command again") from exc
    for line in lines:
        print(f"carnet: {line}", file=sys.stderr)


def _exit_for(exc: CarnetError) -> int:
    """EXIT_MODEL for a failed model call, else EXIT_USAGE. The
    LLM seam is looked up, never imported: when it was not loaded, no call was made."""
    errors = sys.modules.get("generator.llm.errors")
    if errors is None or not isinstance(exc, errors.LLMError) or isinstance(exc, errors.LLMConfigError):
        return EXIT_USAGE
    return EXIT_MODEL  # what the failed calls spent is in the run's summary (_spent)


CONTENT_COMMANDS = ("build", "check", "serve", "propose", "analyse", "verify", "select", "context", "ask", "mcp")
"""The commands that read a content directory (the first argument of build, check and
serve; ``--content`` of the others)."""


def _path_problem(args: argparse.Namespace) -> str:
    """Why a path the command was given cannot be used, with what to do ("" when each can):
    missing, of the wrong kind, or unreadable. Checked once, before any command runs, so
    that none meets it halfway (as a traceback, or after paying a model)."""
    import os
    import stat

    where = "the first argument" if args.command in ("build", "check", "serve", "mcp") else "--content DIR"
    wanted: list[tuple[Path, str, str, bool, str]] = []  # path, what it is, kind, a folder?, what to do
    if args.command in CONTENT_COMMANDS and not (args.command == "check" and args.site is not None):
        wanted.append((args.content, "content directory", "a content directory", True,
                       f"give the folder that holds carnet.yaml ({where}; default: ./content)"))
    if args.command in ("build", "serve") and args.theme is not None:
        wanted.append((args.theme, "theme directory", "a theme directory", True,
                       "give a theme's folder (its templates/ and strings/), or leave --theme out for the bundled one"))
    if args.command == "check" and args.site is not None:
        wanted.append((args.site, "built site", "a built site", True,
                       "give the output directory of 'carnet build' (its --out; default: ./build)"))
    if args.command in ("review", "apply"):
        wanted.append((args.proposal, "proposal", "a proposal file", False,
                       "give a proposal file inside a content directory, proposals/sections/WIKI/ID.yaml or "
                       "proposals/extractions/NOTE/ID.yaml ('carnet propose' and 'carnet analyse' print its path)"))
    if args.command == "adopt":
        wanted.append((args.file, "synthesis file", "a synthesis file", False,
                       "give the synthesis's .md file inside a content directory (e.g. content/notes/SLUG.md)"))
    for path, what, kind, folder, todo in wanted:
        try:
            mode = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return f"{what} not found: {path} — {todo}"
        except OSError as exc:  # a folder above it that cannot be searched, a loop of links
            return f"{what} cannot be read: {path} ({exc.strerror or exc}) — {todo}, readable by this user"
        if stat.S_ISDIR(mode) != folder:
            return f"{path} is {'a directory' if stat.S_ISDIR(mode) else 'a file'}, not {kind} — {todo}"
        if not os.access(path, os.R_OK | (os.X_OK if folder else 0)):
            return (f"{what} cannot be read: {path} (permission denied) — make it readable by this user "
                    "(its permissions), then run the command again")
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    problem = _path_problem(args)
    if problem:
        print(f"carnet: {visible(problem)}", file=sys.stderr)
        return EXIT_USAGE
    handler = {"build": run_build, "check": run_check, "adopt": run_adopt, "propose": run_propose,
               "analyse": run_analyse, "review": run_review, "apply": run_apply, "verify": run_verify,
               "select": run_selection, "context": run_context, "ask": run_ask, "serve": run_serve,
               "mcp": run_mcp}[args.command]
    _spent(say=False)
    try:
        _interrupted_change(args)
        return handler(args)
    except CarnetError as exc:
        print_plan(getattr(exc, "plan", None))
        print(f"carnet: {visible(str(exc), keep_newlines=True)}", file=sys.stderr)
        return _exit_for(exc)
    except BrokenPipeError:  # the output's reader went away (`| head`): nothing more to say
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush is quiet too
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"carnet: interrupted; {INTERRUPTED.get(args.command, INTERRUPTED_MODEL)}", file=sys.stderr)
        _spent()
        _leave_now_if_requests_in_flight()
        return 130
    finally:
        _spent()


INTERRUPTED_MODEL = ("nothing more is sent (the connections are closed); every file written before the interrupt "
                     "is kept whole, and nothing half-written is left: run the command again to go on")
INTERRUPTED = {"build": "the previous site is left as it was", "serve": "stopped serving", "mcp": "stopped serving",
               "check": "nothing was changed", "review": "nothing was changed", "context": "nothing was changed",
               "adopt": "the synthesis is adopted whole or not at all", "apply": "the proposal is applied whole or "
               "not at all"}


def _leave_now_if_requests_in_flight() -> None:
    """After Ctrl-C, requests still in flight on worker threads (``--jobs``) would keep the
    process until they end: it exits at once instead, which closes their connections. Every
    write into content/ is made by the main thread, whole or not at all, so none is cut."""
    import os
    import threading

    if any(t is not threading.main_thread() and t.is_alive() and not t.daemon for t in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)


def _spent(say: bool = True) -> None:
    """What the model calls of this run spent, said once at its end, whatever the end (done,
    failed, interrupted): tokens as the server reported them, request by request. The LLM
    seam is looked up, never imported: when it was not loaded, no call was made. (Called
    with ``say`` False before a command, it forgets clients made outside it: a process that
    runs several commands, as tests do, says each one's own.)"""
    client = sys.modules.get("generator.llm.client")
    if client is None:
        return
    for made in client.clients():
        made.close()  # an interrupted command leaves no request running
        if say:
            print(f"carnet: {made.ledger.summary()}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
