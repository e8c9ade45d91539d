"""Batch mode: a run's judge requests through the provider's Batch API
(``steps``), the batch files it writes and reads (``batch_files``) and the
judge a chunk of a run uses, online or gathering (``run_judge``)."""
