"""The private parts of ``BudgetMiddleware``: its records, and what model calls cost."""
