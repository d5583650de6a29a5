"""Stage 3, what each run and each call goes through: the onion of wrap hooks, the model call,
``wrap_agent``, the caller's input and resume checks.
"""
