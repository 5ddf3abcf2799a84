"""``citebound eval``: grounding, refusal, hallucination, injection and retrieval measured on real data.

``metrics`` holds every metric once; ``suites/`` turn data into outcomes; ``runner`` runs them and writes
``report.json`` and ``report.html``; ``floors`` checks a report against ``floors.toml``.
"""
