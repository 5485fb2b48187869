"""compare's numbers and pages: the matrix of cells and what they add up to (``matrix``),
pass@k over samples with its interval (``pass_stats``), and the report people read
(``report``: compare.md and index.html, with the SVG ``charts``)."""
