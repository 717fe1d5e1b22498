"""Calibration / system identification: fit description fields to measured tip data.

>>> from softrod.sysid import calibrate, read_measurements        # doctest: +SKIP
>>> data = read_measurements("tip_data.csv", n_tendons=9)           # doctest: +SKIP
>>> res = calibrate("tdcr3.yaml", data, fit=["youngs_modulus"])     # doctest: +SKIP
>>> res.values()["youngs_modulus"], res.rmse_after                  # doctest: +SKIP

See docs/sysid.md.
"""

# Dotted field paths live in softrod.description; re-exported here, where they started.
from softrod.description import (
    get_field,
    normalize_path,
    numeric_fields,
    resolve_fields,
    set_path,
    with_fields,
)
from softrod.sysid._data import Measurements, read_measurements
from softrod.sysid._fit import (
    CalibrationResult,
    FitParameter,
    FittedParameter,
    calibrate,
    fit_parameters,
    predict_tips,
    rmse,
)
from softrod.sysid._models import ModelState, MujocoTipModel, StaticTipModel, TipModel

__all__ = [
    "CalibrationResult",
    "FitParameter",
    "FittedParameter",
    "Measurements",
    "ModelState",
    "MujocoTipModel",
    "StaticTipModel",
    "TipModel",
    "calibrate",
    "fit_parameters",
    "get_field",
    "normalize_path",
    "numeric_fields",
    "predict_tips",
    "read_measurements",
    "resolve_fields",
    "rmse",
    "set_path",
    "with_fields",
]
