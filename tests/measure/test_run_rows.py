"""{{ run_rows('name') }}: a model's rows of the run's partitions, computed once for the models of
a step that read them, or kept from the model the step has just built."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.measure.test_sql_models import ANSWERS, OneConnection
from tests.sql_models_harness import DAY, RUN_ID, Warehouse, answers, copy_project, shipped_project
from visibility_assets.core.partitions import Partition
from visibility_assets.measure import runner
from visibility_assets.measure.project import ModelError, load_project
from visibility_assets.measure.runner import materialize_models

TODAY, YESTERDAY = Partition(DAY, "deepseek"), Partition(DAY - timedelta(days=1), "deepseek")
MOVING = ("stored_at",)  # now() when the row was built


def _lake_with(rows_by_day: dict[Partition, list]) -> Warehouse:
    lake = Warehouse()
    for partition, rows in rows_by_day.items():
        answers(lake, rows, day=partition.date, platform=partition.platform)
    lake.flush()
    return lake


def _incremental(project) -> list:
    return [model for model in project.models.values() if model.kind == "incremental"]


@pytest.mark.parametrize("held", [True, False], ids=["run rows held", "a long run's read inline"])
def test_a_step_builds_the_same_rows_as_each_model_reading_the_lake_on_its_own(monkeypatch, held):
    """Yesterday built first, then today's answers changed under a built lake: the step's models
    read today's rows of the models it has just built, never yesterday's nor the old ones."""
    if not held:
        monkeypatch.setattr(runner, "RUN_ROWS_MAX_PARTITIONS", 0)
    project = shipped_project()
    changed = [(True, None, False, {"A": (True, 1, True, False, "negative")})] * 4 + ANSWERS
    step, alone = _lake_with({YESTERDAY: ANSWERS, TODAY: ANSWERS}), _lake_with({YESTERDAY: ANSWERS, TODAY: ANSWERS})
    lake = OneConnection()
    lake.conn = step.conn
    materialize_models(lake, project, _incremental(project), [YESTERDAY, TODAY], RUN_ID)
    alone.build_all([YESTERDAY, TODAY])
    for warehouse in (step, alone):
        warehouse.conn.execute("DELETE FROM cleaned_samples; DELETE FROM sample_brand_results")
        answers(warehouse, ANSWERS, day=YESTERDAY.date)
        answers(warehouse, changed, day=TODAY.date)
        warehouse.flush()

    built = materialize_models(lake, project, _incremental(project), [TODAY], RUN_ID)
    alone.build_all([TODAY])
    for model in _incremental(project):
        assert step.rows(model.name, exclude=MOVING) == alone.rows(model.name, exclude=MOVING), model.name
    assert built["fct_mention_metrics"].rows == len(alone.rows("fct_mention_metrics")) // 2
    held_tables = step.conn.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary"
                                    " AND table_name LIKE 'run_rows_%'").fetchone()[0]
    assert (held_tables > 0) == held


def test_the_model_reads_run_rows_inline_unless_the_runner_has_made_their_table():
    model = shipped_project().models["int_brand_daily"]
    assert "run_rows" not in model.sql.replace("{{ run_rows('int_brand_results') }}", "")
    assert "(SELECT * FROM int_brand_results SEMI JOIN run_partitions USING (date, platform))" in model.compiled()
    assert "FROM run_rows_int_brand_results" in model.compiled(run_rows_tables=True)
    assert model.run_reads == ("int_brand_results",) and "int_brand_results" in model.refs


def test_only_an_incremental_model_reads_run_rows(tmp_path):
    root = copy_project(tmp_path)
    (root / "marts" / "fct_today.sql").write_text(
        "-- kind: view\n-- grain: date, platform\nSELECT date, platform FROM {{ run_rows('stg_samples') }}\n")
    with pytest.raises(ModelError, match=r"fct_today.sql: only an incremental model can read"):
        load_project(root)


class RecordingConnection(OneConnection):
    """OneConnection that notes the temporary tables its read transactions leave."""

    def __init__(self):
        super().__init__()
        self.staged_tables: set[str] = set()

    def read(self, work):
        result = super().read(work)
        self.staged_tables |= {name for (name,) in self.conn.execute(
            "SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
        return result


def _jump_lake(lake: Warehouse | None = None, before: int = 2) -> tuple[Warehouse, list[Partition]]:
    """Brand A named in `before` of 10 answers on four days, then in 9 of 10 (tests/measure/test_sql_models.py)."""
    from tests.measure.test_sql_models import days_of, jump_days

    lake = lake or Warehouse()
    run = days_of(lake, jump_days(before=before))
    lake.flush()
    return lake, run


@pytest.mark.parametrize("staged", [True, False], ids=["built before the write", "built in the write"])
def test_a_run_of_several_days_alerts_on_its_last_day_against_its_earlier_days(monkeypatch, staged):
    """A run of five days rebuilt after their answers changed (a backfill): the last day's alert
    reads its baseline from the four days before, rebuilt by the same step. Built before the
    write, each model reads an earlier model's table as it will be once written, never its old
    rows of the run; the write then only stores what was built."""
    if not staged:
        monkeypatch.setattr(runner, "RUN_ROWS_MAX_PARTITIONS", 0)
    project = shipped_project()
    lake, run = _jump_lake(before=9)  # no jump: no alert
    recording = RecordingConnection()
    recording.conn = lake.conn
    materialize_models(recording, project, _incremental(project), run, RUN_ID)  # the tables made
    lake.conn.execute("DELETE FROM cleaned_samples; DELETE FROM sample_brand_results")
    _jump_lake(lake)
    recording.staged_tables.clear()
    built = materialize_models(recording, project, _incremental(project), run, RUN_ID)
    alone, _ = _jump_lake()
    alone.build_all(run)

    alerts = lake.rows("fct_visibility_alerts", exclude=MOVING + ("run_id",))
    assert [(a["date"], a["kind"], a["subject"], a["baseline_days"]) for a in alerts] == [
        (DAY, "mention_rate", "A", 4)]
    moving = MOVING + ("alert_latency_s",)  # from the alert's stored_at
    for model in _incremental(project):
        assert lake.rows(model.name, exclude=moving) == alone.rows(model.name, exclude=moving), model.name
    assert built["fct_visibility_alerts"].rows == 1
    incremental = {"run_rows_" + model.name for model in _incremental(project)}
    assert (incremental <= recording.staged_tables) == staged
    views_left = lake.conn.execute("SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal").fetchone()[0]
    assert views_left == 0  # the step's stand-ins for its models' tables are gone
