"""Mutation-attribution experiments (SPEC §6): plans, arms in worktrees or in place, proofs of
application and restore, receipts for many machines. See docs/mutation.md."""
