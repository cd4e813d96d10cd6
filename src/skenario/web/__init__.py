"""The web dashboard (`skenario serve`): a thin front end over the run store and the run service layer.

    app       the FastAPI application: pages, their assets, the API mounted
    api       the JSON API, /api/...: what any client reads and runs
    views     what each page shows, as JSON data read from a run
    sweeps    a sweep's table and Pareto front
    jobs      runs started from the editor, each in a worker process
    worker    that process: one run, plugins refused, progress as JSON lines

FastAPI and uvicorn come with the `web` extra (`pip install 'skenario[web]'`).
"""
