"""Shared records and mechanisms: what every stage and every built-in may import.

Nothing here imports a stage (``_plan``, ``_graph``, ``_run``, ``_models``) or ``graphagent.agent``.
"""
