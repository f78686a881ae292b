"""The release families' pipelines: k-anonymity (:mod:`.kanonymity`), t-closeness
(:mod:`.tcloseness`), masking (:mod:`.masking`), the methods for categorical keys
(:mod:`.keys`) and differential privacy (:mod:`.dp`). Each holds its family's base class:
the release around the method's own step (:mod:`microagg.release.methods`)."""
