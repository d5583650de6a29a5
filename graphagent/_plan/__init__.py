"""Stage 1, ``compile_plan``: discover hooks, validate everything, order it, lay out the routes.

Pure data: nothing here imports ``_graph`` or ``_run``, or touches ``StateGraph``.
"""
