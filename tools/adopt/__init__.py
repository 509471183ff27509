"""``tools init --adopt``: the conventions a repository already follows, and the state in which
today's tree is green and the next violation is not (SPEC §9.2)."""
