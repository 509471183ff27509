"""The typed results of the commands that write no gate report, one module per command
group: each holds a frozen dataclass per result (its data, never rendered text) and the
renderers it registers per format with :func:`tools.report.register`.

A command body builds its result and hands it to :func:`tools.cli.common.show`, which writes
it through :func:`tools.report.render`, the output path of gate reports too. These modules
load when their command runs (``tools.cli.common.ResultType`` names them), so that start-up
pays for none of them.
"""
