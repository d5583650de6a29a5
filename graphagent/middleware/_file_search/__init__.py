"""The parts of ``FilesystemFileSearchMiddleware``: the walk below its root, opening nothing
outside it, and the patterns it matches."""
