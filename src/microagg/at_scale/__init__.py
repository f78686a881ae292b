"""Releases on a Dask cluster, for data that does not fit one process.

A data set is a folder or glob of Parquet (or CSV) files, read partition by partition
(:mod:`~microagg.at_scale.dataset`); the releases run as Dask task graphs on a
``dask.distributed`` client (:mod:`~microagg.at_scale.cluster`): a LocalCluster on one machine or
a real cluster by scheduler address. The algorithms keep the cost about linear in the records:

* :mod:`~microagg.at_scale.anonymize`: k-anonymity by block MDAV (median cuts, exact MDAV in
  each block);
* :mod:`~microagg.at_scale.dp`: the sort-bound DP releases (individual ranking, 001; single-
  reference insensitive microaggregation, 000) on a distributed sample sort;
* :mod:`~microagg.at_scale.evaluate`: utility by map-reduce and record linkage on a sample.

Dask is an optional dependency (``pip install "microagg[scale]"``).
"""
