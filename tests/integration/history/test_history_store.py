"""The results store on a real SQLite file and on a real PostgreSQL server (docs/history.md), the
same tests for both (the ``where`` fixture): records come back as they went in, two processes
writing at once (new runs and the same runs) lose nothing and duplicate nothing, reindex can run
again, a URL's password is never shown, and a store that cannot be written costs a run one line
and nothing else."""

from __future__ import annotations

import shutil
import socket
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import configargparse  # type: ignore[import-untyped]
import orjson
import pytest

from llmload.cli import main as llmload
from llmload.config.args import add_options, to_config
from llmload.errors import HistoryError
from llmload.export.results import ResultsDir
from llmload.export.rundata import read_summary
from llmload.history import store as store_module
from llmload.history.location import store_location
from llmload.history.open import open_store
from llmload.history.schema import VERSION
from llmload.history.store import Store
from llmload.results.runrecord import record_of
from llmload.results.summary import to_json
from llmload.run.finish import record
from tests.support.postgres import PASSWORD

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "results"

# One writer: builds records from a fixture, then at each word of the test (a file appearing):
# opens the store (both writers at once: a new store is created once); writes runs every writer
# writes, in that one store, as a reindex of the same results on two machines at once would (the
# two replace the same run at the same moment); then writes runs of its own, each in a store
# opened for it, as that many runs ending would. Every run is a transaction of its own.
WRITER = """
import sys, time
from dataclasses import replace
from pathlib import Path
from llmload.export.rundata import read_summary
from llmload.history.location import store_location
from llmload.history.open import open_store
from llmload.results.runrecord import record_of
where, tag, count, words = store_location(sys.argv[1], {}), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
base = record_of(read_summary(Path(sys.argv[5])), "/results")
mine = [replace(base, run_id=f"{tag}-{i}") for i in range(count)]
shared = [replace(base, run_id=f"shared-{i}", results_dir=f"/results/{tag}") for i in range(count)]

def wait(said, word):
    print(said, flush=True)
    while not (words / word).exists():
        time.sleep(0.002)

wait("ready", "open")
with open_store(where) as store:
    wait("opened", "write")
    for r in shared:
        store.put(r, 0.0)
for r in mine:
    with open_store(where) as store:
        store.put(r, 0.0)
print("done", flush=True)
"""


def sql(where: str, query: str) -> list[tuple[Any, ...]]:
    """A statement on the store behind the store's back."""
    if where.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(where, autocommit=True) as pg:
            cursor = pg.execute(query)
            return cursor.fetchall() if cursor.description else []
    db = sqlite3.connect(where, isolation_level=None)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def version_of(where: str) -> int:
    if where.startswith("postgresql://"):
        return int(sql(where, "SELECT version FROM llmload_version")[0][0])
    return int(sql(where, "PRAGMA user_version")[0][0])


def shown(where: str) -> str:
    """The store as every message names it: a URL's password masked."""
    return str(store_location(where, {}))


def test_a_record_comes_back_as_it_went_in_and_a_second_put_replaces_it(where: str) -> None:
    one = record_of(read_summary(FIXTURES / "engine-a"), "/results/engine-a", {"image": "x", "ci": "1"})
    with open_store(store_location(where, {})) as store:  # a SQLite file's folders are made
        store.put(one, 1.0)
        store.put(replace(one, results_dir="/moved"), 2.0)
        assert store.runs() == [replace(one, results_dir="/moved")]
        later = replace(one, started_at="2025-06-02T10:00:00+0000", started_s=one.started_s + 86400)  # type: ignore[operator]
        store.put(later, 3.0)  # the same --run-id another day: a run of its own
        assert store.runs() == [later, replace(one, results_dir="/moved")]
        assert store.runs(one.key.hash[:4]) == store.runs() and store.runs("zzz") == []
    assert version_of(where) == VERSION
    assert sql(where, "SELECT count(*) FROM stages") == [(2 * len(one.stages),)]  # none left over
    assert sql(where, "SELECT count(*) FROM labels") == [(4,)]
    if not where.startswith("postgresql://"):
        assert sql(where, "PRAGMA journal_mode") == [("wal",)]


def test_two_processes_writing_at_once_lose_nothing(where: str, tmp_path: Path) -> None:
    count = 40
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, where, tag, str(count), str(tmp_path), str(FIXTURES / "engine-b")],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    try:
        for said, word in (("ready", "open"), ("opened", "write")):
            for w in writers:  # both at the same step: they go on together
                assert w.stdout is not None
                assert w.stdout.readline() == f"{said}\n", w.communicate(timeout=60)[1]
            (tmp_path / word).touch()
        for w in writers:
            out, err = w.communicate(timeout=120)
            assert (w.returncode, out) == (0, "done\n"), err
    finally:  # a failed step leaves no writer behind for the next test to trip over
        for w in writers:
            w.kill()
            w.communicate()
    with open_store(store_location(where, {})) as store:
        runs = store.runs()
    ids = sorted(r.run_id for r in runs)  # each run once: the shared ones neither lost nor doubled
    assert ids == sorted(f"{tag}-{i}" for tag in ("a", "b", "shared") for i in range(count))
    assert all(len(r.stages) == len(runs[0].stages) > 0 for r in runs)
    assert sql(where, "SELECT count(*) FROM stages") == [(3 * count * len(runs[0].stages),)]
    assert {r.results_dir for r in runs if r.run_id.startswith("shared")} <= {"/results/a", "/results/b"}


def test_reindex_records_results_directories_and_can_run_again(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = Path(shutil.copytree(FIXTURES, tmp_path / "results"))
    (results / "not-a-run").mkdir()
    (results / "broken").mkdir()
    (results / "broken" / "summary.json").write_text("{")
    argv = ["history", "reindex", str(results), "--history", where, "--label", "hardware=h100"]
    for _ in range(2):
        assert llmload(argv) == 2  # the broken one is skipped, and said
        out, err = capsys.readouterr()
        assert out.strip() == f"llmload history: 3 run(s) recorded in {shown(where)}, 1 skipped"
        assert err.count("\n") == 1 and "skipped" in err and "broken" in err
        assert PASSWORD not in out + err
    with open_store(store_location(where, {})) as store:
        runs = store.runs()
    assert sorted(r.run_id for r in runs) == [
        "20250601-100000-aaaa",
        "20250601-110000-bbbb",
        "20250601-120000-cccc",
    ]
    assert {r.key.hardware for r in runs} == {"h100"} and {r.results_dir for r in runs} == {
        str((results / name).resolve()) for name in ("engine-a", "engine-b", "engine-c")
    }


def test_the_table_and_a_trend_from_the_command(where: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert llmload(["history", "reindex", str(FIXTURES), "--history", where]) == 0
    capsys.readouterr()
    assert llmload(["history", "--history", where]) == 0
    table = capsys.readouterr().out
    assert shown(where) in table and PASSWORD not in table
    key = next(line.split()[1].rstrip(":") for line in table.splitlines() if line.startswith("key "))
    assert "3 run(s) of 1 key(s)" in table and "20250601-100000-aaaa" in table
    assert llmload(["history", key[:6], "--metric", "ttft_p99_ms", "--level", "128", "--history", where]) == 0
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
    where: str, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    llmload(["history", "reindex", str(FIXTURES / "engine-a"), "--history", where])
    capsys.readouterr()
    assert llmload(["history", *argv, "--history", where]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and err.startswith("llmload history: ")
    assert PASSWORD not in err


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


def test_a_store_of_a_newer_llmload_is_refused(where: str) -> None:
    open_store(store_location(where, {})).__exit__(None, None, None)
    if where.startswith("postgresql://"):
        sql(where, f"UPDATE llmload_version SET version = {VERSION + 1}")
    else:
        sql(where, f"PRAGMA user_version = {VERSION + 1}")
    with pytest.raises(
        HistoryError, match=rf"version {VERSION + 1} results store, written by a newer llmload .* upgrade"
    ) as e:
        open_store(store_location(where, {}))
    assert PASSWORD not in str(e.value)


def test_a_locked_store_waits_then_says_so(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    open_store(store_location(where, {})).__exit__(None, None, None)
    holder: Any  # another writer that never finishes
    if where.startswith("postgresql://"):
        import psycopg

        from llmload.history import postgres as postgres_module

        holder = psycopg.connect(where)  # not in autocommit: the lock is held until it closes
        holder.execute("LOCK TABLE runs IN EXCLUSIVE MODE")
        monkeypatch.setattr(postgres_module, "BUSY_S", 0.2)
    else:
        holder = sqlite3.connect(where, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        monkeypatch.setattr(store_module, "BUSY_S", 0.2)
    one = record_of(read_summary(FIXTURES / "engine-a"), "/r")
    try:
        with (
            pytest.raises(HistoryError, match=r"still locked by another writer after 0\.2 s"),
            open_store(store_location(where, {})) as store,
        ):
            store.put(one, 0.0)
    finally:
        holder.close()
    with open_store(store_location(where, {})) as store:
        assert store.runs() == []  # the transaction that timed out left nothing


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


def test_a_team_store_that_cannot_be_reached_is_one_line_without_its_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    summary = read_summary(FIXTURES / "engine-a")
    results = ResultsDir(str(tmp_path / "results"), "run")
    results.write_json("summary.json", to_json(summary))
    for url in (
        f"postgresql://team:{PASSWORD}@127.0.0.1:{port}/history",
        f"postgres://team@127.0.0.1:{port}/history?password={PASSWORD}",
    ):
        record(run_config("--history", url), results, summary)  # type: ignore[arg-type]
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"llmload: history: not recorded ({shown(url)}: ")
        assert "Connection refused" in err and "***" in err and PASSWORD not in err
        for argv in (["history"], ["history", "reindex", str(FIXTURES)]):
            assert llmload([*argv, "--history", url]) == 2
            out, err = capsys.readouterr()
            assert err.count("\n") == 1 and shown(url) in err and PASSWORD not in out + err


def test_pins_and_waivers_name_their_run_and_outlive_its_reindex(where: str) -> None:
    one = record_of(read_summary(FIXTURES / "engine-a"), "/results/engine-a")
    two = replace(one, run_id="two")
    with open_store(store_location(where, {})) as store:
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
