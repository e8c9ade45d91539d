"""Reports of a run or a comparison, for the web and the command line
alike: the comparison tables (``tables``) and their number formats, the
paper exports (LaTeX and Markdown tables, ``summary.csv``, the Methods
paragraph) and the row CSV's safety. The web serves them as downloads
(``web/views/downloads.py``, ``web/views/compare.py``); ``flask --app app report`` and
``flask --app app compare`` write them (``cli/reports.py``)."""
