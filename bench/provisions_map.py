"""Time and peak memory of building the IPC -> BNS provision map, against embedding both codes' sections raw.

    python bench/provisions_map.py [--shared ../shared/data]   (default $CITEBOUND_SHARED_DATA, else ../shared/data)

Three measurements in one process, in this order: (1) the raw embedding of every section of both codes
(the embedder alone, the floor of any approach that embeds them); (2) the map built through the flow on a fresh
store (parse, embed, align, store); (3) the same build again (cached). Peak memory is the process's resident
peak (ru_maxrss) after each; the map's own similarity matrices are reported by size.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=os.environ.get("CITEBOUND_SHARED_DATA",
                                                       str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    args = ap.parse_args()
    ipc = Path(args.shared) / "indian-acts-json" / "ipc.json"
    bns = Path(args.shared) / "statute-pdfs" / "Bhartiya_Nyay_Sanhita_BNS.pdf"

    from flows.backends import get_embedder
    from flows.provisions_flow import build_provision_map
    from stages.provisions.align import embedding_text
    from stages.provisions.parse import sections_from_bytes

    older = sections_from_bytes(ipc.read_bytes(), "application/json")
    newer = sections_from_bytes(bns.read_bytes(), "application/pdf")
    embedder = get_embedder("minilm")
    embedder.embed(["warm up"])
    out: dict[str, object] = {"sections": [len(older), len(newer)], "embedder": embedder.model_name,
                              "cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()}
    t0 = time.perf_counter()
    embedder.embed([embedding_text(s) for s in older])
    embedder.embed([embedding_text(s) for s in newer])
    out["raw_embedding_s"] = round(time.perf_counter() - t0, 2)
    out["peak_mib_after_raw"] = round(_peak_mib(), 1)
    with tempfile.TemporaryDirectory() as root:
        t0 = time.perf_counter()
        _, pmap = build_provision_map(root, "IPC", "BNS", from_path=str(ipc), to_path=str(bns))
        out["map_build_s"] = round(time.perf_counter() - t0, 2)
        out["peak_mib_after_map"] = round(_peak_mib(), 1)
        t0 = time.perf_counter()
        build_provision_map(root, "IPC", "BNS", from_path=str(ipc), to_path=str(bns))
        out["map_cached_s"] = round(time.perf_counter() - t0, 2)
    out["similarity_matrices_mib"] = round(3 * len(older) * len(newer) * 4 / 2**20, 1)
    out["links"] = len(pmap.links)
    out["no_successor"] = sum(1 for lk in pmap.links if not lk.to_sections)
    out["load_avg_at_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
