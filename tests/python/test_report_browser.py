"""The HTML report in a real browser: a tiny real sweep (MariaDB and pgvector on the bundled
sift-5k set, two labels, 1 and 2 clients), the report written by the ``annbench report``
command and by ``annbench.report()``, then headless Chromium (Debian's ``chromium`` driven
through its ``chromedriver``; scripts/test.sh installs both) checks that the page raises no
console error and fetches nothing, that every chart drew every point inside its plot area,
that a hover shows a point's figures and that a legend click hides a whole series.

Screenshots of each view go to ``artifacts/screenshots/`` (or ``$ANNBENCH_SCREENSHOTS``)."""

from __future__ import annotations

import base64
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import annbench
from annbench.cli import main as cli_main

from test_end_to_end import DATASET, server_urls

pytest.importorskip("selenium", reason="pip install '.[test]' brings selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("ANNBENCH_SCREENSHOTS", REPO / "artifacts" / "screenshots"))
# Debian's chromium as root: no sandbox, no GPU, and nothing that reaches out on its own.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--window-size=1400,1000",
)

# Per chart: points given, points drawn inside the plot area, legend entries.
CHART_STATE = """
const out = {};
for (const [id, c] of Object.entries(window.annbench.charts)) {
  const a = c.chartArea;
  let given = 0, inside = 0;
  c.data.datasets.forEach((d, i) => {
    given += d.data.length;
    for (const e of c.getDatasetMeta(i).data) {
      if (Number.isFinite(e.x) && Number.isFinite(e.y) && e.x >= a.left - 1 &&
          e.x <= a.right + 1 && e.y >= a.top - 1 && e.y <= a.bottom + 1) inside++;
    }
  });
  out[id] = {given: given, inside: inside, legend: c.legend.legendItems.length,
             visible: c.data.datasets.map((d, i) => c.isDatasetVisible(i)),
             groups: c.data.datasets.map(d => d.group)};
}
return out;
"""


def tool(name: str, env: str) -> str:
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        pytest.fail(
            f"{name} not found: install Debian's chromium and chromium-driver "
            f"(apt-get install chromium chromium-driver, as scripts/test.sh does) or set {env}"
        )
    return path


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    urls = server_urls()
    root = tmp_path_factory.mktemp("report")
    annbench.get_dataset(DATASET, root / "data")
    common: dict[str, Any] = dict(
        runs=1,
        clients=(1, 2),
        results=root / "results",
        data_dir=root / "data",
        mariadb=urls["ANNBENCH_MARIADB_URL"],
        postgres=urls["ANNBENCH_POSTGRES_URL"],
        progress=False,
    )
    build = {"M": [8, 16], "ef_construction": [32]}
    query = {"ef_search": [10, 20, 40]}
    annbench.run(
        DATASET, ["mariadb", "pgvector"], build=build, query=query, label="base", **common
    )
    annbench.run(
        DATASET, ["mariadb"], build={"M": [8]}, query=query, label="new", **common
    )
    cli_html = root / "cli.html"
    status = cli_main(
        ["report", "--dataset", DATASET, "--results", str(root / "results"),
         "--data-dir", str(root / "data"), "--output", str(cli_html)]
    )  # fmt: skip
    assert status == 0
    api_html = annbench.report(
        DATASET, root / "api.html", results=root / "results", data_dir=root / "data"
    )
    return {"cli": cli_html, "api": api_html}


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium look for drivers online
    options = webdriver.ChromeOptions()
    options.binary_location = tool("chromium", "ANNBENCH_CHROMIUM")
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        service=Service(tool("chromedriver", "ANNBENCH_CHROMEDRIVER")), options=options
    )
    try:
        yield driver
    finally:
        driver.quit()


def load(driver: webdriver.Chrome, page: Path) -> list[dict[str, Any]]:
    """Opens ``page`` and returns the console messages of severity error it raised."""
    driver.get(page.resolve().as_uri())
    logs: list[dict[str, Any]] = driver.get_log("browser")
    return [entry for entry in logs if entry["level"] == "SEVERE"]


def shoot(driver: webdriver.Chrome, selector: str, name: str) -> Path:
    """A PNG of the element matched by ``selector`` (whole, even past the window)."""
    rect, fits = driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return [[r.left + window.scrollX, r.top + window.scrollY, r.width, r.height],"
        " r.top >= 0 && r.bottom <= window.innerHeight];",
        selector,
    )
    clip = dict(zip(("x", "y", "width", "height"), rect), scale=1)
    # Capturing beyond the window resizes the page, which redraws the charts (and drops a
    # tooltip): only for elements that do not fit.
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {"format": "png", "clip": clip, "captureBeyondViewport": not fits},
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def canvas_offset(driver: webdriver.Chrome, chart: str, x: float, y: float) -> tuple[int, int]:
    """Selenium's pointer offsets are from the element's centre."""
    w, h = driver.execute_script(
        "const r = window.annbench.charts[arguments[0]].canvas.getBoundingClientRect();"
        "return [r.width, r.height];",
        chart,
    )
    return round(x - w / 2), round(y - h / 2)


def test_report_files(reports: dict[str, Path]) -> None:
    for path in reports.values():
        html = path.read_text()
        assert path.stat().st_size < 5_000_000
        assert "Content-Security-Policy" in html and "Chart.js v4" in html
        assert "<script src" not in html and "<link" not in html


def test_views_draw_every_point(reports: dict[str, Path], browser: webdriver.Chrome) -> None:
    errors = load(browser, reports["cli"])
    assert errors == []
    assert browser.execute_script("return window.annbench.ready") is True
    # Inline scripts and styles only: nothing was fetched, from disk or network.
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    state = browser.execute_script(CHART_STATE)
    # 24 points of label base + 6 of new: each recall chart shows every one of them.
    assert set(state) == {
        "qps-recall", "build-time", "index-size", "qps-clients", "compare-0"
    }  # fmt: skip
    for chart in ("qps-recall", "build-time", "index-size"):
        assert state[chart]["given"] == 30, state[chart]
        assert state[chart]["inside"] == 30, state[chart]
        # mariadb and pgvector of label base at 1 and 2 clients, mariadb of label new at both
        assert state[chart]["legend"] == 6, state[chart]
    # One line per parameter set measured at 1 and 2 clients (12 base + 3 new), 2 points each.
    assert state["qps-clients"]["given"] == state["qps-clients"]["inside"] == 30
    # new vs base: 6 matched parameter sets (mariadb M=8) + recall matches + parity line.
    assert state["compare-0"]["inside"] == state["compare-0"]["given"] >= 6 + 2
    for view in ("qps", "builds", "clients", "compare", "meta"):
        shoot(browser, f"#{view}", f"report-{view}")
    shoot(browser, "header", "report-header")


def test_hover_shows_the_point(reports: dict[str, Path], browser: webdriver.Chrome) -> None:
    assert load(browser, reports["api"]) == []
    chart = "qps-recall"
    x, y, tip = browser.execute_script(
        "const c = window.annbench.charts[arguments[0]]; const e = c.getDatasetMeta(0).data[0];"
        "return [e.x, e.y, c.data.datasets[0].data[0].t];",
        chart,
    )
    canvas = browser.find_element("id", f"chart-{chart}")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    ActionChains(browser).move_to_element_with_offset(
        canvas, *canvas_offset(browser, chart, x, y)
    ).perform()
    shown = browser.execute_script(
        "const t = window.annbench.charts[arguments[0]].tooltip;"
        "return [t.opacity, t.title, t.body.map(b => b.lines).flat()];",
        chart,
    )
    tips = browser.execute_script(
        "return JSON.parse(document.getElementById('annbench-data').textContent).tips"
    )
    # The tooltip names the point under the pointer (or one drawn on the very same pixel).
    same_place = browser.execute_script(
        "const c = window.annbench.charts[arguments[0]]; const out = [];"
        "c.data.datasets.forEach((d, i) => c.getDatasetMeta(i).data.forEach((e, j) => {"
        "  if (Math.hypot(e.x - arguments[1], e.y - arguments[2]) < 1.5) out.push(d.data[j].t);"
        "})); return out;",
        chart,
        x,
        y,
    )
    assert tip in same_place
    assert shown[0] > 0, shown
    assert shown[1][0] in [tips[t][0] for t in same_place], shown
    assert shown[1][0].startswith(("MariaDB(m=", "PGVector(m=")), shown
    assert any(line.startswith("QPS ") for line in shown[2]), shown
    assert any(line.startswith("recall ") for line in shown[2]), shown
    shoot(browser, "#qps figure", "report-hover")


def test_legend_click_hides_a_series(reports: dict[str, Path], browser: webdriver.Chrome) -> None:
    assert load(browser, reports["cli"]) == []
    chart = "qps-recall"
    before = browser.execute_script(CHART_STATE)[chart]
    assert all(before["visible"])
    x, y = browser.execute_script(
        "const h = window.annbench.charts[arguments[0]].legend.legendHitBoxes[0];"
        "return [h.left + h.width / 2, h.top + h.height / 2];",
        chart,
    )
    canvas = browser.find_element("id", f"chart-{chart}")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    ActionChains(browser).move_to_element_with_offset(
        canvas, *canvas_offset(browser, chart, x, y)
    ).click().perform()
    after = browser.execute_script(CHART_STATE)[chart]
    first_group = after["groups"][0]
    for group, visible in zip(after["groups"], after["visible"]):
        # The clicked series (its frontier and its other points) is hidden, the rest not.
        assert visible == (group != first_group), after
    shoot(browser, "#qps figure", "report-legend-click")
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_checks_can_fail(reports: dict[str, Path], browser: webdriver.Chrome, tmp_path: Path) -> None:
    """A broken page (no chart library, a remote image) must trip the same checks."""
    html = reports["cli"].read_text()
    start = html.index("<script>\n/*!\n * Chart.js")
    end = html.index("</script>", start) + len("</script>")
    broken = html[:start] + '<img src="https://example.invalid/x.png">' + html[end:]
    page = tmp_path / "broken.html"
    page.write_text(broken)
    errors = load(browser, page)
    text = " ".join(e["message"] for e in errors)
    assert "Chart is not defined" in text, errors
    assert "Content Security Policy" in text, errors
    assert browser.execute_script("return window.annbench && window.annbench.ready") is not True
