"""The result tables the benchmark scripts print: Markdown for BENCHMARKS.md, or aligned columns for a terminal."""


def print_table(header, rows, markdown):
    """Prints `rows` (sequences of cells, each shown by str(), so callers format their numbers) under `header`."""
    cells = [[str(cell) for cell in row] for row in rows]
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in cells:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max([len(name)] + [len(row[index]) for row in cells]) for index, name in enumerate(header)]
        for row in [header] + cells:
            print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
