"""What two or more built-ins share: wrap hooks written once as cores (``cores``), retries
(``retry``), an option naming the agent's tools (``tool_option``), the context's size
(``context_size``), a model's decisions (``decisions``) and replaying held-back stream chunks
(``replay``). A part of one built-in alone lives in that built-in's own folder (``_pii/``,
``_hitl/``, ...)."""
