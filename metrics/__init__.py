"""Pure metric code: no Flask, Celery, requests or evaluator imports.

The judge reaches metrics by injection, so every metric is testable with a fake.
"""
