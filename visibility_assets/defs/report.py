"""visibility_report: the daily HTML report, written as a file under the data directory."""

from dagster import AssetKey, MaterializeResult, MetadataValue, asset

from ..paths import reports_dir
from ..report.html import latest_date, render_report
from ..warehouse.resource import WarehouseResource


@asset(
    deps=[AssetKey("mention_metrics"), AssetKey("visibility_alerts"), AssetKey("fct_invalid_answers")],
    group_name="report",
    kinds={"html"},
    description="A static HTML report of the latest day: mention rates with intervals, share of voice,"
    " 30-day trends, alerts and invalid answers per platform.",
)
def visibility_report(warehouse: WarehouseResource) -> MaterializeResult:
    with warehouse.get_connection() as conn:
        day = latest_date(conn)
        if day is None:
            raise ValueError("mention_metrics is empty: materialize some partitions first")
        html = render_report(conn, day)
        summary = conn.execute(
            """SELECT count(DISTINCT platform), count(*), avg(mention_rate),
                      (SELECT count(*) FROM visibility_alerts WHERE date = $day)
               FROM mention_metrics WHERE date = $day""", {"day": day}).fetchone()
    reports_dir().mkdir(parents=True, exist_ok=True)
    path = reports_dir() / f"visibility_report_{day.isoformat()}.html"
    path.write_text(html, encoding="utf-8")
    (reports_dir() / "latest.html").write_text(html, encoding="utf-8")
    return MaterializeResult(metadata={
        "path": MetadataValue.path(str(path)), "date": day.isoformat(), "platforms": summary[0],
        "metric_rows": summary[1], "mean_mention_rate": float(summary[2] or 0), "alerts_today": summary[3],
    })
