"""One release method on a Dask cluster: the one table from a method to the module that runs
it on a data set (``microagg recode | suppress | pram | topcode | mask | swap --engine dask``
and each step of ``microagg run --engine dask``).

Block MDAV: :mod:`~microagg.at_scale.anonymize`; local suppression:
:mod:`~microagg.at_scale.suppress`; top and bottom coding: :mod:`~microagg.at_scale.topcode`;
correlated and multiplicative noise: :mod:`~microagg.at_scale.mask`; PRAM:
:mod:`~microagg.at_scale.pram`; targeted record swapping: :mod:`~microagg.at_scale.swap`; a
method of records alone (global recoding): :mod:`~microagg.at_scale.per_record`. A
differentially private release goes through :mod:`~microagg.at_scale.dp`, whose report is
public and follows rules of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from microagg.at_scale.dataset import Dataset
from microagg.at_scale.storage import Location
from microagg.data.schema import Role, Schema
from microagg.errors import InputError, ParameterError
from microagg.release.methods import ReleaseMethod

__all__ = ["release_at_scale", "release_refusal"]


def release_refusal(method: ReleaseMethod) -> str | None:
    """Why ``method`` cannot be released by :func:`release_at_scale`, or ``None``.

    Parameters
    ----------
    method : ReleaseMethod
        A method with its parameters.

    Returns
    -------
    str or None
        The reason, said so that it can follow "dask cannot run METHOD: ".

    Examples
    --------
    >>> from microagg.release.methods import MDAV, VMDAV
    >>> release_refusal(MDAV(k=5)) is None
    True
    >>> release_refusal(VMDAV(k=5))
    'the cluster path runs block MDAV only'
    """
    from microagg.release.methods import Family

    if method.family is Family.DIFFERENTIAL_PRIVACY:
        return ("a differentially private release has its own path and public report: run "
                "`microagg dp --engine dask` on its input")
    return method.at_scale_refusal()


def release_at_scale(client: Any, method: ReleaseMethod, dataset: Dataset,
                     target: Path | Location, *, columns: Sequence[str] | None = None,
                     schema: Schema | None = None, seed: int | None = None,
                     block_size: int | None = None,
                     storage_options: Mapping[str, Any] | None = None,
                     progress: Callable[[int], None] | None = None,
                     refuse_unchanged: bool = True) -> Any:
    """Release ``dataset`` by ``method`` on ``client`` and write the Parquet data set
    ``target`` (module docstring: the module of each method).

    Parameters
    ----------
    client
        A ``distributed.Client``.
    method : ReleaseMethod
        A method :func:`release_refusal` accepts.
    dataset : Dataset
        The input's partitions.
    target : Path or Location
        The output data set, checked (:func:`~microagg.at_scale.dataset.check_dataset_output`).
    columns : sequence of str, optional
        The columns the method protects: the keys of a method for keys, the masked columns of
        block MDAV, topcode and a noise; default: the schema's quasi-identifiers (without a
        schema, each method's own default).
    schema : Schema, optional
        The declared attributes (a swap's household column is the schema's ``household``).
    seed : int, optional
        The seed of a randomized method (noise, PRAM, swapping); ``None`` draws fresh.
    block_size : int, optional
        The block size of block MDAV (default
        :data:`~microagg.partition.blocks.DEFAULT_BLOCK_SIZE`).
    storage_options : mapping, optional
        The storage options of a URL's file system.
    progress : callable, optional
        Called with the records written so far.
    refuse_unchanged : bool
        Refuse a masking (noise, top and bottom coding) that changes no value (default);
        False writes it and says so in a warning, as a recipe's step does (a step must not
        fail on some data only).

    Returns
    -------
    object
        The report of the module that ran it (each has ``to_dict``).

    Raises
    ------
    ParameterError
        For a method the cluster cannot run, naming why.
    """
    from microagg.release.families.masking import MaskingMethod
    from microagg.release.methods import (
        MDAV,
        InvariantPram,
        LocalSuppression,
        RecordSwap,
        TopBottomCoding,
    )

    refusal = release_refusal(method)
    if refusal:
        raise ParameterError("engine", f"dask cannot run {method.name}: {refusal}")
    chosen = list(columns) if columns else None
    if isinstance(method, MDAV):
        from microagg.at_scale.anonymize import block_microaggregate
        from microagg.partition.blocks import DEFAULT_BLOCK_SIZE

        return block_microaggregate(client, dataset, target, k=method.k, columns=chosen,
                                    schema=schema,
                                    block_size=block_size or DEFAULT_BLOCK_SIZE,
                                    progress=progress)
    if block_size is not None:
        raise ParameterError("block_size", "applies to block MDAV only")
    if isinstance(method, LocalSuppression):
        from microagg.at_scale.suppress import suppress_at_scale

        keys = chosen or (list(schema.quasi_identifiers) if schema is not None else [])
        return suppress_at_scale(client, dataset, target, method, keys, schema=schema,
                                 storage_options=storage_options, progress=progress)
    if isinstance(method, TopBottomCoding):
        from microagg.at_scale.topcode import topcode_at_scale

        return topcode_at_scale(client, dataset, target, method, columns=chosen,
                                schema=schema, storage_options=storage_options,
                                progress=progress, refuse_unchanged=refuse_unchanged)
    if isinstance(method, MaskingMethod):
        from microagg.at_scale.mask import mask_at_scale

        return mask_at_scale(client, dataset, target, method, columns=chosen, schema=schema,
                             seed=seed, storage_options=storage_options, progress=progress,
                             refuse_unchanged=refuse_unchanged)
    if isinstance(method, InvariantPram):
        from microagg.at_scale.pram import pram_at_scale

        return pram_at_scale(client, dataset, target, method, keys=chosen, schema=schema,
                             seed=seed, storage_options=storage_options, progress=progress)
    if isinstance(method, RecordSwap):
        from microagg.at_scale.swap import swap_at_scale

        households = [a.name for a in schema or () if a.role is Role.HOUSEHOLD]
        if len(households) != 1:
            raise InputError("targeted record swapping on the cluster needs the household "
                             "column: declare one attribute with role household in the "
                             "schema")
        return swap_at_scale(client, dataset, target, method=method, household=households[0],
                             rng=seed, progress=progress)
    from microagg.at_scale.per_record import per_record_at_scale

    return per_record_at_scale(client, dataset, target, method, schema=schema, keys=chosen,
                               storage_options=storage_options, progress=progress)
