"""Shared records and mechanisms: what every stage and every built-in may import.

Nothing here imports a stage (``_plan``, ``_build``, ``_run``, ``_models``) or ``graphagent.agent``.
"""
