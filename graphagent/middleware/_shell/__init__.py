"""The parts of ``ShellToolMiddleware``: execution policies, the shell session and its process
(started under a reaper that ends everything it started), and bounded output."""
