"""The IPC aligned to the BNS from the real texts, scored on both halves of the check set read from both texts.

The dev half (59 sections, issue 32) was written before the aligner and used to build it; the held half (41
sections, issue 38) was written before the evidence rule and never used to tune it, and is scored here by counts
only. Measured with the evidence rule (a pair must share a term the IPC does not use commonly): dev 59 of 59 best
successors exact and 4 of 4 "no successor" reported (IPC 311, which shares only boilerplate with BNS 4, included);
held 39 of 41 exact (95%) and 6 of 6 "no successor" reported. The tests hold those levels, so none can regress.
"""

from __future__ import annotations

import pytest

from contracts import ArtifactStore
from evaluation.provisions_check import HELD_CHECK_SET, load_check_set, score_map
from flows.provisions_flow import build_provision_map, stored_map

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def built(shared_data, tmp_path_factory):  # noqa: ANN001, ANN201
    root = str(tmp_path_factory.mktemp("provisions"))
    ref, pmap = build_provision_map(
        root, "IPC", "BNS", from_path=str(shared_data / "indian-acts-json" / "ipc.json"),
        to_path=str(shared_data / "statute-pdfs" / "Bhartiya_Nyay_Sanhita_BNS.pdf"))
    return root, ref, pmap


def test_the_map_meets_the_dev_half(built):
    _, _, pmap = built
    score = score_map(pmap, load_check_set())
    assert (score.n, score.no_successor) == (59, 4)
    assert score.exact == score.n, score.errors  # measured 59 of 59
    assert score.no_successor_reported == score.no_successor, score.errors  # measured 4 of 4
    assert {"378", "379"} <= {lk.from_section for lk in pmap.links if lk.to_sections[:1] == ("303",)}
    for none in ("377", "497", "310", "311"):
        link = pmap.link(none)
        assert link.to_sections == () and link.nearest and link.nearest_score is not None
    thug = pmap.link("311")  # its nearest clears the score bar; it shares nothing but boilerplate with it
    assert thug.reason == "no_evidence" and thug.nearest == "4" and thug.nearest_score >= pmap.config.no_successor_below
    assert pmap.to_commencement == "2024-07-01"  # read from the BNS text's commencement footnote


def test_the_map_meets_the_held_half(built):
    _, _, pmap = built
    score = score_map(pmap, load_check_set(HELD_CHECK_SET))
    assert score.n >= 30 and score.no_successor >= 5
    # Measured 39 of 41 (95%) and 6 of 6; the errors are not printed (held lines stay unquoted).
    assert score.exact >= 39 and score.exact_rate >= 0.90, f"{score.exact}/{score.n} exact"
    assert score.no_successor_reported == score.no_successor, f"{score.no_successor_reported}/{score.no_successor}"


def test_the_map_covers_every_section_and_building_it_again_is_cached(built, shared_data):
    root, ref, pmap = built
    assert len(pmap.links) == 575 and pmap.link("420").to_sections[0] == "318"
    again, _ = build_provision_map(
        root, "IPC", "BNS", from_path=str(shared_data / "indian-acts-json" / "ipc.json"),
        to_path=str(shared_data / "statute-pdfs" / "Bhartiya_Nyay_Sanhita_BNS.pdf"))
    assert again == ref
    last = max(ArtifactStore(root).list_runs(), key=lambda r: r.started_at)
    assert last.flow == "provisions" and last.status == "completed"
    assert [s.stage for s in last.steps if s.cached] == ["provisions", "provisions", "align_provisions"]
    stored, older, newer = stored_map(root, "IPC", "BNS")
    assert stored == pmap and older.code == "IPC" and newer.code == "BNS" and len(newer.provisions) == 358
