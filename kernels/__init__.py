"""This repository's own reference kernels (torch), the subject its goldens gate.

Every op whose result depends on where it rounds names that choice as a variant
(``variant=...``), so a golden can say which rounding polarity it pins down:

- :mod:`kernels.activation`: ``silu_and_mul`` / ``gelu_and_mul`` (``upstream``, ``f32_once``,
  ``narrow_act``);
- :mod:`kernels.norm`: ``rms_norm`` / ``fused_add_rms_norm`` (``upstream``, ``f32_once``);
- :mod:`kernels.sampling`: ``logprobs`` and top-k/top-p (``stock``, ``split``).
"""

from kernels.registry import check_variant, variants, variants_of

__all__ = ["check_variant", "variants", "variants_of"]
