#!/usr/bin/env python3
"""Where the development evidence a pack loses was: retrieval or packing (never holdout).

    .venv/bin/python bench/where_lost.py [--sets npm,cmake,pg] [--lean] [--cases]

For every answerable development case of the docs sets (`tune_dev.py`'s in-process engines,
budget 1,400), each evidence quote is looked for in the ranked chunks of a plain search
(BM25 + path boost, no MMR, the best 400): the rank of the first chunk that holds it
(compared on letters and digits, `eval_docs_qa.loose`), and whether the pack kept it.
Per set, the quotes by rank bucket, kept / lost:

- lost with a rank within 20: the chunk was among the candidates a pack compacts, and
  packing dropped the quote (compaction's scores, the budget);
- lost beyond 20 or not found: retrieval did not bring the chunk (a quote that spans two
  chunks is "not found" too).

``--cases`` lists each lost quote with its question, rank and chunk. A diagnostic, not a
benchmark: it reads development splits only, so it can be run as often as needed.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ragweb_path  # noqa: E402

ragweb_path.use_src()

import eval_docs_qa as ed  # noqa: E402
import tune_dev as td  # noqa: E402

BUCKETS = ((10, "1-10"), (20, "11-20"), (80, "21-80"), (400, "81-400"))
DEPTH = 400


def bucket(rank: int | None) -> str:
    if rank is None:
        return "not found"
    return next(name for top, name in BUCKETS if rank < top)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(td.DOC_SETS + td.HTML_SETS),
                    help="docs sets, comma-separated (default: all but mixed)")
    ap.add_argument("--lean", action="store_true", help="score lean packs")
    ap.add_argument("--cases", action="store_true", help="list every lost quote")
    args = ap.parse_args()
    order = [name for _, name in BUCKETS] + ["not found"]
    for name in args.sets.split(","):
        if name not in ed.SETS:
            ap.error(f"unknown set {name!r}")
        eng, cases = td.doc_engine(name)
        results, _ = ed.run(eng, cases, ["--lean"] if args.lean else [], td.BUDGET, None)
        counts: Counter = Counter()
        for c in cases:
            if not c["answerable"]:
                continue
            packed = ed.loose(" ".join(results[c["id"]]["seen"]))
            hits = eng.search(c["question"], top_k=DEPTH, mmr=False)
            texts = [ed.loose(h.text) for h in hits]
            for e in c["evidence"]:
                quote = ed.loose(e["quote"])
                rank = next((i for i, t in enumerate(texts) if quote in t), None)
                kept = quote in packed
                counts[bucket(rank), kept] += 1
                if args.cases and not kept:
                    where = f"{hits[rank].path}:{hits[rank].start_line}" if rank is not None else "-"
                    print(f"  {name} {c['id']}: rank {'-' if rank is None else rank + 1} {where}\n"
                          f"      Q: {c['question'][:110]}\n      E: {e['quote'][:110]}")
        total = sum(counts.values())
        row = " | ".join(f"{b} {counts[b, True]}/{counts[b, False]}" for b in order)
        lost = sum(v for (b, k), v in counts.items() if not k)
        in_pool = counts["1-10", False] + counts["11-20", False]
        print(f"{name:<11} {total} quotes, {lost} lost ({in_pool} within rank 20) | kept/lost by rank: {row}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
