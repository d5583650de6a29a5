"""The parts of ``HumanInTheLoopMiddleware``: the records of a review (``types``), the checks of
its settings (``settings``) and of a reviewer's answer (``answers``), what batched decisions do
to the state (``outcome``), an edit carried out (``edits``) and the per-call mode's response
schema and decisions taken (``per_call``). The middleware itself, and every public name, are in
``graphagent.middleware.human_in_the_loop``."""
