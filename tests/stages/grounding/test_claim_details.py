"""stages/grounding/claim_details.py: the specifics a sentence commits to, and which of them evidence lacks."""

from __future__ import annotations

import pytest

from stages.grounding.claim_details import claim_details, evidence_terms, unsupported_details

pytestmark = pytest.mark.unit

NEVADA = "Catherine Cortez Masto is an American politician who was the 32nd Attorney General of Nevada from 2007 to 2015."


def missing(claim: str, evidence: str, question: str = ""):  # noqa: ANN201 - test helper
    return unsupported_details(claim_details(claim), (evidence_terms(evidence),),
                               presupposed=evidence_terms(question).stems if question else frozenset())


def test_a_substituted_place_is_an_unsupported_entity_whatever_the_overlap() -> None:
    assert missing("Catherine Cortez Masto served as Attorney General of California.", NEVADA).entities == ("California",)
    assert not missing("Catherine Cortez Masto served as Attorney General of Nevada.", NEVADA).entities


def test_multiword_names_and_roman_numerals_are_checked_word_by_word() -> None:
    evidence = "Under their leader Rollo, they agreed to swear fealty to King Charles III of West Francia."
    assert missing("Rollo swore fealty to King Charles IV of West Francia.", evidence).entities == ("IV",)
    assert missing("Rollo swore fealty to King Louis III of West Francia.", evidence).entities == ("Louis",)
    faithful = missing("Rollo swore fealty to King Charles III of West Francia.", evidence)
    # "swore" is not in the evidence ("swear" is): a content word, not a swapped name nor a substitution.
    assert (faithful.entities, faithful.substituted, faithful.content) == ((), (), ("swore",))


def test_a_capitalised_opening_word_is_a_content_word_unless_a_name_follows() -> None:
    assert claim_details("Murder is punishable with death.").entities == ()
    assert "murder" in claim_details("Murder is punishable with death.").content
    assert claim_details("Catherine Cortez Masto ran in Nevada.").entities == ("Catherine Cortez Masto", "Nevada")


def test_possessives_and_document_words_are_not_entities_of_their_own() -> None:
    assert not missing("James Henry Miller's wife was American.", "James Henry Miller married an American.").entities
    assert claim_details("Yes, under Section 420 the fine is Rs. 10,000.").entities == ()


def test_dates_are_month_names_and_years() -> None:
    details = claim_details("The crisis began in October 1973 [OIL_0].")
    assert details.dates == ("October", "1973")
    evidence = "The 1973 oil crisis began in October 1973."
    assert missing("The crisis began in November 1973.", evidence).dates == ("November",)
    assert missing("The crisis began in October 1974.", evidence).dates == ("1974",)


def test_a_quantity_keeps_its_unit() -> None:
    evidence = "imprisonment for a term which may extend to three months, or with fine which may extend to five hundred rupees"
    assert missing("imprisonment up to three years", evidence).quantities == ("3 year",)
    assert not missing("imprisonment up to three months or a fine of 500 rupees", evidence).quantities
    # A value the evidence states without a unit is left to the number check ("Rs. 10,000" ~ "10,000 rupees").
    assert not missing("a fine of 10,000 rupees", "a fine of Rs. 10,000").quantities


def test_question_words_are_presupposed_but_not_evidence() -> None:
    question = "Who wrote the song about the Simpsons character Milhouse?"
    knowledge = "Milhouse was named after President Richard Nixon."
    assert not missing("The Simpsons character Milhouse was named after Richard Nixon.", knowledge, question)
    assert missing("The Simpsons character Milhouse was named after Richard Nixon.", knowledge).entities == ("Simpsons",)
    assert missing("Milhouse was named after a famous musician.", knowledge, question).content == ("famous", "musician")


def test_a_qualifier_swapped_for_the_evidences_own_is_a_substitution() -> None:
    evidence = "being a police officer, commits rape within the limits of the police station"
    assert missing("being a military officer, commits rape", evidence).substituted == ("militari",)
    # A verb before a noun is not taken for a qualifier.
    assert missing("The Act defines employer broadly.", '"employer" means any person who employs').substituted == ()


def test_evidence_brackets_are_text() -> None:
    assert 2007.0 in evidence_terms("Attorney General [2007-2015]").numbers
