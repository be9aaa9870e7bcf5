"""The load, chaos and soak suite: scenarios run against a real daemon (``python -m bench``).

| module | one job |
|---|---|
| ``sizes.py`` | the sizes: defaults, ``--smoke``, the flags and their checks |
| ``context.py`` | what a scenario gets: the run, sizes, progress bars, the provider's log |
| ``harness.py`` | start the fake provider and a daemon in temporary dirs; stop, reap, clean up |
| ``fake.py`` | the fake provider process: fixed replies keyed on prompt markers, a log |
| ``providerlog.py`` | follow that log: streams opened and closed, by tag |
| ``driver.py`` | WebSocket pool, per-session event feeds, one turn, outcome tally |
| ``workload.py`` | the sessions workload (N sessions x K turns), alone or as load |
| ``procfs.py``, ``sampler.py`` | ``/proc`` readings and the daemon's tree, sampled |
| ``sdk.py`` | the bare-SDK baseline: the recorded requests replayed with ``anthropic`` |
| ``figures.py`` | percentiles and growth after warm-up |
| ``transcripts.py`` | every transcript in the database checked with the store's rules |
| ``sessions.py``, ``fanout.py``, ``cancelstorm.py`` | scenarios |
| ``steer.py``, ``soak.py``, ``chaos.py`` | scenarios |
| ``run.py`` | run scenarios one daemon each, add the shutdown invariants |
| ``summary.py``, ``html.py``, ``svg.py`` | terminal table, HTML report, its charts |
| ``progress.py`` | progress bars on stderr |
"""

SCENARIOS = ("sessions", "fanout", "cancel", "steer", "soak", "chaos")
"""Scenario names, in the order ``all`` runs them."""
