"""What watches a run as it goes: the recorder of time series, the summary and its digest, the results timeline.

It sits below the scenario layer (a Simulation owns a Recorder) and above the model it watches;
what reads a finished run (RunData, the store, analysis, plots, reports) is `skenario.results`.
"""
