"""Finished runs read back: RunData, the run store (SQLite), analysis (pandas), plots (matplotlib) and reports (plotly).

What watches a run while it goes (the recorder and the summary) is `skenario.recording`.
"""
