"""How the search oracles print pylance's hits (fts_oracle.py, multivector_oracle.py).

One line per hit, in the table's order: "<id> <value>", the value (a score or
a distance) to 9 significant digits, as the C tests parse it.
"""


def print_hits(table, column):
    for row in table.to_pylist():
        print(f"{row['id']} {format(row[column], '.9g')}")
