"""The read path: filters now; lanes, fusion, scoring and budgets with recall."""
