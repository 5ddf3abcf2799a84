"""The reader's in-domain training pairs: lay questions against their provision and its confusable neighbours,
and claims made by rule against the provision they restate or distort.

* ``reader.lay_question`` (1): a generated question (``contracts.questions.GeneratedQuestion``) and the provision
  it was made from;
* ``reader.hard_negative`` (0): the same question and each provision of the same code that today's retrieval
  ranks at or above its source (the confusions the reader must learn: s.369 for a child taken to beg, s.413 for
  a phone kept knowing it stolen); when the source is not retrieved at all, the top ones;
* ``reader.claim_<rule>`` (1 for ``restate``, else 0): each sentence of a provision through
  ``stages.training.claim_perturb``, against that provision.

Passages are rendered as the index stores a statute record ("Section N. Title\\nText"); half of them (seeded by
the pair's text, so the same pair always renders the same) drop the heading line, so the body carries the match.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence

from contracts.questions import GeneratedQuestion, Provision
from contracts.verifier import LabelledPair, VerifierPair
from stages.training.claim_perturb import claim_variants

__all__ = ["passage_of", "question_pairs", "claim_pairs", "with_predecessors"]


def _keep_heading(text: str) -> bool:
    return hashlib.sha256(text.encode()).digest()[0] % 2 == 0


def passage_of(provision: Provision, *, heading: bool = True) -> str:
    body = provision.text
    return f"Section {provision.section}. {provision.title}\n{body}".strip() if heading else body


def question_pairs(questions: Sequence[GeneratedQuestion], provisions: Mapping[str, Provision],
                   negatives: Mapping[str, Sequence[str]]) -> list[LabelledPair]:
    """``provisions`` by key ("BNS:303"); ``negatives`` by question text: the keys retrieval confused it with."""
    pairs: list[LabelledPair] = []
    for q in questions:
        key = f"{q.code}:{q.section}"
        source = provisions.get(key)
        if source is None:
            continue
        group = f"reader:{key}"
        pairs.append(LabelledPair(
            pair=VerifierPair(task="answers", text=q.question,
                              passage=passage_of(source, heading=_keep_heading(q.question + key))),
            label=1, source="reader.lay_question", group=group))
        for other in negatives.get(q.question, ()):
            if other == key or other not in provisions:
                continue
            pairs.append(LabelledPair(
                pair=VerifierPair(task="answers", text=q.question,
                                  passage=passage_of(provisions[other], heading=_keep_heading(q.question + other))),
                label=0, source="reader.hard_negative", group=group))
    return pairs


def claim_pairs(provisions: Sequence[Provision], split_sentences: Callable[[str], list[str]],
                skip: frozenset[str] = frozenset()) -> list[LabelledPair]:
    """Rule-made claims for every sentence of every provision whose key is not in ``skip``."""
    pairs: list[LabelledPair] = []
    for provision in provisions:
        if provision.key in skip:
            continue
        passage = passage_of(provision, heading=_keep_heading(provision.key))
        for sentence in split_sentences(provision.text):
            for variant in claim_variants(sentence):
                pairs.append(LabelledPair(
                    pair=VerifierPair(task="supports", text=variant.claim, passage=passage),
                    label=1 if variant.label else 0, source=f"reader.claim_{variant.rule}",
                    group=f"reader:{provision.key}"))
    return pairs


def with_predecessors(questions: Sequence[GeneratedQuestion], code: str, predecessors: Mapping[str, Sequence[str]],
                      older_code: str) -> list[GeneratedQuestion]:
    """``questions`` and, for each one of ``code`` (the BNS), the same question asked of the provisions of
    ``older_code`` (the IPC) that ``predecessors`` (from the successor alignment: newer section -> older
    sections) names for its section: the drafters' scenarios of the BNS are the IPC's own."""
    out = list(questions)
    for q in questions:
        if q.code != code:
            continue
        for section in predecessors.get(q.section, ()):
            out.append(q.model_copy(update={"code": older_code, "section": section}))
    return out
