"""Ratchets: counts that may only go down (SPEC §4.5).

``pattern`` ratchets count lines that match bucket regexes in the files their globs select
(C/C++ comments and literals optionally blanked first); ``markdown`` ratchets count fixed
measures of one markdown file. The gate (:mod:`tools.gates.ratchet`) and ``tools ratchet
tighten`` share the counting engine here and the baseline format of :mod:`.baseline`.
"""
