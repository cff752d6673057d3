"""decode_csv against TensorFlow 2.21: the same columns (values, dtypes, shapes) for the
quoting, default, na_value and select_cols cases the tutorials meet, and TF's errors for a
missing required field, a wrong field count, a bad number and bad quoting."""
import numpy as np
import pytest

import gpuaccel as gt
import tensorflow as tf  # the reference
from gpuaccel import _io_records as gio  # gpuaccel.io's decode_csv (re-exported there)
from gpuaccel import errors as gt_errors


def _defaults(api):
    """int32, float32 with a default, int64, a required float32 and a string column."""
    int64 = api.constant(np.array([-1], np.int64)) if api is tf else np.array([-1], np.int64)
    return [[0], [0.5], int64, api.constant([], dtype=api.float32), [""]]


def _assert_columns(ours, theirs):
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        want = want.numpy()
        if isinstance(want, bytes) or want.dtype == object:  # strings stay on the host
            np.testing.assert_array_equal(np.asarray(got, dtype=object), want)
            assert isinstance(got, bytes) == isinstance(want, bytes)
            continue
        assert got.dtype.name == want.dtype.name and tuple(got.shape) == want.shape
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("records", [
    ["1,2.5,30000000000,4,cat", "-7,,5, 1e3 ,\"a,\"\"quoted\"\" b\"", "0,nan,0,-inf,"],
    "3,1.25,9,2,single",
    [["1,2,3,4,a"], ["5,6,7,8,b"]],
])
def test_decode_csv_matches_tensorflow(records):
    _assert_columns(gio.decode_csv(records, _defaults(gt)), tf.io.decode_csv(records,
                                                                              _defaults(tf)))


def test_decode_csv_options_match_tensorflow():
    for kwargs, records, defaults in [
            ({"field_delim": ";"}, ["1;x", "2;y"], [[0], [""]]),
            ({"na_value": "NA"}, ["1,NA,3"], [[0], [7.0], [0]]),
            ({"select_cols": [0, 2]}, ["1,skipped,3"], [[0], [0.0]]),
            ({"use_quote_delim": False}, ['1,"x"'], [[0], [""]])]:
        _assert_columns(gio.decode_csv(records, defaults, **kwargs),
                        tf.io.decode_csv(records, defaults, **kwargs))


@pytest.mark.parametrize("records,defaults,message", [
    (["1,,x"], "required", "Field 1 is required but missing in record 0!"),
    (["1,2"], [[0], [0.0], [""]], "Expect 3 fields but have 2 in record 0"),
    (["2,a"], [[0], [0]], "Field 1 in record 0 is not a valid int32: a"),
    (["99999999999"], [[0]], "Field 0 in record 0 is not a valid int32: 99999999999"),
    (["1.5"], [[0]], "Field 0 in record 0 is not a valid int32: 1.5"),
    (["q"], [[0.0]], "Field 0 in record 0 is not a valid float: q"),
    (['"ab'], [[""]], "Quoted field has to end with quote followed by delim or end"),
    (['"a"b'], [[""]], "Quote inside a string has to be escaped by another quote"),
    (["1"], [[0, 1]], "There should only be 1 default per field but field 0 has 2"),
])
def test_decode_csv_errors_are_tensorflows(records, defaults, message):
    def of(api):
        return [[0], api.constant([], dtype=api.float32), [""]] if defaults == "required" \
            else defaults
    with pytest.raises(tf.errors.InvalidArgumentError, match=message.replace("(", "\\(")):
        tf.io.decode_csv(records, of(tf))
    with pytest.raises(gt_errors.InvalidArgumentError, match=message.replace("(", "\\(")):
        gio.decode_csv(records, of(gt))


def test_decode_csv_select_cols_errors_are_tensorflows():
    for select_cols, message in [([2, 0], "select_cols is not strictly increasing."),
                                 ([-1, 0], "select_cols contains negative values."),
                                 ([0], "Length of select_cols and record_defaults do not match.")]:
        with pytest.raises(ValueError, match=message):
            tf.io.decode_csv(["1,2,3"], [[0], [0]], select_cols=select_cols)
        with pytest.raises(ValueError, match=message):
            gio.decode_csv(["1,2,3"], [[0], [0]], select_cols=select_cols)
