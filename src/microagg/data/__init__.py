"""Data in and out: schemas, tables, taxonomies, files, reference data sets."""
