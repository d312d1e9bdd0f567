"""Library errors arrive as AnnbenchError subclasses, with the CLI's messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import annbench


def test_hierarchy():
    for cls in (
        annbench.DatasetError,
        annbench.ConfigError,
        annbench.ServerError,
        annbench.BackendError,
        annbench.ResultsError,
        annbench.IoError,
    ):
        assert issubclass(cls, annbench.AnnbenchError)
        assert cls.__module__ == "annbench"
    assert issubclass(annbench.IoError, OSError)


def test_missing_file_is_dataset_error_naming_it(tmp_path):
    missing = tmp_path / "nope.hdf5"
    with pytest.raises(annbench.DatasetError, match="nope.hdf5"):
        annbench.load_dataset(missing)


def test_not_hdf5_is_dataset_error(tmp_path):
    bad = tmp_path / "bad.hdf5"
    bad.write_text("not an hdf5 file")
    with pytest.raises(annbench.DatasetError, match="bad.hdf5"):
        annbench.load_dataset(bad)


def test_unknown_name_suggests_close_names(tmp_path):
    with pytest.raises(annbench.DatasetError, match="glove-25-angular"):
        annbench.load_dataset("glove-25-angualr", data_dir=tmp_path)


def test_unsupported_metric_and_dimension_mismatch():
    a = np.zeros((10, 4), dtype=np.float32)
    with pytest.raises(annbench.DatasetError, match="jaccard"):
        annbench.compute_groundtruth(a, a, "jaccard")
    with pytest.raises(annbench.DatasetError, match="dimension"):
        annbench.compute_groundtruth(a, np.zeros((2, 5), dtype=np.float32), "euclidean")


def test_message_is_the_cli_message(tmp_path):
    missing = str(tmp_path / "absent.hdf5")
    with pytest.raises(annbench.DatasetError) as caught:
        annbench.load_dataset(missing)
    script = Path(sys.executable).parent / "annbench"
    done = subprocess.run(
        [str(script), "datasets", "info", missing], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == f"error: {caught.value}"


def test_bad_server_url_is_config_error_without_password(tmp_path):
    annbench.get_dataset("sift-5k-128-euclidean", tmp_path / "data")
    with pytest.raises(annbench.ConfigError) as caught:
        annbench.run(
            "sift-5k-128-euclidean",
            "mariadb",
            mariadb="http://user:hunter2@127.0.0.1:1/x",
            data_dir=tmp_path / "data",
            results=tmp_path / "results",
            progress=False,
        )
    assert "hunter2" not in str(caught.value)


def test_unreachable_server_is_server_error_without_password(tmp_path):
    annbench.get_dataset("sift-5k-128-euclidean", tmp_path / "data")
    with pytest.raises(annbench.ServerError) as caught:
        annbench.run(
            "sift-5k-128-euclidean",
            "pgvector",
            postgres="postgres://user:hunter2@127.0.0.1:1/annbench",
            build={"M": [8], "ef_construction": [32]},
            query={"ef_search": [10]},
            data_dir=tmp_path / "data",
            results=tmp_path / "results",
            progress=False,
        )
    assert "127.0.0.1:1" in str(caught.value) and "hunter2" not in str(caught.value)


def test_table_without_results_is_results_error(tmp_path):
    assert annbench.results("nothing-here", results=tmp_path).empty
    with pytest.raises(annbench.ResultsError):
        annbench.table("nothing-here", results=tmp_path)


def test_a_results_directory_that_does_not_exist_is_an_error(tmp_path):
    """A typo in results= must not read as an empty store."""
    wrong = tmp_path / "wrong"
    for call in (annbench.results, annbench.table, annbench.build_table, annbench.clients_table):
        with pytest.raises(annbench.ResultsError, match=r"results='.*wrong' does not exist"):
            call("nothing-here", results=wrong)
    with pytest.raises(annbench.ResultsError, match="results="):
        annbench.compare("a", "b", "nothing-here", results=wrong)
    (tmp_path / "file").write_text("")
    with pytest.raises(annbench.ResultsError, match="is not a directory"):
        annbench.results("nothing-here", results=tmp_path / "file")


@pytest.mark.parametrize("grid", [8, 8.5, {8, 16}, [8, 16]])
def test_a_grid_of_the_wrong_type_is_a_config_error_naming_the_argument(tmp_path, grid):
    with pytest.raises(annbench.ConfigError, match=r"build=.*give a dict"):
        annbench.run(
            "sift-5k-128-euclidean", "mariadb", build=grid, results=tmp_path, progress=False
        )


def test_plot_to_unknown_format_is_config_error(tmp_path):
    import pandas as pd

    df = pd.DataFrame({"algorithm": ["a"], "recall": [0.9], "qps": [10.0]})
    with pytest.raises(annbench.ConfigError):
        annbench.plot.qps_recall(df, tmp_path / "x.gif")


def test_malformed_server_urls_never_show_the_password(tmp_path):
    secret = "Pw7xQsecret"
    for url in (
        f"postgres//bob:{secret}@127.0.0.1:5432/db",
        f"mysql:/bob:{secret}@127.0.0.1:3306/db",
        f"bob:{secret}@127.0.0.1/db",
        f"host=127.0.0.1 password={secret} dbname=db",
        f"mysql://bob:12#{secret}@127.0.0.1/db",
        # An empty user (Redis's usual form) before a password holding URL syntax.
        "mysql://:Pw7x#Qsecret@127.0.0.1/db",
        "postgres://:Pw7x?Qsecret@127.0.0.1/db",
    ):
        with pytest.raises(annbench.ConfigError) as err:
            annbench.run(
                "sift-5k-128-euclidean",
                ["mariadb", "pgvector"],
                mariadb=url,
                postgres=url,
                results=tmp_path / "r",
                data_dir=tmp_path / "d",
                progress=False,
            )
        assert "secret" not in str(err.value) and "Pw7x" not in str(err.value), str(err.value)


def test_keep_going_runs_the_rest_then_raises_the_failures(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    common = dict(results=tmp_path / "r", data_dir=tmp_path / "d", runs=1, progress=False)
    with pytest.raises(annbench.BackendError, match=r"1 part\(s\) of the sweep failed.*mariadb"):
        annbench.run(
            "sift-5k-128-euclidean",
            ["mariadb", "exact"],
            mariadb=f"mysql://u:p@127.0.0.1:{port}/db",
            keep_going=True,
            **common,
        )
    # The exact point was measured and stored despite the failure before it.
    stored = annbench.results("sift-5k-128-euclidean", results=common["results"])
    assert list(stored["algorithm"]) == ["exact"]


def test_errors_name_python_arguments_not_cli_flags(tmp_path):
    """The library's messages name CLI flags; raised in Python they name the keywords."""
    with pytest.raises(annbench.ConfigError) as same:
        annbench.compare("a", "a", "nothing-here", results=tmp_path)
    assert "base= and me= are both 'a'" in str(same.value), same.value
    with pytest.raises(annbench.ConfigError) as runs:
        annbench.run(
            "sift-5k-128-euclidean",
            "mariadb",
            runs=0,
            results=tmp_path / "r",
            data_dir=tmp_path / "data",
            progress=False,
        )
    assert "runs=0" in str(runs.value) and "--runs" not in str(runs.value), runs.value
    with pytest.raises(annbench.ConfigError) as unknown:
        annbench.run(
            "sift-5k-128-euclidean",
            "mariadb",
            build={"nope": [1]},
            results=tmp_path / "r",
            data_dir=tmp_path / "data",
            progress=False,
        )
    assert "build=" in str(unknown.value) and "--build" not in str(unknown.value), unknown.value
