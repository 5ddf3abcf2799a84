"""The one normaliser: BM25 and the grounding checks agree on what a word is, and the statute rules hold."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stages.retrieval.query_analysis import analyze_query
from stages.text import normalise
from stages.text.normalise import CLAIM_STOPWORDS, SEARCH_STOPWORDS, claim_terms, normaliser_spec, search_terms, stem, words
from stages.text.units import content_words, word_stems

pytestmark = pytest.mark.unit

# Words of statutes and of the questions people ask about them, inflected every which way.
_VOCABULARY = (
    "punishment punished punishes punishable offences offence cheating cheated thefts theft stealing stolen "
    "imprisonment imprisoned imprison employer employee employment cancellation cancelled refunds dishonestly "
    "murder murdered homicide wages married marriage tried attempts attempted Sanhitā Nyāya 498A 304B 420 1860 "
    "shall whoever someone provided according thereof not no sec cl the of a s"
).split()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=12))
def test_bm25_and_the_grounding_checks_agree_on_every_word_neither_list_stops(picked):
    text = " ".join(picked)
    kept = [w for w in words(text) if w not in SEARCH_STOPWORDS | CLAIM_STOPWORDS and len(w) > 1]
    assert set(search_terms(" ".join(kept))) == content_words(" ".join(kept)) == {stem(w) for w in kept}
    # Whatever a list stops, the stem of a word both keep is the same stem in both.
    assert set(search_terms(text)) & claim_terms(text) >= {stem(w) for w in kept}


@pytest.mark.parametrize("family", [
    ("punished", "punishes", "punishable", "punish"),
    ("punishment", "punishments"),
    ("cheating", "cheated", "cheats", "cheat"),
    ("imprisoned", "imprisons", "imprison"),
    ("cancelled", "cancelling", "cancel"),
    ("bailable", "bail", "bails"),
    ("tried", "tries", "trying", "try"),
    ("married", "marries", "marry"),
    ("territorial", "territorially"),
])
def test_a_word_family_meets_at_one_stem_in_search_and_in_claims(family):
    assert len({stem(w) for w in family}) == 1
    assert len({tuple(search_terms(w)) for w in family}) == 1
    assert len({frozenset(claim_terms(w)) for w in family}) == 1


def test_a_statute_noun_made_with_a_kept_suffix_is_not_its_verb():
    # "Punishment for rioting" heads the penalty provision; "shall be punished" is in most provisions.
    assert stem("punishment") != stem("punish") and stem("territorial") != stem("territory")
    assert stem("prohibition") != stem("prohibit") and stem("phenazinic") != stem("phenazine")
    assert stem("punishment") == "punishment" and stem("criminally") == "criminal"
    # Snowball's own forms and the derivations it may cut are untouched.
    assert stem("carelessness") == stem("careless") and stem("relatives") == stem("relative")
    # "-able" meets its verb only above a short base: "payable" and "table" keep their word.
    assert stem("payable") != stem("pay") and stem("table") != "t"


def test_section_numbers_are_identifiers_never_stemmed():
    assert search_terms("Section 498A, s. 304B and sections 420s of 1860") == ["section", "498a", "304b", "section", "420s", "1860"]
    assert stem("498a") == "498a" and stem("12th") == "12th"


def test_one_letter_tokens_are_no_search_terms_but_digits_are():
    assert search_terms("s. 7 of clause (a)") == ["7", "claus"]
    assert "s" in word_stems("u/s 379"), "the grounding checks still read every token"


def test_legal_abbreviations_read_as_their_word():
    assert search_terms("sec. 420") == search_terms("section 420")
    assert claim_terms("cl. (b) of the govt. order") == claim_terms("clause (b) of the government order")


def test_accents_fold_in_search_and_in_claims():
    assert search_terms("Bharatiya Nyāya Sanhitā") == search_terms("Bharatiya Nyaya Sanhita")
    assert content_words("Nyāya") == content_words("nyaya") == {"nyaya"}


def test_the_two_stop_lists_differ_only_as_written_down():
    # The statute's connectives are search terms (BM25's IDF weighs them) but carry no claim.
    assert {"shall", "thereof", "upon", "whereas"} <= CLAIM_STOPWORDS and not {"shall", "thereof"} & SEARCH_STOPWORDS
    assert search_terms("shall thereof") == ["shall", "thereof"] and claim_terms("shall thereof") == frozenset()
    # The filler of how people ask is no search term; "act" is one in both.
    assert {"someone", "get"} <= SEARCH_STOPWORDS and "act" not in SEARCH_STOPWORDS | CLAIM_STOPWORDS
    # A negation is a stop word in both, and still read where the checks need it.
    assert {"not", "no", "nor"} <= SEARCH_STOPWORDS & CLAIM_STOPWORDS
    assert "not" in word_stems("not punishable") and "not" not in content_words("not punishable")


def test_the_query_analyser_matches_its_synonyms_by_stem():
    assert analyze_query("Can I be jailed for stealing?").expansions == ("imprisonment", "theft")
    assert "intoxication" in analyze_query("the intoxicated driver").expansions
    assert "robbery" in analyze_query("he was mugged").expansions
    assert analyze_query("conspired to murder").qualifiers == ("conspiracy",)
    assert analyze_query("He tried to kill").qualifiers == ("attempt",)


def test_stemming_gives_the_same_stems_from_many_threads():
    tokens = sorted(set(words(" ".join(_VOCABULARY * 3) + " guarantees committees wrongfully detention")))
    normalise.stem.cache_clear()
    serial = [stem(w) for w in tokens]
    normalise.stem.cache_clear()
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(stem, tokens * 50)) == serial * 50


def test_the_spec_fingerprints_the_behaviour(monkeypatch):
    before = normaliser_spec()
    assert before["version"] == normalise.NORMALISER_VERSION and before["stopwords"] == len(SEARCH_STOPWORDS)
    with monkeypatch.context() as patch:
        patch.setattr(normalise, "ABBREVIATIONS", {})
        normalise.stem.cache_clear()
        assert normaliser_spec()["probe_sha256"] != before["probe_sha256"], "dropping a statute rule shows"
    normalise.stem.cache_clear()
    with monkeypatch.context() as patch:
        patch.setattr(normalise, "stem", lambda word: word)
        assert normaliser_spec()["probe_sha256"] != before["probe_sha256"]
    assert normaliser_spec() == before
