"""One module per suite, each with ``run(ctx, answered) -> SuiteOutput`` (see ``evaluation.suite``)."""
