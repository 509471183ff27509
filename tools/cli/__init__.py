"""The command-line shell: parse, build a Context, run gates, render, exit."""
