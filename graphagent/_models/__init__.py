"""Model support behind ``graphagent.models`` and ``graphagent.structured_output``: configurable
models, the provider table, structured-output schemas and their binding.
"""
