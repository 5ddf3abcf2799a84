"""What the local instruct model is asked for a provision, and which of its lines are kept as questions.

The model rewrites better than it invents (``shared/STACK_NOTES.md``): asked plainly it restates a section's
title in legal words, and asked to invent a situation it often gets the law wrong. So where a provision carries
its drafters' *Illustrations*, each scenario is rewritten as the question a person in it would ask (``origin
illustration``): the law in it was written by the drafters, the model only changes the voice. Provisions without
illustrations are asked for questions their text answers (``origin provision``), and the rules below decide what
is kept.

Rules (each dropped line is kept with the rule's name, for the card's counts):

* ``not_a_question``: does not end with "?" after the model's "Q:" or numbering is removed;
* ``too_short`` / ``too_long``: under 5 or over 45 words;
* ``names_the_law``: names a section, the code or the Act ("section 302", "IPC", "Sanhita", "this law");
* ``kept_letters``: keeps the drafters' letter names (Z, "A's") instead of people;
* ``echoes_the_prompt``: speaks of "the rule", "this situation", "the case" instead of asking about a situation;
* ``copies_the_text``: shares a run of 6 words with the text it was made from (the question would be matched
  by its words, not by its meaning);
* ``duplicate``: the same words as a question kept before it.

>>> p = Provision(code="BNS", section="303", title="Theft", text="Whoever ... commits theft.")
>>> [q.question for q in parse_questions("Q: My neighbour took my goat while I was away. Is that a crime?\\n"
...                                      "Q: What does section 303 say?", p, "illustration", "A takes Z's goat.")[0]]
['My neighbour took my goat while I was away. Is that a crime?']
"""

from __future__ import annotations

import re

from contracts._base import content_sha256, sha256_text
from contracts.questions import (
    CompletionRequest,
    DroppedQuestion,
    GeneratedQuestion,
    Provision,
    QuestionOrigin,
)
from stages.text.normalise import words

__all__ = ["SEED", "SYSTEM", "EXAMPLES", "USER_TEMPLATES", "lay_names", "scenario_question", "prompt_sha256", "question_request",
           "parse_questions"]

SEED = 20261126
TEMPERATURE = 0.0
MAX_TOKENS = 90
TEXT_CHARS = 900

SYSTEM = (
    "You rewrite short legal case descriptions as the question an ordinary person involved in the case would ask "
    "a lawyer, in plain everyday English. Keep every fact that decides the case. Do not name any law, section, "
    "code or rule. Reply with the question only."
)
# One worked example per origin, from civil life (nothing a statute here decides), so the model copies the shape
# of the reply and not a piece of law.
EXAMPLES: dict[QuestionOrigin, tuple[tuple[str, str], ...]] = {
    "illustration": ((
        "Case: Ravi, a tenant, stops paying rent, and Meena, his landlady, changes the locks while Ravi is away.",
        "I stopped paying rent and my landlady changed the locks while I was away. Is she allowed to do that?"),),
    "provision": ((
        "Law: Refund of deposit. The landlord shall return the security deposit within one month of the end of "
        "the tenancy, less any amount due for damage.",
        "I moved out of my flat six weeks ago and the owner still has not given back my deposit. What can I do?"),),
}
USER_TEMPLATES: dict[QuestionOrigin, str] = {
    "illustration": "Case: {seed}",
    "provision": "Law: {title}. {seed}",
}
# The drafters' letters ("A", "Z", "A's") become names before the model reads a scenario: a 1.5B model told not
# to keep them keeps them.
NAMES = {"A": "Ravi", "B": "Arjun", "C": "Kavita", "D": "Suresh", "X": "Anil", "Y": "Farida", "Z": "Meena"}
_PARTY = re.compile(
    r"\b([BCDXYZ])\b"                                   # the other letters are always parties
    r"|(?<=[a-z,;] )A\b"                                 # mid-sentence "A" is a party ("gives A money")
    r"|\bA\b(?=['’]s\b|,|\s+(?:and|or|is|was|has|had|knows|knowing|intending|being|who|does|did|may|shall|will|"
    r"in|at|by|to|not|with|without)\b|\s+[a-z]+(?:s|ed|ly)\b)")       # sentence-initial "A" before a verb or adverb


def lay_names(text: str) -> str:
    """The drafters' letters as names.

    >>> lay_names("A, a surgeon, operates on Z. A's intent is good; A knows Z may die.")
    "Ravi, a surgeon, operates on Meena. Ravi's intent is good; Ravi knows Meena may die."
    >>> lay_names("A police officer apprehends Z.")
    'A police officer apprehends Meena.'
    """
    return _PARTY.sub(lambda m: NAMES[m.group(1) or "A"], text)


def prompt_sha256(origin: QuestionOrigin) -> str:
    """The identity of one prompt (system, worked example and user template): the card records it."""
    return content_sha256({"system": SYSTEM, "examples": EXAMPLES[origin], "user": USER_TEMPLATES[origin]})


def question_request(provision: Provision, origin: QuestionOrigin, seed_text: str) -> CompletionRequest:
    """The request for one illustration (``seed_text`` the scenario) or one provision (its text)."""
    seed = lay_names(" ".join(seed_text.split())[:TEXT_CHARS])
    title = provision.title or "a rule of the criminal law"
    return CompletionRequest(system=SYSTEM, user=USER_TEMPLATES[origin].format(title=title, seed=seed),
                             examples=EXAMPLES[origin], temperature=TEMPERATURE, seed=SEED, max_tokens=MAX_TOKENS)


_MARK = re.compile(r"^\s*(?:Q\s*\d*\s*[:.)-]|\d+\s*[.)-]|[-*•])\s*", re.IGNORECASE)
_NAMES_LAW = re.compile(r"(?i)\b(?:sections?|s\.\s*\d+|sub-section|clause|IPC|BNS|Sanhita|Penal Code|"
                        r"the Code|this (?:law|rule|provision|Act)|under the Act)\b")
_LETTERS = re.compile(r"\b[B-HJ-Z]\b|\bA['’]s\b|\b(?:by|to|of|and|that|if|when|from|whether|did|does|can|should) A\b")
_ECHO = re.compile(r"(?i)\b(?:the|this|that) (?:rule|situation|case|scenario|law|illustration)\b")
_RUN = 6


def _runs(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + _RUN]) for i in range(len(tokens) - _RUN + 1)}


def _rule(line: str, source_runs: set[tuple[str, ...]], seen: set[tuple[str, ...]]) -> tuple[str | None, tuple]:
    tokens = words(line)
    key = tuple(tokens)
    if not line.endswith("?"):
        return "not_a_question", key
    if len(line.split()) < 5:
        return "too_short", key
    if len(line.split()) > 45:
        return "too_long", key
    if _NAMES_LAW.search(line):
        return "names_the_law", key
    if _LETTERS.search(line):
        return "kept_letters", key
    if _ECHO.search(line):
        return "echoes_the_prompt", key
    if _runs(tokens) & source_runs:
        return "copies_the_text", key
    if key in seen:
        return "duplicate", key
    return None, key


def parse_questions(raw: str, provision: Provision, origin: QuestionOrigin, seed_text: str
                    ) -> tuple[tuple[GeneratedQuestion, ...], tuple[DroppedQuestion, ...]]:
    """(questions kept, lines dropped by rule) from a model's raw reply."""
    source_runs = _runs(words(f"{seed_text} {provision.text}"))
    seed_sha = sha256_text(seed_text)
    kept: list[GeneratedQuestion] = []
    dropped: list[DroppedQuestion] = []
    seen: set[tuple[str, ...]] = set()
    for raw_line in raw.splitlines():
        line = " ".join(_MARK.sub("", raw_line.strip().strip('"')).split()).strip().strip('"')
        if not line:
            continue
        rule, key = _rule(line, source_runs, seen)
        if rule is not None:
            dropped.append(DroppedQuestion(text=line, rule=rule))
            continue
        seen.add(key)
        kept.append(GeneratedQuestion(question=line, code=provision.code, section=provision.section,
                                      origin=origin, seed_sha256=seed_sha))
    return tuple(kept), tuple(dropped)


# Sentences that carry the drafters' verdict ("Here A has committed theft", "A commits no offence"): the scenario
# question keeps the facts and asks for the verdict.
_VERDICT = re.compile(r"(?i)^(?:here\b|so\b|therefore\b|but\b.*\b(?:offence|guilty|liable)\b)|"
                      r"^(?:this|that|it) (?:is|was)\b|^of [a-z -]+\.$|\bwithin this exception\b|"
                      r"\bhas (?:not )?(?:yet )?fabricated\b|\bcommits (?:theft|\w+ery|murder|cheating)\b|"
                      r"\b(?:has|have) (?:\w+ ){0,2}committed\b|\bcommits?\b.*\boffence\b|\bis (?:not )?guilty\b|"
                      r"\b(?:is|are) (?:not )?liable\b|\bhas (?:not )?(?:caused|abetted|cheated|used)\b|"
                      r"\b(?:cheats|abets|steals|extorts|defames)\.$|\bis said to\b|\bthe offence of\b|"
                      r"\b(?:no|an|any) offence\b|\bis an offence\b")
_ASKS = ("Has {name} committed an offence?", "Can {name} be punished for what happened?",
         "Is what {name} did a crime?", "Is {name} guilty of anything here?")
_NAME = re.compile(r"\b(" + "|".join(sorted(set(NAMES.values()))) + r")\b")


def scenario_question(provision: Provision, illustration: str, split_sentences) -> GeneratedQuestion | None:  # noqa: ANN001
    """A lay question made by rule from one illustration: its facts with the letters as names, the verdict
    sentences removed, and one question asking for the verdict (chosen by the text's hash). None when no fact
    is left or no party is named.

    >>> import re as _re
    >>> split = lambda t: [s for s in _re.split(r"(?<=[.;])\\s+", t) if s]
    >>> p = Provision(code="BNS", section="303", title="Theft", text="Whoever ... commits theft.")
    >>> scenario_question(p, "A cuts down a tree on Z's ground, intending to take it dishonestly. Here, as soon "
    ...                   "as A has severed the tree in order to such taking, he has committed theft.", split).question
    "Ravi cuts down a tree on Meena's ground, intending to take it dishonestly. Is what Ravi did a crime?"
    """
    facts = [s for s in split_sentences(lay_names(" ".join(illustration.split()))) if not _VERDICT.search(s)]
    text = " ".join(facts).strip()
    names = _NAME.findall(text)
    if len(text.split()) < 6 or not names:
        return None
    actor = NAMES["A"] if NAMES["A"] in names else names[0]  # the drafters' "A" is the one whose act is judged
    ask = _ASKS[int(sha256_text(text), 16) % len(_ASKS)].format(name=actor)
    if not text.endswith((".", "?", "!")):
        text += "."
    return GeneratedQuestion(question=f"{text} {ask}", code=provision.code, section=provision.section,
                             origin="scenario", seed_sha256=sha256_text(illustration))
