"""The parts of ``PIIMiddleware``: the detectors (``detectors``), what found data becomes
(``redaction``: the redact, mask and hash strategies) and the stream transformer rewriting a v3
run's events (``stream``). The middleware itself, and every public name, are in
``graphagent.middleware.pii``."""
