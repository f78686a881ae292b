"""Differential privacy as one unit: the mechanisms (:mod:`.mechanisms`) and their exact
samplers (:mod:`.samplers`), the ε ledger (:mod:`.budget`), and the building blocks the DP
methods compose: clipping, numeric and categorical statistics, cross moments (:mod:`.moments`,
:mod:`.eigen`), the cells read (:mod:`.cells`), the unit protected (:mod:`.unit`) and how a
release is written (:mod:`.publish`). The DP family's pipeline is
:mod:`microagg.release.families.dp`."""
