"""What a query asks for: intent, keywords, explicit section references and legal-vocabulary expansions.

Section references are read from the common ways people write them: "Section 420", "s. 420 IPC",
"IPC 420", "u/s 302 of the Penal Code", "sec 2 of the Minimum Wages Act", "Article 21". A reference's
``doc_code`` is the canonical code from ``DOC_CODE_ALIASES`` when the act is a known one ("Penal Code" ->
"IPC"), otherwise the act's name as written ("Minimum Wages Act"); ``stages.retrieval.retrieve`` resolves it against
the doc codes actually in the index. Expansions come from a small hand-written map from everyday words
to the words statutes use (jailed -> imprisonment, stealing -> theft).

>>> qa = analyze_query("How long can someone be jailed for stealing under IPC 379?")
>>> assert qa.intent == "punishment" and qa.section_refs[0].doc_code == "IPC" and qa.section_refs[0].section == "379"
>>> assert "imprisonment" in qa.expansions and "theft" in qa.expansions
"""

from __future__ import annotations

import re

from contracts.retrieval import QueryAnalysis, QueryIntent, SectionRef
from stages.text import normalise
from stages.text.normalise import search_terms, stem

__all__ = ["analyze_query", "DOC_CODE_ALIASES", "canonical_doc_code", "provision_kinds", "qualifier_of",
           "reference_spans"]

STAGE_VERSION = "query_analysis.v2"

# canonical doc code -> the ways people name that act (lower case, longest first where it matters).
DOC_CODE_ALIASES: dict[str, tuple[str, ...]] = {
    "IPC": ("indian penal code", "penal code", "i.p.c.", "i.p.c", "ipc"),
    "CrPC": ("code of criminal procedure", "criminal procedure code", "cr.p.c.", "cr.p.c", "crpc"),
    "CPC": ("code of civil procedure", "civil procedure code", "c.p.c.", "c.p.c", "cpc"),
    "IEA": ("indian evidence act", "evidence act", "iea"),
    "NIA": ("negotiable instruments act", "ni act", "nia"),
    "IDA": ("indian divorce act", "divorce act", "ida"),
    "MVA": ("motor vehicles act", "mv act", "mva"),
    "BNS": ("bharatiya nyaya sanhita", "bhartiya nyay sanhita", "bns"),
    "HMA": ("hindu marriage act", "hma"),
    "COI": ("constitution of india", "indian constitution", "constitution", "coi"),
}

_ALIAS_TO_CODE: dict[str, str] = {alias: code for code, aliases in DOC_CODE_ALIASES.items() for alias in aliases}
_ALIAS_PATTERN = "|".join(re.escape(a) for a in sorted(_ALIAS_TO_CODE, key=len, reverse=True))
_NUMBER = r"(\d{1,4}(?:-?[a-z]{1,2})?)\b"
_SECTION_WORD = r"(?:sections?|secs?\.?|ss?\.|u/s\.?|§)"
# An act named in words: up to six words ending in Act/Code/Sanhita, optionally with its year.
_ACT_PHRASE = r"((?:[a-z][a-z.()'-]*\s+){0,6}?(?:act|code|sanhita)(?:,?\s*\d{4})?)"

_SECTION_THEN_ACT = re.compile(
    rf"\b{_SECTION_WORD}\s*{_NUMBER}(?:\s*(?:,|of|under|in)?\s*(?:the\s+)?(?:({_ALIAS_PATTERN})(?![a-z])|{_ACT_PHRASE}))?",
    re.IGNORECASE,
)
_ACT_THEN_NUMBER = re.compile(
    rf"(?<![a-z.])({_ALIAS_PATTERN})\s*(?:{_SECTION_WORD}\s*)?{_NUMBER}", re.IGNORECASE
)
_ARTICLE = re.compile(rf"\b(?:articles?|art\.?)\s*{_NUMBER}", re.IGNORECASE)

_INTENT_CUES: tuple[tuple[QueryIntent, re.Pattern[str]], ...] = (
    (
        "punishment",
        re.compile(
            r"\b(punish\w*|penalt\w*|sentence\w*|jail\w*|prison\w*|imprison\w*|fine[ds]?|how long|years? in|"
            r"locked up|death penalty|consequences?)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "definition",
        re.compile(
            r"\b(what is|what are|what does|define\w*|definition|meaning|mean by|means|what counts as|"
            r"who is|is called|what constitutes)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "procedure",
        re.compile(
            r"\b(how (?:do|can|to|does|should)|procedure|process|steps?|file an?|apply for|application for|"
            r"complaint|who can (?:file|arrest)|arrest\w*|bail|summons|appeal)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "scope",
        re.compile(
            r"\b(appl(?:y|ies|icable) to|extent|scope|who is covered|covered by|jurisdiction|"
            r"outside india|exception|exempt\w*)\b",
            re.IGNORECASE,
        ),
    ),
)

# Everyday word or phrase (lower case) -> the words statutes use for it. A word is matched by its stem
# (``stages.text.normalise.stem``: "stealing", "steals" and "steal" all hit "steal"), a phrase as written.
_LEGAL_SYNONYMS: dict[str, tuple[str, ...]] = {
    "jail": ("imprisonment",),
    "prison": ("imprisonment",),
    "locked": ("imprisonment",),
    "steal": ("theft",),
    "stole": ("theft",),
    "stolen": ("theft", "stolen property"),
    "thief": ("theft",),
    "shoplift": ("theft",),
    "pickpocket": ("theft",),
    "kill": ("murder", "culpable homicide", "death"),
    "killer": ("murder",),
    "murderer": ("murder",),
    "cheat": ("cheating",),
    "con": ("cheating",),
    "scam": ("cheating", "dishonestly"),
    "fraud": ("cheating", "dishonestly", "fraudulently"),
    "swindle": ("cheating",),
    "bribe": ("bribery", "gratification"),
    "bribery": ("bribery", "gratification"),
    "forge": ("forgery",),
    "fake": ("forgery", "counterfeit"),
    "counterfeit": ("counterfeit",),
    "lie": ("false evidence",),
    "lying": ("false evidence",),
    "trick": ("cheating",),
    "deceive": ("cheating",),
    "dupe": ("cheating",),
    "kill yourself": ("suicide",),
    "kill himself": ("suicide",),
    "kill herself": ("suicide",),
    "kill oneself": ("suicide",),
    "end his life": ("suicide",),
    "end her life": ("suicide",),
    "try": ("attempt",),
    "perjury": ("false evidence",),
    "beat": ("hurt", "assault"),
    "injure": ("hurt",),
    "injury": ("hurt", "grievous hurt"),
    "attack": ("assault", "criminal force"),
    "hit": ("assault", "criminal force"),
    "slap": ("criminal force", "assault"),
    "threat": ("criminal intimidation",),
    "threaten": ("criminal intimidation",),
    "blackmail": ("extortion",),
    "extort": ("extortion",),
    "rob": ("robbery",),
    "mug": ("robbery",),
    "gang": ("dacoity",),
    "burglary": ("house-breaking", "house-trespass"),
    "break": ("house-breaking",),
    "trespass": ("trespass",),
    "kidnap": ("kidnapping",),
    "abduct": ("abduction",),
    "suicide": ("suicide", "abetment"),
    "drunk": ("intoxication",),
    "intoxicated": ("intoxication",),
    "insane": ("unsoundness of mind",),
    "insanity": ("unsoundness of mind",),
    "mad": ("unsoundness of mind",),
    "self": ("private defence",),
    "defend": ("private defence",),
    "defence": ("private defence",),
    "child": ("child", "under seven years"),
    "kid": ("child",),
    "misuse": ("misappropriation",),
    "embezzle": ("criminal breach of trust", "misappropriation"),
    "embezzlement": ("criminal breach of trust", "misappropriation"),
    "dowry": ("dowry death",),
    "defame": ("defamation",),
    "slander": ("defamation",),
    "libel": ("defamation",),
    "harass": ("cruelty", "insult modesty"),
    "molest": ("outrage modesty", "assault"),
    "bigamy": ("marrying again during lifetime of husband or wife",),
    "riot": ("rioting", "unlawful assembly"),
    "mob": ("unlawful assembly", "rioting"),
    "bomb": ("explosive substance",),
    "poison": ("poison", "noxious"),
    "fire": ("fire", "mischief"),
    "arson": ("mischief by fire",),
    "damage": ("mischief",),
    "vandal": ("mischief",),
    "vandalism": ("mischief",),
    "penalty": ("punished", "fine"),
    "punishment": ("punished",),
    "conspire": ("criminal conspiracy",),
    "conspiracy": ("criminal conspiracy",),
    "help": ("abetment",),
    "encourage": ("abetment", "instigates"),
    "instigate": ("abetment",),
    "attempt": ("attempt",),
    "coin": ("coin",),
    "public servant": ("public servant",),
    "officer": ("public servant",),
    "official": ("public servant",),
    "marry": ("marriage",),
    "wife": ("husband or wife", "woman"),
    "husband": ("husband or wife",),
    "adultery": ("adultery",),
    "abortion": ("miscarriage",),
    "miscarriage": ("miscarriage",),
    "rash": ("rash or negligent",),
    "careless": ("rash or negligent",),
    "negligent": ("rash or negligent",),
    "accident": ("rash or negligent", "accident"),
}


# What a provision's own wording says it does, per intent (used to favour provisions that match the intent).
_PROVISION_CUES: tuple[tuple[QueryIntent, re.Pattern[str], re.Pattern[str]], ...] = (
    # (intent, cue in the title, cue in the text)
    (
        "punishment",
        re.compile(r"^\s*(punishment|penalty)", re.IGNORECASE),
        re.compile(r"shall be punished|shall be punishable|punishable with|liable to (?:a )?fine", re.IGNORECASE),
    ),
    (
        "definition",
        re.compile(r"^\s*(definitions?|meaning)\b|\bdefined\b", re.IGNORECASE),
        re.compile(
            r"\bis said\b|\bare said\b|\bmeans\b|\bdenotes?\b|\bis called\b|\bshall mean\b|\bdesignated\b|"
            r"(?:commits?|called|termed) [\"\u201c\u2018']",
            re.IGNORECASE,
        ),
    ),
    (
        "procedure",
        re.compile(r"^\s*(procedure|manner|application|power to|appeal)", re.IGNORECASE),
        re.compile(r"\bprocedure\b|\bmay apply\b|\bshall forward\b|\bon receipt of\b|\bmay arrest\b", re.IGNORECASE),
    ),
    (
        "scope",
        re.compile(r"\bextent\b|\bapplication\b|\bextension\b|\bapplies\b", re.IGNORECASE),
        re.compile(r"\bextends? to the whole\b|\bapplies to\b|\bshall apply to\b", re.IGNORECASE),
    ),
)


def provision_kinds(text: str, title: str | None = None) -> frozenset[QueryIntent]:
    """The intents a provision answers, from its own wording ("shall be punished", "is said to commit").

    A title starting "Punishment for" makes a provision a punishment one and never a definition.

    >>> assert provision_kinds("Whoever commits theft shall be punished with imprisonment", "Punishment for theft") == {"punishment"}
    >>> assert provision_kinds("A person is said to commit theft who ...", "Theft") == {"definition"}
    """
    kinds: set[QueryIntent] = set()
    head = title if title is not None else text[:120]
    for intent, title_cue, text_cue in _PROVISION_CUES:
        if title_cue.search(head) or text_cue.search(text):
            kinds.add(intent)
    if "punishment" in kinds and _PROVISION_CUES[0][1].search(head):
        kinds.discard("definition")
    return frozenset(kinds)


# Provisions that qualify another offence or provision rather than state one: an attempt at it, abetting
# it, preparing or conspiring to commit it, or an evidential presumption about it. Read from the title
# ("Attempt to murder", "Abetment of suicide", "Presumption as to dowry death"); a title that merely
# mentions one later ("Theft after preparation made for causing death") states an offence of its own.
_QUALIFIER_TITLE = re.compile(
    r"^\s*(?:punishment (?:of|for) )?(?:making )?"
    r"(attempt|abet|preparation|conspiracy|presumption)",
    re.IGNORECASE,
)
_QUALIFIER_NAMES = {"attempt": "attempt", "abet": "abetment", "preparation": "preparation",
                    "conspiracy": "conspiracy", "presumption": "presumption"}
def _forms(words: str) -> frozenset[str]:
    """The words as written and their stems (what a query's words are matched against)."""
    return frozenset(w for word in words.split() for w in (word, stem(word)))


# Words of the query (matched by stem) that ask about a qualifier.
_QUALIFIER_CUES: dict[str, frozenset[str]] = {
    "attempt": _forms("attempt try tried tries trying"),
    "abetment": _forms("abet abetment abettor help encourage instigate aid assist"),
    "preparation": _forms("prepare preparation"),
    "conspiracy": _forms("conspire conspiracy"),
    "presumption": _forms("presume presumption proof prove evidence burden"),
}


def qualifier_of(title: str | None) -> str | None:
    """The kind of qualifying provision a section title names, or None for a provision in its own right.

    >>> assert qualifier_of("Attempt to murder") == "attempt" and qualifier_of("Abetment of suicide") == "abetment"
    >>> assert qualifier_of("Punishment for murder") is None
    >>> assert qualifier_of("Theft after preparation made for causing death") is None
    """
    match = _QUALIFIER_TITLE.match(title or "")
    return _QUALIFIER_NAMES[match.group(1).lower()] if match else None


def _qualifiers(words: frozenset[str]) -> tuple[str, ...]:
    # From the query's own words only: an expansion ("suicide" -> "abetment") is a guess about wording.
    return tuple(kind for kind, cues in _QUALIFIER_CUES.items() if words & cues)


def canonical_doc_code(name: str) -> str | None:
    """The canonical code for an act's name or abbreviation, or None when it is not a known one.

    >>> assert canonical_doc_code("Penal Code") == "IPC" and canonical_doc_code("Cr.P.C.") == "CrPC"
    """
    return _ALIAS_TO_CODE.get(re.sub(r"\s+", " ", name.strip().lower()).removeprefix("the "))


def _normalize_number(number: str) -> str:
    return number.replace("-", "").upper()


def _act_name(alias: str | None, phrase: str | None) -> str | None:
    if alias:
        return canonical_doc_code(alias) or alias
    if phrase:
        phrase = re.sub(r"\s+", " ", phrase.strip())
        return canonical_doc_code(phrase) or phrase.title()
    return None


def _section_refs(query: str) -> tuple[SectionRef, ...]:
    found: list[tuple[int, SectionRef]] = []
    for match in _SECTION_THEN_ACT.finditer(query):
        doc = _act_name(match.group(2), match.group(3))
        found.append((match.start(), SectionRef(doc_code=doc, section=_normalize_number(match.group(1)))))
    for match in _ACT_THEN_NUMBER.finditer(query):
        code = canonical_doc_code(match.group(1))
        ref = SectionRef(doc_code=code, section=_normalize_number(match.group(2)))
        # "Article 21 of the Constitution" style hits are handled below; numbers in the code name are not refs.
        found.append((match.start(), ref))
    for match in _ARTICLE.finditer(query):
        found.append(
            (match.start(), SectionRef(doc_code=None, section=_normalize_number(match.group(1)), level="article"))
        )
    unique: dict[tuple[str | None, str, str], SectionRef] = {}
    for _, ref in sorted(found, key=lambda pair: pair[0]):
        key = (ref.doc_code.lower() if ref.doc_code else None, ref.section.lower(), ref.level)
        # A bare "Section 420" seen next to "IPC 420" is the same reference: keep the qualified one.
        bare = (None, ref.section.lower(), ref.level)
        if ref.doc_code and bare in unique:
            del unique[bare]
        if not ref.doc_code and any(k[1:] == key[1:] for k in unique):
            continue
        unique.setdefault(key, ref)
    return tuple(unique.values())


def _intent(query: str) -> QueryIntent:
    for intent, cue in _INTENT_CUES:
        if cue.search(query):
            return intent
    return "general"


def _word_forms(query: str) -> set[str]:
    """Each word of the query as written and stemmed ("forging" -> "forging", "forg")."""
    return set(_forms(" ".join(normalise.words(query))))


# The stem a synonym map's word is matched by (a phrase is matched as written).
_SYNONYM_STEMS = {word: stem(word) for word in _LEGAL_SYNONYMS if " " not in word}


def _expansions(query: str, words: frozenset[str]) -> tuple[str, ...]:
    lowered = query.lower()
    out: list[str] = []
    for word, targets in _LEGAL_SYNONYMS.items():
        hit = word in lowered if " " in word else (word in words or _SYNONYM_STEMS[word] in words)
        if hit:
            out.extend(t for t in targets if t not in out)
    return tuple(out)


_ACT_MENTION = re.compile(rf"(?<![a-z0-9])({_ALIAS_PATTERN})(?![a-z0-9])", re.IGNORECASE)
_ACT_NAME = re.compile(r"\b(?:the\s+)?((?:[A-Z][a-z]+\s+){1,5}(?:Act|Code|Sanhita))\b")


def _acts(query: str, refs: tuple[SectionRef, ...]) -> tuple[str, ...]:
    # A short code written like a name ("Ida", "Nia") is a name, not the act.
    acts = [
        canonical_doc_code(m.group(1)) or m.group(1)
        for m in _ACT_MENTION.finditer(query)
        if not (len(m.group(1)) <= 4 and m.group(1).istitle())
    ]
    acts += [canonical_doc_code(m.group(1)) or m.group(1) for m in _ACT_NAME.finditer(query)]
    acts += [r.doc_code for r in refs if r.doc_code]
    return tuple(dict.fromkeys(acts))


def reference_spans(query: str) -> tuple[tuple[int, int], ...]:
    """Where the query names a provision or an act ("s. 420 IPC", "Article 21", "the Penal Code", "Minimum
    Wages Act"). Retrieval resolves these by section id and doc code, so a chunk's text need not repeat them.

    >>> q = "Where does the Penal Code apply under section 2?"
    >>> [q[a:b] for a, b in reference_spans(q)]
    ['the Penal Code', 'Penal Code', 'section 2']
    """
    patterns = (_SECTION_THEN_ACT, _ACT_THEN_NUMBER, _ARTICLE, _ACT_MENTION, _ACT_NAME)
    return tuple(sorted({m.span() for p in patterns for m in p.finditer(query)}))


def analyze_query(query: str) -> QueryAnalysis:
    """Intent, keywords (stemmed, stop words dropped), section references, expansions, acts named and the
    qualifiers asked about ("tried to kill" -> attempt; "helping someone to ..." -> abetment)."""
    keywords = tuple(dict.fromkeys(search_terms(query)))
    refs = _section_refs(query)
    # Every form of the query's words, once: each word as written and its stem (the keywords among them).
    words = frozenset(keywords) | _word_forms(query)
    return QueryAnalysis(
        intent=_intent(query),
        keywords=keywords,
        section_refs=refs,
        expansions=_expansions(query, words),
        acts=_acts(query, refs),
        qualifiers=_qualifiers(words),
    )
