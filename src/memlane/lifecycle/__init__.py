"""Pure lifecycle policies: consolidation plans, episode summaries, the curated pack and
the wake ritual's judging. Functions of values, tested without a database."""
