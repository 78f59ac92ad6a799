"""The results store on a real SQLite file (docs/history.md): records come back as they went in,
two processes writing at once lose nothing, reindex can run again, and a store that cannot be
written costs a run one line and nothing else."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import configargparse  # type: ignore[import-untyped]
import orjson
import pytest

from llmload.cli import main as llmload
from llmload.config.args import add_options, to_config
from llmload.errors import HistoryError
from llmload.export.results import ResultsDir
from llmload.export.rundata import read_summary
from llmload.history import store as store_module
from llmload.history.schema import VERSION
from llmload.history.store import Store
from llmload.results.runrecord import record_of
from llmload.results.summary import to_json
from llmload.run.finish import record

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "results"

# One writer: builds records from a fixture, says it is ready, waits for the word, then writes
# each in a transaction of its own, as that many runs ending would.
WRITER = """
import sys, time
from dataclasses import replace
from pathlib import Path
from llmload.export.rundata import read_summary
from llmload.history.store import Store
from llmload.results.runrecord import record_of
path, tag, count, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
base = record_of(read_summary(Path(sys.argv[5])), "/results")
records = [replace(base, run_id=f"{tag}-{i}") for i in range(count)]
print("ready", flush=True)
while not go.exists():
    time.sleep(0.005)
for r in records:
    with Store.open(path) as store:
        store.put(r, 0.0)
print("done", flush=True)
"""


def test_a_record_comes_back_as_it_went_in_and_a_second_put_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "history.sqlite"  # its folders are made
    one = record_of(read_summary(FIXTURES / "engine-a"), "/results/engine-a", {"image": "x"})
    with Store.open(path) as store:
        store.put(one, 1.0)
        store.put(replace(one, results_dir="/moved"), 2.0)
        assert store.runs() == [replace(one, results_dir="/moved")]
        later = replace(one, started_at="2025-06-02T10:00:00+0000", started_s=one.started_s + 86400)  # type: ignore[operator]
        store.put(later, 3.0)  # the same --run-id another day: a run of its own
        assert store.runs() == [later, replace(one, results_dir="/moved")]
        assert store.runs(one.key.hash[:4]) == store.runs() and store.runs("zzz") == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == VERSION
    assert db.execute("SELECT count(*) FROM stages").fetchone()[0] == 2 * len(one.stages)  # none left over


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path, go, count = tmp_path / "history.sqlite", tmp_path / "go", 40
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), tag, str(count), str(go), str(FIXTURES / "engine-b")],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    for w in writers:  # both imported and ready: they create the store and write together
        assert w.stdout is not None and w.stdout.readline() == "ready\n"
    go.touch()
    for w in writers:
        out, err = w.communicate(timeout=120)
        assert (w.returncode, out) == (0, "done\n"), err
    with Store.open(path) as store:
        ids = sorted(r.run_id for r in store.runs())
    assert ids == sorted(f"{tag}-{i}" for tag in ("a", "b") for i in range(count))


def test_reindex_records_results_directories_and_can_run_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = Path(shutil.copytree(FIXTURES, tmp_path / "results"))
    (results / "not-a-run").mkdir()
    (results / "broken").mkdir()
    (results / "broken" / "summary.json").write_text("{")
    path = tmp_path / "history.sqlite"
    argv = ["history", "reindex", str(results), "--history", str(path), "--label", "hardware=h100"]
    for _ in range(2):
        assert llmload(argv) == 2  # the broken one is skipped, and said
        out, err = capsys.readouterr()
        assert out.strip() == f"llmload history: 3 run(s) recorded in {path}, 1 skipped"
        assert err.count("\n") == 1 and "skipped" in err and "broken" in err
    with Store.open(path) as store:
        runs = store.runs()
    assert sorted(r.run_id for r in runs) == [
        "20250601-100000-aaaa",
        "20250601-110000-bbbb",
        "20250601-120000-cccc",
    ]
    assert {r.key.hardware for r in runs} == {"h100"} and {r.results_dir for r in runs} == {
        str((results / name).resolve()) for name in ("engine-a", "engine-b", "engine-c")
    }


def test_the_table_and_a_trend_from_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history.sqlite"
    assert llmload(["history", "reindex", str(FIXTURES), "--history", str(path)]) == 0
    capsys.readouterr()
    assert llmload(["history", "--history", str(path)]) == 0
    table = capsys.readouterr().out
    key = next(line.split()[1].rstrip(":") for line in table.splitlines() if line.startswith("key "))
    assert "3 run(s) of 1 key(s)" in table and "20250601-100000-aaaa" in table
    assert (
        llmload(["history", key[:6], "--metric", "ttft_p99_ms", "--level", "128", "--history", str(path)])
        == 0
    )
    trend = capsys.readouterr().out
    assert "ttft_p99_ms at level 128, oldest first" in trend and trend.count("2025-06-01") == 3


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["zzz"], "KEY='zzz': no key starts with 'zzz'"),
        (["--level", "7"], "--level='7': the key's runs measured levels 1, 8, 32, 128"),
        (["--metric", "peak_tok_per_s", "--level", "8"], "peak_tok_per_s is the run's, at no level"),
    ],
)
def test_a_wrong_key_or_level_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    path = tmp_path / "history.sqlite"
    llmload(["history", "reindex", str(FIXTURES / "engine-a"), "--history", str(path)])
    capsys.readouterr()
    assert llmload(["history", *argv, "--history", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and err.startswith("llmload history: ")


def test_reading_creates_no_store_and_a_folder_is_no_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert llmload(["history", "--history", str(tmp_path / "none.sqlite")]) == 0
    assert "no runs recorded" in capsys.readouterr().out and not (tmp_path / "none.sqlite").exists()
    assert llmload(["history", "--history", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err
        == f"llmload history: {tmp_path} is not a file: give --history the store's path\n"
    )


def test_a_store_of_a_newer_llmload_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {VERSION + 1}")
    with pytest.raises(HistoryError, match=r"written by a newer llmload .* upgrade llmload"):
        Store.open(path)


def test_a_locked_store_waits_then_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "history.sqlite"
    Store.open(path).__exit__(None, None, None)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer that never finishes
    monkeypatch.setattr(store_module, "BUSY_S", 0.2)
    one = record_of(read_summary(FIXTURES / "engine-a"), "/r")
    with (
        pytest.raises(HistoryError, match=r"still locked by another writer after 0\.2 s"),
        Store.open(path) as store,
    ):
        store.put(one, 0.0)
    holder.execute("ROLLBACK")


def run_config(*argv: str) -> object:
    parser = configargparse.ArgumentParser(prog="locust")
    add_options(parser)
    parser.add_argument("--host", default="http://127.0.0.1:9")
    return to_config(parser.parse_args(["--tokenize", "off", *argv]))


def test_a_run_that_cannot_be_recorded_says_so_in_one_line_and_keeps_everything_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = read_summary(FIXTURES / "engine-a")
    results = ResultsDir(str(tmp_path / "results"), "run")
    results.write_json("summary.json", to_json(summary))
    before = (results.path / "summary.json").read_bytes()
    record(run_config("--history", str(tmp_path)), results, summary)  # type: ignore[arg-type]  # a folder: no store
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"llmload: history: not recorded ({tmp_path}: ")
    assert f"llmload history reindex {results.path}" in err
    assert (results.path / "summary.json").read_bytes() == before
    record(run_config("--history", str(tmp_path / "h.sqlite")), results, summary)  # type: ignore[arg-type]
    record(run_config("--no-history", "--history", str(tmp_path / "off.sqlite")), results, summary)  # type: ignore[arg-type]
    assert capsys.readouterr().err == "" and not (tmp_path / "off.sqlite").exists()
    with Store.open(tmp_path / "h.sqlite") as store:
        assert [r.results_dir for r in store.runs()] == [str(results.path.resolve())]
    assert orjson.loads(before)["run"]["id"] == "20250601-100000-aaaa"


def test_pins_and_waivers_name_their_run_and_outlive_its_reindex(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    one = record_of(read_summary(FIXTURES / "engine-a"), "/results/engine-a")
    two = replace(one, run_id="two")
    with Store.open(path) as store:
        store.put(one, 1.0)
        store.put(two, 1.0)
        store.pin("main", one, 5.0)
        store.put(replace(one, results_dir="/moved"), 6.0)  # reindexed: a new row, the same run
        assert store.pins() == [store_module.Pin("main", one.run_id, one.started_at, 5.0)]
        store.pin("main", two, 7.0)  # a pin of that name moves
        store.pin("release", one, 8.0)
        assert [(p.name, p.run_id) for p in store.pins()] == [("main", "two"), ("release", one.run_id)]
        waiver = store_module.Waiver(
            "two", two.started_at, "the new scheduler trades tok/s for TTFT", "ci", 9.0
        )
        store.waive(waiver)
        store.waive(replace(waiver, reason="accepted again", accepted_s=10.0))  # replaces it
        assert store.waivers() == [replace(waiver, reason="accepted again", accepted_s=10.0)]
