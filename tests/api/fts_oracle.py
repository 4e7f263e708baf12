"""Full-text data and pylance's answers for tests/api/test_fts.c.

The C test runs this with the venv's Python (pylance of the same Lance
release) and compares its own results with the printed ones.

    fts_oracle.py make URI
        writes a dataset {id: int64, text: utf8} of 600 rows in 4 fragments:
        deterministic sentences over a small vocabulary, so BM25 scores vary
    fts_oracle.py append URI
        appends 50 rows (one new, unindexed fragment) with the same generator
    fts_oracle.py search URI KIND QUERY [FAST]
        KIND: "plain" (full_text_query given as a string), "or" / "and"
        (MatchQuery on "text" with that operator), "fuzzy1" (MatchQuery on
        "text" with fuzziness 1), "phrase" (PhraseQuery on
        "text", slop 0); FAST "1" searches the indexed rows only
        (fast_search).  Prints one line per hit, best first: "<id> <score>"
"""

import random
import sys

import lance
import pyarrow as pa
from lance.query import FullTextOperator, MatchQuery, PhraseQuery
from oracle_hits import print_hits

WORDS = ("lance columnar format vector search index fast query data file "
         "arrow table row fragment score text phrase quick brown fox").split()


def rows(first, count):
    rng = random.Random(first * 7919 + count)
    ids, texts = [], []
    for i in range(first, first + count):
        n = rng.randint(3, 12)
        ids.append(i)
        texts.append(" ".join(rng.choice(WORDS) for _ in range(n)))
    return pa.table({"id": pa.array(ids, pa.int64()), "text": pa.array(texts, pa.utf8())})


def main(argv):
    command, uri = argv[1], argv[2]
    if command == "make":
        lance.write_dataset(rows(0, 600), uri, max_rows_per_file=150)
    elif command == "append":
        lance.write_dataset(rows(600, 50), uri, mode="append")
    elif command == "search":
        kind, text = argv[3], argv[4]
        fast = len(argv) > 5 and argv[5] == "1"
        if kind == "plain":
            query = text
        elif kind in ("or", "and"):
            operator = FullTextOperator.AND if kind == "and" else FullTextOperator.OR
            query = MatchQuery(text, "text", operator=operator)
        elif kind == "fuzzy1":
            query = MatchQuery(text, "text", fuzziness=1)
        elif kind == "phrase":
            query = PhraseQuery(text, "text")
        else:
            raise SystemExit(f"unknown kind {kind}")
        table = lance.dataset(uri).to_table(columns=["id", "_score"], full_text_query=query, fast_search=fast)
        print_hits(table, "_score")
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
