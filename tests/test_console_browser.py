"""The web console in a real browser: headless Chromium (the Debian ``chromium`` and
``chromium-driver`` packages, driven by selenium) against a real ``hive-mind serve``
subprocess with an API token. One serve and one browser for the module; each test signs in
once (the browser keeps its session cookie) and leaves a screenshot of its page in
``docs/console/``.

The XSS checks: memories, entity names and workspace names holding ``<script>``, an
``<img onerror>`` breaking out of an attribute, a ``javascript:`` link and bidi controls are
shown as text on every page; and the page's CSP blocks an inline script injected into the
DOM (a ``securitypolicyviolation`` event, and the script never runs)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hive_mind.facade import HiveMind
from tests.procs import ROOT, free_port, spawn, stop
from tests.test_jobs_admin import dead_letter_by_model_change

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

TOKEN = "console-test-token-7f3a"
SHOTS = ROOT / "docs" / "console"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="needs the chromium and chromium-driver packages")

SCRIPT = "Deploy note <script>window.__xss = 1; document.title = 'owned'</script> for Orion"
BREAKOUT = 'Deploy note "><img src=x onerror="window.__xss = 2"> about the Orion rollout'
LINK = "Deploy note <a href=\"javascript:window.__xss=3\">click</a> javascript:alert(1) Orion"
BIDI = "Deploy note Orion \u202eevil\u202c reversed \u2066isolated\u2069 text"
EVIL_ENTITY = '"><img src=x onerror="window.__xss=4">Orion<script>window.__xss=5</script>'


EVIL_WORKSPACE = '<img src=x onerror="window.__xss=7">Team "Orion"'
FORGET = "Ada prefers rooibos tea over coffee in the morning"


async def _seed(data: Path) -> None:
    async with await HiveMind.open(data_dir=data, embedding_provider="test",
                                   redis_url=None, url=None) as hm:
        await hm.save("The Orion deploy runs blue-green on Fridays after the review",
                      importance="important", wait=True)
        await hm.save(FORGET, wait=True, session="breakfast-notes")
        for text in (SCRIPT, BREAKOUT, LINK, BIDI):
            await hm.save(text, wait=True)
        orion = await hm.save_entity("project", "Orion")
        evil = await hm.save_entity("project", EVIL_ENTITY)
        ada = await hm.save_entity("person", "Ada Lovelace")
        grace = await hm.save_entity("person", "Grace Hopper")
        await hm.create_relation(ada["id"], orion["id"], "works_on")
        await hm.create_relation(grace["id"], orion["id"], "reviews")
        await hm.create_relation(orion["id"], evil["id"], "depends_on")
        await hm.create_workspace(EVIL_WORKSPACE, workspace_id="team-orion")
    # a cognify job that fails for good: a process with another model's dimension saves
    await dead_letter_by_model_change(data, "The Orion runbook lives in the wiki")


def _export_file(folder: Path) -> Path:
    """A universal export of 3 conversations, 60 messages."""
    lines = []
    for conv in range(3):
        for turn in range(20):
            lines.append(json.dumps({
                "conversation_id": f"standup-{conv}", "message_id": f"m{conv}-{turn}",
                "speaker": "user" if turn % 2 == 0 else "assistant",
                "text": f"Standup {conv} note {turn}: the Vega migration step {turn} is done",
                "timestamp": f"2026-03-0{conv + 1}T09:{turn:02d}:00Z",
                "title": f"Standup {conv}"}))
    path = folder / "standups.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("console")
    data = root / "data"
    asyncio.run(_seed(data))
    port = free_port()
    env = {"HIVE_MIND_DATA_DIR": str(data), "HIVE_MIND_EMBEDDING_PROVIDER": "test",
           "HIVE_MIND_API_TOKEN": TOKEN, "HIVE_MIND_REDIS_URL": "",
           "HIVE_MIND_MAINTENANCE_ENABLED": "false"}
    proc = spawn(["serve", "--port", str(port)], env, root / "serve.log")
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=5) as client:
            for _ in range(300):
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None:
                    raise RuntimeError((root / "serve.log").read_text())
                asyncio.run(asyncio.sleep(0.1))
        yield url
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def sign_in(driver: WebDriver, url: str, token: str = TOKEN) -> None:
    driver.get(f"{url}/ui/login")
    if not driver.find_elements(By.ID, "token"):  # signed in already: the search page
        return
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait_for(driver, ".error, input[name=q]")


def shot(driver: WebDriver, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, max(700, min(int(height) + 40, 2400)))
    driver.save_screenshot(str(SHOTS / f"{name}.png"))
    driver.set_window_size(1280, 900)


def search(driver: WebDriver, url: str, query: str, **filters: str) -> None:
    params = "&".join(f"{k}={v}" for k, v in {"q": query, **filters}.items())
    driver.get(f"{url}/ui/search?{params}")


def wait_for(driver: WebDriver, css: str, timeout: float = 15) -> Any:
    return WebDriverWait(driver, timeout).until(lambda d: d.find_element(By.CSS_SELECTOR, css))


def no_injection(driver: WebDriver) -> None:
    assert driver.execute_script("return window.__xss === undefined")
    assert driver.title != "owned"
    assert not driver.find_elements(By.CSS_SELECTOR, "main img")
    for link in driver.find_elements(By.CSS_SELECTOR, "a"):
        assert not (link.get_attribute("href") or "").lower().startswith("javascript:")


# -- sign-in --------------------------------------------------------------------------------

def test_sign_in_keeps_the_token_out_of_urls_and_storage(served: str,
                                                         browser: WebDriver) -> None:
    browser.delete_all_cookies()
    browser.get(f"{served}/ui/search")
    assert browser.current_url.endswith("/ui/login")  # no session: the login page
    sign_in(browser, served, token="not-the-token")
    assert "not valid" in browser.find_element(By.CSS_SELECTOR, ".error").text
    shot(browser, "login")
    sign_in(browser, served)
    wait_for(browser, "input[name=q]")
    assert browser.current_url.endswith("/ui/search")
    assert TOKEN not in browser.current_url
    stored = browser.execute_script(
        "return JSON.stringify([window.localStorage, window.sessionStorage])")
    assert TOKEN not in stored and "hm_console" not in stored  # htmx keeps only the path
    assert "hm_console" not in browser.execute_script("return document.cookie")  # HttpOnly
    cookie = browser.get_cookie("hm_console")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert TOKEN not in browser.page_source


def test_console_headers_and_csrf(served: str) -> None:
    with httpx.Client(base_url=served, timeout=10) as client:
        login = client.get("/ui/login")
        csp = login.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        nonce = re.search(r'name="csrf" value="([^"]+)"', login.text)
        assert nonce is not None
        # the login form's double-submit token: a form without the cookie's value is refused
        refused = client.post("/ui/login", data={"csrf": "forged", "token": TOKEN})
        assert refused.status_code == 403 and "hm_console" not in client.cookies
        signed = client.post("/ui/login", data={"csrf": nonce.group(1), "token": TOKEN})
        assert signed.status_code == 303 and "hm_console" in client.cookies
        page = client.get("/ui/search", params={"q": "Orion"})
        assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
        # a state-changing form without the session's CSRF token changes nothing
        forged = client.post("/ui/logout", data={"csrf": "forged"})
        assert forged.status_code == 403
        assert client.get("/ui/search").status_code == 200  # still signed in
        # a cross-site form post is stopped by the Host/Origin guard before anything else
        cross = client.post("/ui/logout", data={"csrf": "x"},
                            headers={"Origin": "https://attacker.example"})
        assert cross.status_code == 403 and cross.json()["error"]["code"] == "forbidden_origin"
        rebound = client.get("/ui/search", headers={"Host": "attacker.example"})
        assert rebound.status_code == 421
        # a bearer header sent to /ui is not a sign-in: the console takes its session only
        bare = httpx.get(f"{served}/ui/search", headers={"Authorization": f"Bearer {TOKEN}"},
                         follow_redirects=False)
        assert bare.status_code == 303 and bare.headers["location"].endswith("/ui/login")


# -- search ---------------------------------------------------------------------------------

def test_search_shows_results_and_their_explain(served: str, browser: WebDriver) -> None:
    sign_in(browser, served)
    search(browser, served, "Orion blue-green deploy")
    first = wait_for(browser, "li.result")
    assert "blue-green" in browser.find_element(By.CSS_SELECTOR, "ol.results").text
    assert first.find_element(By.CSS_SELECTOR, ".from").text == "personal"
    table = first.find_element(By.CSS_SELECTOR, "details.explain table")
    assert not table.is_displayed()
    first.find_element(By.CSS_SELECTOR, "details.explain summary").click()
    assert table.is_displayed()
    rows = {row.find_element(By.TAG_NAME, "th").text: row.find_element(By.TAG_NAME, "td").text
            for row in table.find_elements(By.TAG_NAME, "tr")}
    for factor in ("keyword_rank", "fused", "recency", "importance", "final",
                   "superseded by", "supersedes"):
        assert factor in rows
    shot(browser, "search")


def test_memory_text_is_shown_as_text_and_csp_blocks_inline_script(
        served: str, browser: WebDriver) -> None:
    sign_in(browser, served)
    search(browser, served, "Deploy note", limit="20")
    wait_for(browser, "li.result")
    shown = browser.find_element(By.CSS_SELECTOR, "ol.results").text
    assert "<script>window.__xss = 1; document.title = 'owned'</script>" in shown
    assert '"><img src=x onerror="window.__xss = 2">' in shown
    assert '<a href="javascript:window.__xss=3">click</a>' in shown
    assert "⟨U+202E⟩evil⟨U+202C⟩" in shown and "⟨U+2066⟩isolated⟨U+2069⟩" in shown
    no_injection(browser)
    shot(browser, "search-xss")
    # an inline script that got into the page anyway is refused by the CSP
    browser.execute_script("""
        window.__violations = [];
        document.addEventListener('securitypolicyviolation',
            e => window.__violations.push(e.violatedDirective));
        const s = document.createElement('script');
        s.textContent = 'window.__xss = 6';
        document.body.appendChild(s);""")
    WebDriverWait(browser, 5).until(
        lambda d: d.execute_script("return window.__violations.length") > 0)
    assert browser.execute_script("return window.__violations")[0].startswith("script-src")
    assert browser.execute_script("return window.__xss === undefined")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - no alert ever opened


# -- memories -------------------------------------------------------------------------------

def test_forget_a_memory_and_it_is_gone_from_search(served: str, browser: WebDriver) -> None:
    sign_in(browser, served)
    search(browser, served, "rooibos tea")
    assert FORGET in wait_for(browser, "ol.results").text
    browser.get(f"{served}/ui/memories")
    sessions = wait_for(browser, "table.sessions").text
    assert "breakfast-notes" in sessions
    shot(browser, "memories")
    browser.find_element(By.LINK_TEXT, "breakfast-notes").click()
    card = wait_for(browser, "li.card")
    assert FORGET in card.text
    shot(browser, "session")
    card.find_element(By.LINK_TEXT, "forget…").click()
    wait_for(browser, "#confirm-forget")
    assert "entities and relations that only this memory supported" in browser.page_source
    shot(browser, "forget")
    browser.find_element(By.ID, "confirm-forget").click()
    assert "is gone" in wait_for(browser, "p.notice").text
    search(browser, served, "rooibos tea")
    wait_for(browser, "p.count")
    assert FORGET not in browser.find_element(By.TAG_NAME, "main").text


def test_a_memory_shows_where_it_came_from(served: str, browser: WebDriver) -> None:
    sign_in(browser, served)
    search(browser, served, "Orion blue-green deploy")
    wait_for(browser, "li.result .meta a").click()
    card = wait_for(browser, "dl.props")
    assert "important" in card.text and "session" in card.text
    shot(browser, "memory")


# -- knowledge graph ------------------------------------------------------------------------

def test_open_the_graph_of_an_entity(served: str, browser: WebDriver) -> None:
    sign_in(browser, served)
    browser.get_log("browser")  # what earlier tests left
    browser.get(f"{served}/ui/graph?q=Orion")
    table = wait_for(browser, "table.entities")
    assert EVIL_ENTITY in table.text  # a name holding markup is a name
    no_injection(browser)
    shot(browser, "graph-search")
    browser.find_element(By.XPATH, "//tr[td[2]='project']/td[1]/a[.='Orion']").click()
    WebDriverWait(browser, 15).until(
        lambda d: d.find_element(By.ID, "graph").get_attribute("data-ready") not in (None, ""))
    assert browser.find_element(By.ID, "graph").get_attribute("data-ready") == "4"
    assert browser.find_element(By.CSS_SELECTOR, "#graph canvas")
    relations = browser.find_element(By.CSS_SELECTOR, "table.relations").text
    assert "Ada Lovelace works_on Orion" in relations
    assert f"Orion depends_on {EVIL_ENTITY}" in relations
    no_injection(browser)
    assert not [e for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]
    shot(browser, "graph")


# -- workspaces -----------------------------------------------------------------------------

def test_workspaces_list_and_create(served: str, browser: WebDriver) -> None:
    sign_in(browser, served)
    browser.get(f"{served}/ui/workspaces")
    assert EVIL_WORKSPACE in wait_for(browser, "table.workspaces").text
    no_injection(browser)
    browser.find_element(By.ID, "workspace-name").send_keys("Research notes")
    browser.find_element(By.ID, "workspace-id").send_keys("research")
    browser.find_element(By.ID, "workspace-create").click()
    assert "research" in wait_for(browser, "p.notice").text
    row = browser.find_element(By.CSS_SELECTOR, "tr[data-workspace=research]")
    assert "Research notes" in row.text
    shot(browser, "workspaces")


# -- imports --------------------------------------------------------------------------------

def test_upload_an_export_and_watch_it_complete(served: str, browser: WebDriver,
                                               tmp_path: Path) -> None:
    sign_in(browser, served)
    browser.get(f"{served}/ui/imports?workspace=research")
    wait_for(browser, "#upload-file").send_keys(str(_export_file(tmp_path)))
    browser.find_element(By.ID, "upload-submit").click()
    wait_for(browser, "#import-progress")
    WebDriverWait(browser, 60).until(lambda d: d.find_element(
        By.ID, "import-progress").get_attribute("data-phase") in ("done", "failed"))
    box = browser.find_element(By.ID, "import-progress")
    assert box.get_attribute("data-phase") == "done", box.text
    assert "3 items, 60 new memories" in box.text  # three conversations
    assert box.find_element(By.TAG_NAME, "progress").get_attribute("value") == "100"
    shot(browser, "import")
    browser.get(f"{served}/ui/imports?workspace=research")
    runs = wait_for(browser, "table.runs").text
    assert "upload:standups.jsonl" in runs and "completed" in runs
    shot(browser, "imports")
    search(browser, served, "Vega migration", scope="workspace", workspace="research")
    assert "workspace:research" in wait_for(browser, "li.result .from").text


# -- operations -----------------------------------------------------------------------------

def test_retry_a_dead_letter(served: str, browser: WebDriver) -> None:
    sign_in(browser, served)
    browser.get(f"{served}/ui/operations")
    failed = wait_for(browser, "table.failures tr[data-dead-letter]")
    assert "cognify" in failed.text and "personal" in failed.text
    shot(browser, "operations")
    failed.find_element(By.CSS_SELECTOR, "button.retry").click()
    WebDriverWait(browser, 30).until(
        lambda d: not d.find_elements(By.CSS_SELECTOR, "table.failures tr[data-dead-letter]"))
    search(browser, served, "Orion runbook wiki")
    assert "runbook" in wait_for(browser, "ol.results").text


# -- hive-mind ui ---------------------------------------------------------------------------

def test_ui_command_serves_the_console_on_loopback_and_prints_its_url(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HIVE_MIND_DATA_DIR": str(tmp_path / "data"),
           "HIVE_MIND_EMBEDDING_PROVIDER": "test", "HIVE_MIND_REDIS_URL": "",
           "HIVE_MIND_MAINTENANCE_ENABLED": "false", "HIVE_MIND_API_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, "-m", "hive_mind", "ui", "--port", "0", "--json"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline()]
        while lines[-1] not in (b"}\n", b""):  # the --json answer, indented
            lines.append(proc.stdout.readline())
        url = json.loads(b"".join(lines))["ui"]["url"]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/ui", url)
        first = httpx.get(url, follow_redirects=False, timeout=10)
        assert first.status_code == 303 and first.headers["location"].endswith("/ui/login")
        login = httpx.get(f"{url}/login", timeout=10)
        assert login.status_code == 200 and 'name="token"' in login.text
    finally:
        stop(proc)  # type: ignore[arg-type]
