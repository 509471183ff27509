"""The numerics gates: goldens (``golden``), the greedy-divergence grid-tie gate
(``grid-tie``) and the top-p kept-count gate (``topp-count``).

These modules are the only part of ``tools`` that imports torch and numpy, and only the
numerics commands import them (inside the command bodies), so ``tools --help`` and every
protocol gate stay torch-free.
"""
