"""Writes ``llm_style_answers.json``: LLM-style answers (numbered, bulleted, wrapped, "Yes, ...", quoted,
markdown) over real chunk texts, each faithful answer paired with variants that change one detail
(entity, number, date, negation, key term). The answers below were written by hand before any tuning;
the chunk texts are copied from the shared data (IPC sections from ``indian-acts-json/ipc.json``, SQuAD 2.0
dev paragraphs, which are Wikipedia, CC BY-SA 4.0) so the committed corpus needs nothing at test time.

    python tests/data/build_llm_style_answers.py   # rewrites the JSON next to this file
"""

from __future__ import annotations

import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("CITEBOUND_SHARED_DATA", HERE.parents[2] / "shared" / "data"))  # set it from a worktree


def chunk_texts() -> dict[str, str]:
    ipc = {str(s["Section"]): str(s["section_desc"]) for s in json.loads((DATA / "indian-acts-json/ipc.json").read_text())}
    squad = {a["title"]: a["paragraphs"][0]["context"]
             for a in json.loads((DATA / "squad2-dev-subset/dev-v2.0.json").read_text())["data"]}
    out = {f"IPC_{n}_0": ipc[n] for n in ("34", "302", "326", "354", "379", "420", "447", "498A")}
    out["IPC_376_0"] = ipc["376"][:900]
    out.update({"Normans_0": squad["Normans"], "Huguenot_0": squad["Huguenot"], "OIL_0": squad["1973_oil_crisis"],
                "EU_0": squad["European_Union_law"], "Scotland_0": squad["Scottish_Parliament"],
                "Warsaw_0": squad["Warsaw"]})
    return out


# (question, faithful answer, [(changed detail kind, changed answer), ...])
ITEMS: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("What is the punishment for theft?",
     "According to the IPC:\n\n1. Theft is punished with imprisonment of either description for up to three years [IPC_379_0].\n"
     "2. The court may instead impose a fine, or both [IPC_379_0].",
     [("number", "According to the IPC:\n\n1. Theft is punished with imprisonment of either description for up to five years [IPC_379_0].\n"
                 "2. The court may instead impose a fine, or both [IPC_379_0]."),
      ("negation", "According to the IPC:\n\n1. Theft is punished with imprisonment of either description for up to three years [IPC_379_0].\n"
                   "2. The court may not impose a fine [IPC_379_0].")]),
    ("Is cheating that induces delivery of property punishable with imprisonment?",
     "Yes — cheating that dishonestly induces delivery of property is punishable with imprisonment of either description "
     "for a term which may extend to seven years, and the offender is also liable to fine [IPC_420_0].",
     [("number", "Yes — cheating that dishonestly induces delivery of property is punishable with imprisonment of either description "
                 "for a term which may extend to ten years, and the offender is also liable to fine [IPC_420_0]."),
      ("key_term", "Yes — cheating that dishonestly induces delivery of property is punishable with imprisonment of either description "
                   "for a term which may extend to seven years, and the offender is also liable to whipping [IPC_420_0].")]),
    ("What is the punishment for murder?",
     "- Murder is punishable with **death** or **imprisonment for life** [IPC_302_0].\n- The offender is also liable to fine [IPC_302_0].",
     [("number", "- Murder is punishable with **death** or **imprisonment for ten years** [IPC_302_0].\n- The offender is also liable to fine [IPC_302_0]."),
      ("negation", "- Murder is punishable with **death** or **imprisonment for life** [IPC_302_0].\n- The offender is not liable to fine [IPC_302_0].")]),
    ("What is the punishment for criminal trespass?",
     "Criminal trespass is punished with imprisonment of either description\nfor a term which may extend to three months, or with fine which may\n"
     "extend to five hundred rupees, or with both [IPC_447_0].",
     [("number", "Criminal trespass is punished with imprisonment of either description\nfor a term which may extend to three years, or with fine which may\n"
                 "extend to five hundred rupees, or with both [IPC_447_0]."),
      ("number", "Criminal trespass is punished with imprisonment of either description\nfor a term which may extend to three months, or with fine which may\n"
                 "extend to five thousand rupees, or with both [IPC_447_0].")]),
    ("What is the minimum sentence for assaulting a woman to outrage her modesty?",
     "## Assault on a woman\n\n**Short answer:** the term of imprisonment shall not be less than one year [IPC_354_0].\n\n"
     "* It may extend to five years [IPC_354_0].\n* The offender is also liable to fine [IPC_354_0].",
     [("number", "## Assault on a woman\n\n**Short answer:** the term of imprisonment shall not be less than two years [IPC_354_0].\n\n"
                 "* It may extend to five years [IPC_354_0].\n* The offender is also liable to fine [IPC_354_0]."),
      ("number", "## Assault on a woman\n\n**Short answer:** the term of imprisonment shall not be less than one year [IPC_354_0].\n\n"
                 "* It may extend to seven years [IPC_354_0].\n* The offender is also liable to fine [IPC_354_0].")]),
    ("Is causing grievous hurt with a corrosive substance punishable with life imprisonment?",
     "Yes, voluntarily causing grievous hurt by means of a corrosive substance can be punished with imprisonment for life, "
     "or with imprisonment of either description for up to ten years, and a fine [IPC_326_0].",
     [("number", "Yes, voluntarily causing grievous hurt by means of a corrosive substance can be punished with imprisonment for life, "
                 "or with imprisonment of either description for up to fourteen years, and a fine [IPC_326_0]."),
      ("negation", "No — voluntarily causing grievous hurt by means of a corrosive substance is not punishable with imprisonment for life [IPC_326_0].")]),
    ("Who led the Norse raiders who gave their name to Normandy?",
     "The Norse raiders were led by **Rollo**, who agreed to swear fealty to King Charles III of West Francia [Normans_0].",
     [("entity", "The Norse raiders were led by **Ragnar**, who agreed to swear fealty to King Charles III of West Francia [Normans_0]."),
      ("entity", "The Norse raiders were led by **Rollo**, who agreed to swear fealty to King Louis III of West Francia [Normans_0]."),
      ("entity", "The Norse raiders were led by **Rollo**, who agreed to swear fealty to King Charles IV of West Francia [Normans_0].")]),
    ("Where did the Norse raiders come from?",
     "> They were descended from Norse raiders and pirates from Denmark, Iceland and Norway [Normans_0].",
     [("entity", "> They were descended from Norse raiders and pirates from Denmark, Iceland and Sweden [Normans_0].")]),
    ("When did the Normans give their name to Normandy?",
     "In the 10th and 11th centuries, the Normans gave their name to Normandy, a region in France [Normans_0].",
     [("date", "In the 9th and 10th centuries, the Normans gave their name to Normandy, a region in France [Normans_0]."),
      ("entity", "In the 10th and 11th centuries, the Normans gave their name to Normandy, a region in Belgium [Normans_0].")]),
    ("When were the Wars of Religion fought?",
     "The Wars of Religion were fought intermittently from 1562 to 1598 [Huguenot_0]. They ended with the\nEdict of Nantes [Huguenot_0].",
     [("date", "The Wars of Religion were fought intermittently from 1562 to 1589 [Huguenot_0]. They ended with the\nEdict of Nantes [Huguenot_0]."),
      ("entity", "The Wars of Religion were fought intermittently from 1562 to 1598 [Huguenot_0]. They ended with the\nEdict of Paris [Huguenot_0].")]),
    ("How many Huguenots were there by 1562?",
     "**Huguenot numbers** peaked near an estimated *two million* by 1562, concentrated mainly in the southern and central parts of France [Huguenot_0].",
     [("number", "**Huguenot numbers** peaked near an estimated *three million* by 1562, concentrated mainly in the southern and central parts of France [Huguenot_0]."),
      ("entity", "**Huguenot numbers** peaked near an estimated *two million* by 1562, concentrated mainly in the southern and central parts of Spain [Huguenot_0].")]),
    ("When did the 1973 oil crisis begin?",
     "The crisis began in October 1973, when the members of OAPEC proclaimed an oil embargo [OIL_0].",
     [("date", "The crisis began in November 1973, when the members of OAPEC proclaimed an oil embargo [OIL_0]."),
      ("entity", "The crisis began in October 1973, when the members of NATO proclaimed an oil embargo [OIL_0].")]),
    ("How much had the price of oil risen by the end of the embargo?",
     "1. The embargo ended in March 1974 [OIL_0].\n2. By then the price of oil had risen from US$3 per barrel to nearly $12 globally [OIL_0].",
     [("number", "1. The embargo ended in March 1974 [OIL_0].\n2. By then the price of oil had risen from US$3 per barrel to nearly $15 globally [OIL_0]."),
      ("date", "1. The embargo ended in May 1974 [OIL_0].\n2. By then the price of oil had risen from US$3 per barrel to nearly $12 globally [OIL_0].")]),
    ("What are the sources of European Union law?",
     "European Union law has three sources:\n- primary law,\n- secondary law, and\n- supplementary law [EU_0].",
     [("number", "European Union law has four sources:\n- primary law,\n- secondary law, and\n- supplementary law [EU_0]."),
      ("content_word", "European Union law has three sources:\n- primary law,\n- secondary law, and\n- customary law [EU_0].")]),
    ("What is the legislature of the European Union composed of?",
     "The legislature of the European Union is principally composed of the European Parliament and the Council of the European Union [EU_0].",
     [("entity", "The legislature of the European Union is principally composed of the European Parliament and the European Commission [EU_0].")]),
    ("What does the IPC say about rape by a police officer?",
     "Whoever \nbeing a police officer, commits rape,\nwithin the limits of the police station to which such police officer is appointed; or\n"
     "in the premises of any station house [IPC_376_0].",
     [("content_word", "Whoever \nbeing a military officer, commits rape,\nwithin the limits of the police station to which such police officer is appointed; or\n"
                       "in the premises of any station house [IPC_376_0]."),
      ("number", "Rape is punished with rigorous imprisonment for a term which shall not be less than seven years [IPC_376_0].")]),
    ("Is cruelty by a husband's relative an offence?",
     "Yes.\n\nA husband or a relative of the husband who subjects a woman to cruelty shall be punished with imprisonment for a term "
     "which may extend to three years, and is also liable to fine [IPC_498A_0].",
     [("number", "Yes.\n\nA husband or a relative of the husband who subjects a woman to cruelty shall be punished with imprisonment for a term "
                 "which may extend to seven years, and is also liable to fine [IPC_498A_0]."),
      ("negation", "No.\n\nA relative of the husband who subjects a woman to cruelty is not punished under this section [IPC_498A_0].")]),
    ("Can theft be punished with a fine alone?", "Yes [IPC_379_0].", []),
    ("Can murder be punished with death?",
     "Yes — murder can be punished with death [IPC_302_0].",
     [("key_term", "Yes — murder can be punished with whipping [IPC_302_0].")]),
    ("Is each person acting in furtherance of a common intention liable for the act?",
     "Each of several persons who do a criminal act in furtherance of the common intention of all is liable for that act "
     "in the same manner as if it were done by him alone [IPC_34_0].",
     [("negation", "Each of several persons who do a criminal act in furtherance of the common intention of all is not liable for that act "
                   "in the same manner as if it were done by him alone [IPC_34_0].")]),
    ("When did the Scottish Parliament first meet?",
     "The first meeting of the new Parliament took place on **12 May 1999** [Scotland_0]. It was convened by the Scotland Act 1998\n"
     "after a referendum in 1997 [Scotland_0].",
     [("date", "The first meeting of the new Parliament took place on **12 May 2000** [Scotland_0]. It was convened by the Scotland Act 1998\n"
               "after a referendum in 1997 [Scotland_0]."),
      ("date", "The first meeting of the new Parliament took place on **12 June 1999** [Scotland_0]. It was convened by the Scotland Act 1998\n"
               "after a referendum in 1997 [Scotland_0]."),
      ("entity", "The first meeting of the new Parliament took place on **12 May 1999** [Scotland_0]. It was convened by the Westminster Act 1998\n"
                 "after a referendum in 1997 [Scotland_0].")]),
    ("Where is Warsaw?",
     "Key facts:\n\n* Warsaw is the capital and largest city of Poland [Warsaw_0].\n* It stands on the Vistula River,\n  in east-central Poland [Warsaw_0].\n"
     "* It is roughly 260 kilometres from the Baltic Sea [Warsaw_0].",
     [("entity", "Key facts:\n\n* Warsaw is the capital and largest city of Poland [Warsaw_0].\n* It stands on the Oder River,\n  in east-central Poland [Warsaw_0].\n"
                 "* It is roughly 260 kilometres from the Baltic Sea [Warsaw_0]."),
      ("number", "Key facts:\n\n* Warsaw is the capital and largest city of Poland [Warsaw_0].\n* It stands on the Vistula River,\n  in east-central Poland [Warsaw_0].\n"
                 "* It is roughly 360 kilometres from the Baltic Sea [Warsaw_0]."),
      ("entity", "Key facts:\n\n* Warsaw is the capital and largest city of Germany [Warsaw_0].\n* It stands on the Vistula River,\n  in east-central Poland [Warsaw_0].\n"
                 "* It is roughly 260 kilometres from the Baltic Sea [Warsaw_0].")]),
    ("Who voted for devolution in 1997?",
     "\"The Scottish electorate voted for devolution\" in a referendum in 1997 [Scotland_0].",
     [("entity", "\"The Welsh electorate voted for devolution\" in a referendum in 1997 [Scotland_0].")]),
]


def main() -> None:
    texts = chunk_texts()
    records = []
    for n, (question, faithful, changed) in enumerate(ITEMS):
        cited = sorted({cid for cid in texts if f"[{cid}]" in faithful})
        records.append({"id": f"llm{n:02d}", "question": question, "chunks": {c: texts[c] for c in cited},
                        "faithful": faithful, "changed": [{"kind": k, "answer": a} for k, a in changed]})
    (HERE / "llm_style_answers.json").write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(records)} items, {sum(len(r['changed']) for r in records)} changed variants")


if __name__ == "__main__":
    main()
