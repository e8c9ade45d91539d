"""One module per metric suite; each exports ``SUITE`` (see
:mod:`metrics.suite` and ``CONTRIBUTING.md``). The registry finds them here."""
