"""Pure lifecycle policies, functions of values tested without a database: consolidation
plans and topics (consolidate, organize), reflection's prompts and answers (reflect),
episode summaries and the curated pack (summary, pack), what is due for review
(review), when a memory has earned a wider scope (promote), taking a forgotten
memory's text out of its copies (scrub), and the wake ritual's judging (wake,
wake_scores). The one impure module is llm, the adapter that asks a configured model
and checks its answer against a schema."""
