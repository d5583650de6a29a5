"""Stage 2, ``build_graph``: the plan as a ``StateGraph`` (its only user), node by node."""
