"""Questions answered from the corpus (``carnet ask``): the passages a question may be
answered from, their lexical ranking, and the answer with every citation anchored and
each (statement, passage) pair given its state. Pure: the model's answer comes in as
data from :mod:`generator.commands.ask`, which holds the conversation."""

from generator.answering.answer import ANSWER_SCHEMA, Answer, Citation, Mode, Refusal, RefusedQuote, Statement, assemble
from generator.answering.passages import Passage, Scope, parse_category, passages
from generator.answering.search import Index

__all__ = ["ANSWER_SCHEMA", "Answer", "Citation", "Index", "Mode", "Passage", "Refusal", "RefusedQuote", "Scope",
           "Statement", "assemble", "parse_category", "passages"]
