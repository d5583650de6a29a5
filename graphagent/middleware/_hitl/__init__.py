"""The parts of ``HumanInTheLoopMiddleware``: the records of a review, the checks of its settings
and of a reviewer's answer, and the per-call mode's response schema, edits and decisions taken.
The middleware itself, and every public name, are in ``graphagent.middleware.human_in_the_loop``."""
