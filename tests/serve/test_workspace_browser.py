"""The workspace in a real browser (headless Chromium through Selenium) against `visibility
serve` in its own process with two workers: a viewer opens the overview, changes the platform
filter, clicks a figure through to its answers and is refused there; an analyst opens the same
answers and sees the highlighted matches. A screenshot of each view is kept
(VISIBILITY_SCREENSHOTS=DIR keeps them there) for a person to look at."""

import os
import shutil
from pathlib import Path

import pytest

from tests.workspace_lake import DAY, FIRST_DAY, PASSWORD
from visibility_assets.serve.workspace import VIEWS
from visibility_assets.tools.bench.serve import SERVE, running_workspace

pytestmark = pytest.mark.system

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.fixture(scope="module")
def served(workspace):
    env = {**os.environ, "VISIBILITY_HOME": str(workspace.home), "VISIBILITY_CONFIG_DIR": str(workspace.config.directory),
           "VISIBILITY_SERVE_SECRET": "browser-test-secret"}
    with running_workspace([*SERVE, "--workers", "2"], env) as base:
        yield base


@pytest.fixture
def browser():
    if not (CHROMIUM and DRIVER):
        from tests.services import in_ci
        if in_ci():
            pytest.fail("CI is set but chromium and chromedriver are missing (.ci/run installs them)")
        pytest.skip("needs chromium and chromium-driver (apt-get install chromium chromium-driver fonts-noto-cjk)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000"):
        options.add_argument(argument)
    options.binary_location = CHROMIUM
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.implicitly_wait(5)
    yield driver
    driver.quit()


def _log_in(driver, base: str, name: str) -> None:
    from selenium.webdriver.common.by import By
    driver.delete_all_cookies()
    driver.get(base + "/login")
    driver.find_element(By.ID, "login-name").send_keys(name)
    driver.find_element(By.ID, "login-password").send_keys(PASSWORD)
    driver.find_element(By.ID, "login-submit").click()
    # The next page is the overview: wait for it, or a get() right after races the login's redirect.
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(driver, 30).until(lambda d: "/login" not in d.current_url and d.execute_script(
        "return document.readyState") == "complete")


def _shot(driver, name: str, folder: Path) -> Path:
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1400, min(max(height, 800), 5000))
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)
    return path


@pytest.mark.long
def test_a_viewer_filters_and_is_refused_the_answers_an_analyst_sees_them(served, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    shots = Path(os.environ.get("VISIBILITY_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(browser, 20)
    _log_in(browser, served, "vera")
    wait.until(seen.url_contains("/overview"))
    browser.get(f"{served}/overview?from={FIRST_DAY}&to={DAY}")
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith("阿里云")
    wait.until(lambda d: d.execute_script("return !!document.querySelector('#trend-chart canvas')"))
    taken = [_shot(browser, "overview", shots)]

    # the platform filter: unticking deepseek submits the form, and the URL keeps the choice
    browser.find_element(By.CSS_SELECTOR, ".platform-box[value='deepseek']").click()
    wait.until(seen.url_contains("platform=kimi"))
    columns = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#figures thead th")]
    assert columns == ["Metric", "All platforms", "kimi"]

    # a figure, clicked through to its answers: a viewer gets the refusal page
    browser.find_element(By.CSS_SELECTOR, "#figures td[data-platform='kimi'] a.figure").click()
    wait.until(seen.url_contains("/answers"))
    answers_url = browser.current_url
    assert "needs the analyst role" in browser.find_element(By.ID, "forbidden").text
    assert "platform=kimi" in answers_url
    taken.append(_shot(browser, "answers-as-viewer", shots))
    for name in VIEWS:
        if name != "answers":
            browser.get(f"{served}/{name}?from={FIRST_DAY}&to={DAY}")
            assert browser.find_element(By.TAG_NAME, "h1").text
            taken.append(_shot(browser, name, shots))

    # the same answers as an analyst: the text with its matches highlighted
    _log_in(browser, served, "ana")
    wait.until(seen.url_contains("/overview"))
    browser.get(answers_url)
    marks = browser.find_elements(By.CSS_SELECTOR, ".answer-text mark.match.accepted")
    assert marks and any("阿里云" in m.get_attribute("title") for m in marks)
    assert browser.find_elements(By.CSS_SELECTOR, "article.answer")
    taken.append(_shot(browser, "answers-as-analyst", shots))
    errors = [entry for entry in browser.get_log("browser")  # the 403 above is a network entry, expected
              if entry["level"] == "SEVERE" and entry["source"] != "network"]
    assert not errors, errors  # no script error, nothing refused by the Content-Security-Policy
    assert all(path.stat().st_size > 10_000 for path in taken)


@pytest.mark.long
def test_the_first_screen_shows_tiles_ranking_and_next_steps_and_its_chart_downloads(served, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    shots = Path(os.environ.get("VISIBILITY_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    wait = WebDriverWait(browser, 20)
    for user in ("vera", "ana", "adam"):
        _log_in(browser, served, user)
        browser.get(f"{served}/overview?from={FIRST_DAY}&to={DAY}")
        wait.until(lambda d: d.execute_script("return !!document.querySelector('#trend-chart canvas')"))
        tiles = browser.find_elements(By.CSS_SELECTOR, "#tiles .tile")
        assert len(tiles) == 5 and all(t.find_element(By.CSS_SELECTOR, ".tile-value").text.strip("–") for t in tiles)
        assert "is #" in browser.find_element(By.CSS_SELECTOR, ".place").text
        steps = browser.find_elements(By.CSS_SELECTOR, "#next-steps li a")
        assert steps
        # the first screen comes before the detailed table
        assert browser.execute_script("return document.getElementById('first-screen').getBoundingClientRect().top"
                                      " < document.getElementById('figures').getBoundingClientRect().top")
        assert _shot(browser, f"overview-first-screen-{user}", shots).stat().st_size > 10_000
    for kind, magic in (("png", b"\x89PNG"), ("svg", b"<svg")):
        browser.find_element(By.CSS_SELECTOR, f"button.chart-download[data-format='{kind}']").click()
        wait.until(lambda d: [p for p in downloads.glob(f"*.{kind}") if p.stat().st_size > 1000])
        (saved,) = downloads.glob(f"*.{kind}")
        assert saved.read_bytes().startswith(magic) and "mention-rate" in saved.name
    steps[0].click()  # the analyst's (adam's) first step leads to its answers or its view
    wait.until(lambda d: "/overview?" not in d.current_url or "#also-recommended" in d.current_url)
    browser.get(f"{served}/admin")  # the admin's share links and cost plan
    assert browser.find_elements(By.CSS_SELECTOR, "#cost-plan tbody tr") and browser.find_element(By.ID, "shares")
    assert _shot(browser, "admin", shots).stat().st_size > 10_000
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE" and entry["source"] != "network"]
    assert not errors, errors
