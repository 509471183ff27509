"""Evidence that vouches for itself (SPEC §11): ledger records re-observed and signed.

Split by job: :mod:`~tools.replay.gate` and :mod:`~tools.replay.attested` declare the rules
(the ``evidence`` and ``attestations`` gates); :mod:`~tools.replay.select` picks the records a
range adds; :mod:`~tools.replay.replay` re-runs them with the mutation runner and
:mod:`~tools.replay.compare` sets what it saw beside what they claim;
:mod:`~tools.replay.statement` (in-toto Statement v1), :mod:`~tools.replay.dsse` (the DSSE
envelope and its pre-authentication encoding) and :mod:`~tools.replay.sshsig` (``ssh-keygen
-Y``: no cryptography of our own) make and check :mod:`~tools.replay.attestations`.
"""
