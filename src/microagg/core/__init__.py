"""The shared machinery of every method: distances, aggregation, the noise mechanisms and the
privacy budget, the EMD of t-closeness, the verifiers, threads, the masking kernels and the
cross-moment sampler."""
