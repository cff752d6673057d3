"""decode_csv against TensorFlow 2.21: the same columns (values, dtypes, shapes) for the
quoting, default, na_value and select_cols cases the tutorials meet, and TF's errors for a
missing required field, a wrong field count, a bad number and bad quoting."""
import numpy as np
import pytest

import gpuaccel as gt
import tensorflow as tf  # the reference
gio = gt.io
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


CSV_TEXT = ('a,b,c,name\n1,2.5,3,x\n4,,6,"y,""z"""\n7,8.5,99999999999,w\r\n10,1e3,9,v\n'
            '-2,0.25,5,u\n')


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV_TEXT)
    return str(path)


def _assert_rows(ours, theirs):
    ours, theirs = list(ours), list(theirs.as_numpy_iterator())
    assert len(ours) == len(theirs)
    for got_row, want_row in zip(ours, theirs):
        for got, want in zip(got_row, want_row):
            if isinstance(want, bytes):
                assert got == want
            else:
                assert got.dtype.name == want.dtype.name and got.shape == ()
                assert got.numpy() == want


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_csv_dataset_matches_tensorflow(tmp_path, csv_file, compression):
    path = csv_file
    if compression:
        import gzip
        path = str(tmp_path / "data.csv.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(CSV_TEXT.encode()))
    for kwargs in [{}, {"select_cols": [0, 3]}, {"exclude_cols": [1, 2]}]:
        n = 2 if kwargs else 4

        def defaults(api):
            full = [api.int32, [0.0], np.array([-1], np.int64), [""]]
            return full if n == 4 else [full[0], full[3]]
        _assert_rows(gt.data.experimental.CsvDataset(path, defaults(gt), compression, header=True,
                                                     **kwargs),
                     tf.data.experimental.CsvDataset(path, defaults(tf), compression, header=True,
                                                     **kwargs))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Field 1 is required but missing in record!"):
        list(tf.data.experimental.CsvDataset(path, [tf.int32, tf.float32, tf.int64, tf.string],
                                             compression, header=True))
    with pytest.raises(gt_errors.InvalidArgumentError,
                       match="Field 1 is required but missing in record!"):
        list(gt.data.experimental.CsvDataset(path, [gt.int32, gt.float32, gt.int64, bytes],
                                             compression, header=True))


def _assert_batches(ours, theirs):
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        if isinstance(want, tuple):
            _assert_batches(list(got), list(want))
            continue
        if isinstance(want, dict):
            assert list(got) == list(want)
            _assert_batches(list(got.values()), list(want.values()))
            continue
        if want.dtype == object:
            np.testing.assert_array_equal(got, want)
            continue
        # TF infers float64 for floats beyond float32; gpuaccel has no float64
        assert got.dtype.name == {"float64": "float32"}.get(want.dtype.name, want.dtype.name)
        np.testing.assert_array_equal(got.numpy(), want.astype(got.numpy().dtype))


def test_make_csv_dataset_matches_tensorflow(csv_file):
    for kwargs in [{"label_name": "c"}, {"select_columns": ["c", "a"]}, {}]:
        ours = list(gt.data.experimental.make_csv_dataset(csv_file, batch_size=2, shuffle=False,
                                                          num_epochs=1, **kwargs))
        theirs = list(tf.data.experimental.make_csv_dataset(csv_file, batch_size=2,
                                                            shuffle=False, num_epochs=1,
                                                            **kwargs).as_numpy_iterator())
        assert len(ours) == 3  # 5 rows: the last batch is partial with num_epochs=1
        _assert_batches(ours, theirs)
    # num_epochs=None repeats forever and drops the partial batch, as in TF
    ours = list(gt.data.experimental.make_csv_dataset(csv_file, 2, shuffle=False).take(4))
    theirs = list(tf.data.experimental.make_csv_dataset(csv_file, 2, shuffle=False).take(4)
                  .as_numpy_iterator())
    _assert_batches(ours, theirs)
    for api in (gt, tf):
        with pytest.raises(ValueError, match="`label_name` provided must be one of the columns"):
            api.data.experimental.make_csv_dataset(csv_file, 2, label_name="zz")


def test_make_csv_dataset_shuffle_is_seeded_and_complete(csv_file):
    def epoch(seed):
        batches = gt.data.experimental.make_csv_dataset(csv_file, 5, num_epochs=1,
                                                        shuffle_seed=seed)
        return [int(v) for batch in batches for v in batch["a"].numpy()]
    assert epoch(4) == epoch(4)
    assert sorted(epoch(4)) == [-2, 1, 4, 7, 10]


def test_text_line_dataset_and_the_decode_csv_pipeline_match_tensorflow(tmp_path, csv_file):
    other = tmp_path / "other.csv"
    other.write_bytes(b"x\r\ny\n\nlast")  # CRLF, an empty line, no final newline
    files = [csv_file, str(other)]
    for reads in (None, 2):
        assert list(gt.data.TextLineDataset(files, num_parallel_reads=reads)) == list(
            tf.data.TextLineDataset(files, num_parallel_reads=reads).as_numpy_iterator())

    def pipeline(api, io):
        def decode(line):
            return tuple(io.decode_csv(line, [[0], [0.0], np.array([0], np.int64)],
                                       select_cols=[0, 1, 2]))
        return api.data.TextLineDataset(csv_file).skip(1).map(decode).batch(2)
    ours = list(pipeline(gt, gio))
    theirs = list(pipeline(tf, tf.io).as_numpy_iterator())
    assert len(ours) == len(theirs) == 3
    for got, want in zip(ours, theirs):
        for got_column, want_column in zip(got, want):
            assert got_column.dtype.name == want_column.dtype.name
            np.testing.assert_array_equal(got_column.numpy(), want_column)
    with pytest.raises(gt_errors.NotFoundError, match="No such file or directory"):
        list(gt.data.TextLineDataset(str(tmp_path / "missing.csv")))
