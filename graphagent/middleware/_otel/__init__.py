"""The parts of ``OtelTracingMiddleware``: the attribute names of the GenAI semantic conventions
(``semconv``) and the content recorded on spans (``content``). The middleware itself is in
``graphagent.middleware.otel``."""
