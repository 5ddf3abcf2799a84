"""The aligner on small made-up codes: merges, splits, no successor, and the codes' order deciding between twins."""

from __future__ import annotations

import numpy as np
import pytest

from contracts.provisions import AlignConfig, ProvisionMap, ProvisionSet, ProvisionText
from stages.provisions.align import Similarities, align_sections, build_map, similarities
from stages.provisions.parse import sections_from_records, sections_from_text, subsections

pytestmark = pytest.mark.unit

OLDER = [
    ("1", "Theft", "Whoever dishonestly takes movable property out of the possession of another commits theft."),
    ("2", "Punishment for theft", "Whoever commits theft shall be punished with imprisonment for three years."),
    ("3", "Adultery", "Whoever has sexual intercourse with the wife of another man without his consent."),
    ("4", "Cheating", "Whoever deceives any person and dishonestly induces him to deliver any property cheats. "
                      "Whoever cheats by personation shall be punished with imprisonment for three years."),
    ("5", "Mischief", "Whoever destroys property intending wrongful loss to the public commits mischief."),
]
NEWER = [
    ("301", "Theft", "(1) Whoever dishonestly takes movable property out of the possession of another commits "
                     "theft. (2) Whoever commits theft shall be punished with imprisonment for three years."),
    ("302", "Snatching", "Whoever suddenly seizes movable property from a person on a road commits snatching."),
    ("303", "Cheating", "Whoever deceives any person and dishonestly induces him to deliver any property cheats."),
    ("304", "Cheating by personation", "Whoever cheats by personation shall be punished with imprisonment for "
                                       "three years."),
    ("305", "Mischief", "Whoever destroys property intending wrongful loss to the public commits mischief."),
]


def _links(older=OLDER, newer=NEWER, cfg=None):  # noqa: ANN001, ANN202
    return {lk.from_section: lk for lk in align_sections(older, newer, similarities(older, newer, None),
                                                          cfg or AlignConfig())}


def test_a_definition_and_its_punishment_merge_into_one_section():
    links = _links()
    assert links["1"].to_sections[0] == "301" and links["2"].to_sections[0] == "301"


def test_a_section_not_re_enacted_has_no_successor_but_names_its_nearest_candidate():
    adultery = _links()["3"]
    assert adultery.to_sections == () and adultery.score == 0.0
    assert adultery.nearest in {s for s, _, _ in NEWER} and adultery.nearest_score < AlignConfig().no_successor_below


def test_a_section_split_in_two_gets_both_best_first():
    assert _links()["4"].to_sections == ("303", "304")


def test_a_new_section_with_no_source_is_nobodys_successor():
    assert all("302" not in lk.to_sections for lk in _links().values())


def test_order_decides_between_two_equally_similar_candidates():
    # Older "b" sits between a -> 2 and c -> 3; its best pair alone is 4, a hair better than the in-order 3.
    # Every pair shares an uncommon word (evidence), so the score matrices alone decide.
    older = [("a", "", "alpha"), ("b", "", "bravo"), ("c", "", "charlie")]
    newer = [(n, "", "alpha bravo charlie") for n in ("1", "2", "3", "4")]
    score = np.array([[0.1, 0.9, 0.1, 0.1],
                      [0.1, 0.1, 0.1, 0.8],   # b: its twin at 4 is as good as anything
                      [0.1, 0.1, 0.9, 0.1]], dtype=np.float32)
    score[1, 2] = 0.79  # the in-order candidate is a hair worse than the out-of-order one
    sims = Similarities(heading=score, embedding=score, words=score)
    links = {lk.from_section: lk for lk in align_sections(older, newer, sims, AlignConfig(order_window=1))}
    assert links["b"].to_sections[0] == "3"  # picked alone, b would go to 4; in order it goes to 3
    assert links["b"].evidence.in_order
    # A block moved wholesale is still found: the jump costs less than what it wins.
    moved = np.array([[0.1, 0.1, 0.1, 0.9], [0.9, 0.1, 0.1, 0.1], [0.1, 0.9, 0.1, 0.1]], dtype=np.float32)
    sims = Similarities(heading=moved, embedding=moved, words=moved)
    got = [lk.to_sections for lk in align_sections(older, newer, sims, AlignConfig(order_window=1))]
    assert got == [("4",), ("1",), ("2",)]


def test_the_map_names_both_codes_and_their_sets():
    older = ProvisionSet(code="OLD", source_sha256="a" * 64,
                         provisions=tuple(ProvisionText(section=s, title=t, text=x) for s, t, x in OLDER))
    newer = ProvisionSet(code="NEW", source_sha256="b" * 64,
                         provisions=tuple(ProvisionText(section=s, title=t, text=x) for s, t, x in NEWER))
    pmap = build_map(older, newer, None, AlignConfig(), from_set_sha256="c" * 64, to_set_sha256="d" * 64)
    assert isinstance(pmap, ProvisionMap) and (pmap.from_code, pmap.to_code) == ("OLD", "NEW")
    assert [lk.from_section for lk in pmap.links] == ["1", "2", "3", "4", "5"]
    assert pmap.link("4").to_sections[0] == "303" and pmap.link("99") is None


def test_the_parser_skips_the_arrangement_page_numbers_and_sub_sections():
    text = ("ARRANGEMENT OF SECTIONS\n1. Short title.\n2. Theft.\n"
            "1. Short title.—This Act may be called the Code.\n12\n"
            "2. Theft.—(1) Whoever steals.\n(2) Whoever commits theft shall be punished under\nsection 1.\n"
            "3. Public servant disobeying direction of law with intent to save person from punishment or\n"
            "property from forfeiture.—Whoever, being a public servant.\n"
            "4.—Misprinted heading.—Whoever prints.\n4A. Lettered.—Whoever letters.\n")
    found = sections_from_text(text)
    assert [s for s, _, _ in found] == ["1", "2", "3", "4", "4A"]
    assert found[2][1].endswith("punishment or property from forfeiture") and found[3][1] == "Misprinted heading"
    assert subsections(found[1][2]) == ["(1) Whoever steals.",
                                        "(2) Whoever commits theft shall be punished under section 1."]


def test_a_record_with_a_heading_and_no_text_is_kept():
    records = [{"Section": "304B", "section_title": "Dowry death", "section_desc": ""},
               {"Section": "305", "section_title": "", "section_desc": ""}]
    assert sections_from_records(records) == [("304B", "Dowry death", "")]


# A code whose sections share the boilerplate of a penal code: "Whoever ... shall be punished with imprisonment".
_BOILER = "shall be punished with imprisonment for a term and shall also be liable to fine"
OLDER_PENAL = [
    ("10", "Punishments", "The punishments to which offenders are liable are death, imprisonment and fine."),
    ("11", "Theft", f"Whoever dishonestly takes movable property commits theft and {_BOILER}."),
    ("12", "Punishment", f"Whoever is a thug {_BOILER}."),
    ("13", "Cheating", f"Whoever deceives any person and induces delivery of property {_BOILER}."),
    ("14", "Mischief", f"Whoever destroys property causing wrongful loss {_BOILER}."),
    ("15", "Punishment for rioting", f"Whoever is guilty of rioting {_BOILER}."),
]
NEWER_PENAL = [
    ("4", "Punishments", "The punishments to which offenders are liable are death, imprisonment, fine and community "
                         "service."),
    ("303", "Theft", f"Whoever dishonestly takes movable property commits theft and {_BOILER}."),
    ("318", "Cheating", f"Whoever deceives any person and induces delivery of property {_BOILER}."),
    ("324", "Mischief", f"Whoever destroys property causing wrongful loss {_BOILER}."),
    ("191", "Rioting", f"Whoever is guilty of rioting {_BOILER}."),
]


def test_a_section_sharing_only_boilerplate_with_its_best_candidate_has_no_successor():
    links = _links(OLDER_PENAL, NEWER_PENAL)
    thug = links["12"]
    # On score alone its nearest clears the bar (the heading matches, the text is the code's boilerplate) ...
    assert thug.nearest_score is not None and thug.nearest_score >= AlignConfig().no_successor_below
    # ... but nothing it says beyond the boilerplate ("thug") is in the newer code: no evidence, no successor.
    assert thug.to_sections == () and thug.reason == "no_evidence" and thug.evidence.shared == ()
    assert links["10"].to_sections == ("4",) and "offend" in links["10"].evidence.shared
    assert links["11"].to_sections == ("303",) and links["15"].to_sections == ("191",)
    # Without the evidence rule (every term counts as uncommon) the same section is matched on boilerplate.
    loose = _links(OLDER_PENAL, NEWER_PENAL, AlignConfig(common_term_share=1.0))
    assert loose["12"].to_sections != ()


def test_a_no_successor_below_the_bar_says_so():
    adultery = _links()["3"]
    assert adultery.reason == "below_bar"


def test_the_map_reads_the_newer_codes_commencement_from_its_text():
    from stages.provisions.parse import commencement_date

    footnoted = [("1", "Short title, commencement and application",
                  "(1) This Act may be called the Sanhita. (2) It shall come into force on such date1 as the Central "
                  "Government may, by notification in the Official Gazette, appoint."),
                 ("2", "Definitions", "(1) act denotes ... 1. 1st day of July, 2024, except the provision of ...")]
    assert commencement_date(footnoted) == "2024-07-01"
    assert commencement_date([("1", "Short title", "It shall come into force on the 15th day of March, 1999.")]) \
        == "1999-03-15"
    assert commencement_date([("1", "Short title", "This Act may be called the Code.")]) is None
    older = ProvisionSet(code="OLD", source_sha256="a" * 64,
                         provisions=tuple(ProvisionText(section=s, title=t, text=x) for s, t, x in OLDER))
    newer = ProvisionSet(code="NEW", source_sha256="b" * 64,
                         provisions=tuple(ProvisionText(section=s, title=t, text=x) for s, t, x in footnoted + NEWER))
    assert build_map(older, newer, None, AlignConfig()).to_commencement == "2024-07-01"
