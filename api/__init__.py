"""citebound's HTTP API (FastAPI): the edge next to the CLI. See ``api.app``."""
