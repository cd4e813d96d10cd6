"""`skenario validate`: the simulator against the analytic solver on standard models.

- `network.py`: a queueing network (skenario.queueing) run as a DES on the kernel and the model's CPUs;
- `models.py`: the standard models, each with its analytic answers and run lengths;
- `replications.py`: independent replications of a model, each value beside its analytic one;
- `intervals.py`: the confidence intervals those comparisons use.
"""
