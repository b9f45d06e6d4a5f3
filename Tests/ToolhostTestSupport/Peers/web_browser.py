#!/usr/bin/env python3
"""Drives toolhost's chat page (`toolhost chat --web`) in a real browser for the tests: Debian's chromium through
chromedriver, with Selenium (pinned in Tests/requirements.txt).

Usage: web_browser.py --url URL --shots DIR [--driver /usr/bin/chromedriver] [--pid-file FILE] STEP...

Each STEP runs in order in one browser window and prints one JSON line {"step": NAME, "ok": true, ...facts}; the
first step that fails prints {"step": NAME, "ok": false, "error": "..."} and the script exits 1. Screenshots go to
DIR/<name>.png. The steps (the fakellm rules of the Swift test decide what the model does for each prompt's word):

  open       load the printed address (the one-time link, or the local file toolhost opened the browser with) and
             wait for the page and its chat list
  weather    ask "WEATHER in Oslo in May?": the answer streams in, getWeather's result is drawn as fields with °C,
             the raw result opens with one click, the call graph shows the round
  local      (the local model) "What is the weather usually like in Lisbon in April?": getWeather's result drawn
  picker     pick getWeather with "@get" and Enter, send: the prompt shows the picked tool
  button     pick a tool with the @ button and the mouse (the list filters as you type)
  approve    "APPEND hello": the page asks (and asks again after a reload, the turn so far shown); "Allow once"
             runs the call
  deny       "APPEND again": "Deny" refuses it
  padded     "PADDED": the approval shows every argument by name, each cut on its own, "Show all" shows them whole, and
             the call says "waiting for you"; "Deny"
  hostile    "HOSTILE": a tool result and an answer full of markup, bidi and control characters render as text
  stop       "SLOW": the call runs; Esc stops it; the turn says Stopped. (the Swift test checks the process is gone)
  tools      bread, stats, units, time (MCP) and todo: each result drawn from its structure
  chats      the sidebar lists the chats; opening the first one shows its result drawn again; rename, search, delete
  paint      (the benchmark) load the page 7 times: when the chat list was drawn and the first contentful paint
  narrow     a phone-sized window: the sidebar folds behind its button
  network    every request the browser made went to the page's own address (127.0.0.1:PORT)
  neighbour  another server on 127.0.0.1 that the browser visits gets no cookie and no secret (after `network`)
"""

import argparse
import json
import os
import sys
import time
import traceback
from urllib.parse import urlparse

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


# The last turn of the conversation.
LAST = "#conversation article.turn:last-child"


class Page:
    def __init__(self, driver, url, shots):
        self.d = driver
        self.url = url
        self.base = "{0.scheme}://{0.netloc}".format(urlparse(url))
        self.shots = shots

    def wait(self, condition, seconds=20, what="the page"):
        try:
            return WebDriverWait(
                self.d, seconds, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException]
            ).until(condition)
        except TimeoutException:
            raise AssertionError(f"timed out waiting for {what}")

    def css(self, selector, seconds=20):
        return self.wait(EC.presence_of_element_located((By.CSS_SELECTOR, selector)), seconds, selector)

    def visible(self, selector, seconds=20):
        return self.wait(EC.visibility_of_element_located((By.CSS_SELECTOR, selector)), seconds, selector)

    def all(self, selector):
        return self.d.find_elements(By.CSS_SELECTOR, selector)

    def shot(self, name):
        self.d.save_screenshot(os.path.join(self.shots, name + ".png"))

    def turns(self):
        return self.all("#conversation article.turn")

    def send(self, text):
        box = self.visible("#message")
        box.click()
        box.send_keys(text)
        box.send_keys(Keys.ENTER)

    def last_turn_done(self, before, seconds=30):
        """Waits for a new turn after `before` turns, and for its answer to stop streaming; returns it."""
        self.wait(lambda d: len(self.turns()) > before, seconds, "a new turn")
        self.wait(
            lambda d: d.find_elements(By.CSS_SELECTOR, LAST + " .answer:not(.streaming), " + LAST + " > .error"),
            seconds, "the answer to finish")
        return self.css(LAST)

    def fresh(self, read):
        """`read()`, again while what it read was redrawn under it (the page redraws what changes)."""
        for _ in range(50):
            try:
                return read()
            except StaleElementReferenceException:
                time.sleep(0.05)
        return read()

    def text(self, selector):
        """The text of the element `selector` finds now."""
        return self.fresh(lambda: self.css(selector).text)

    def classes(self, selector):
        def read():
            found = self.all(selector)
            return found[0].get_attribute("class").split() if found else []
        return self.fresh(read)

    def new_chat(self):
        self.visible("#new-chat").click()
        self.wait(lambda d: len(self.turns()) == 0, 10, "an empty conversation")


def step_open(p):
    p.d.get(p.url)
    p.css("#chats")
    p.wait(lambda d: d.execute_script("return document.readyState") == "complete", 10, "the page to load")
    p.wait(lambda d: d.find_element(By.ID, "model-name").text.strip() != "", 10, "the model's name")
    # The link is used: the address bar no longer holds the token. (Opened through a local file that redirects, the
    # page's own address is the one the browser ended at.)
    assert "token=" not in p.d.current_url, p.d.current_url
    p.base = "{0.scheme}://{0.netloc}".format(urlparse(p.d.current_url))
    assert p.base.startswith("http://127.0.0.1:"), p.d.current_url
    return {"title": p.d.title, "chats": len(p.all("#chats li.chat")), "model": p.text("#model-name")}


def step_weather(p):
    before = len(p.turns())
    p.send("WEATHER in Oslo in May?")
    call = LAST + " section.call[data-tool='getWeather']"
    p.css(call)
    p.last_turn_done(before)
    p.wait(lambda d: "ok" in p.classes(call), 20, "the call to be ok")
    answer = p.text(LAST + " .answer")
    assert "16" in answer, f"the answer is {answer!r}"
    high = call + " .result .field[data-key='averageHigh']"
    high_text = p.text(high)
    assert "16" in high_text and "°C" in high_text, f"averageHigh is drawn as {high_text!r}"
    unit = p.text(high + " .unit")
    assert unit == "°C", unit
    assert not p.all(call + " .result .field[data-key='temperatureUnit']"), "the unit's own field is shown as a field"
    duration = p.text(call + " .call-duration")
    p.d.execute_script("arguments[0].scrollIntoView({block: 'start'})", p.css(LAST))
    p.shot("conversation")
    assert not p.css(call + " pre.raw").is_displayed(), "the raw result shows before it is asked for"
    p.css(call + " button.raw-toggle").click()
    p.wait(lambda d: p.css(call + " pre.raw").is_displayed(), 5, "the raw result")
    raw = p.text(call + " pre.raw")
    assert '"averageHigh"' in raw, raw[:200]
    p.css(LAST + " button.graph-toggle").click()
    p.visible(LAST + " .call-graph")
    rounds = [e.text for e in p.all(LAST + " .call-graph .round-title")]
    assert rounds and "round 1" in rounds[0], rounds
    p.css(call + " button.raw-toggle").click()
    p.d.execute_script("arguments[0].scrollIntoView({block: 'end'})", p.css(LAST + " .call-graph"))
    p.shot("call-graph")
    return {"answer": answer, "averageHigh": high_text, "duration": duration, "graph": rounds}


def step_local(p):
    """The local model: a weather question gets getWeather's result, drawn with °C (up to 5 minutes on 2 cores)."""
    before = len(p.turns())
    p.send("What is the weather usually like in Lisbon in April?")
    p.last_turn_done(before, 300)
    call = LAST + " section.call.ok[data-tool='getWeather']"
    p.css(call, 5)
    unit = p.text(call + " .result .field[data-key='averageHigh'] .unit")
    assert unit == "°C", unit
    answer = p.text(LAST + " .answer")
    assert answer.strip(), "no answer"
    p.shot("local-model")
    return {"averageHigh": p.text(call + " .result .field[data-key='averageHigh']"), "answer": answer[:200]}


def step_paint(p):
    """Loads the page 7 times: when its chat list was drawn and its first contentful paint, from the start of the
    navigation (ms, medians), and how many chats it listed."""
    drawn, contentful = [], []
    for _ in range(7):
        p.d.get(p.base + "/")
        p.wait(lambda d: d.execute_script("return performance.getEntriesByName('chats-drawn').length") > 0, 20,
               "the chat list")
        p.wait(lambda d: d.execute_script(
            "return performance.getEntriesByType('paint').some(e => e.name === 'first-contentful-paint')"), 20,
            "the first paint")
        drawn.append(p.d.execute_script("return performance.getEntriesByName('chats-drawn')[0].startTime"))
        contentful.append(p.d.execute_script(
            "return performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint').startTime"))
    drawn.sort()
    contentful.sort()
    return {"chatsDrawnMs": drawn[3], "contentfulMs": contentful[3], "chats": len(p.all("#chats li.chat"))}


def step_picker(p):
    p.new_chat()
    box = p.visible("#message")
    box.click()
    box.send_keys("@get")
    p.visible("#tool-picker")
    option = p.visible("#tool-list li.tool-option[data-tool='getWeather']")
    shown = [e.get_attribute("data-tool") for e in p.all("#tool-list li.tool-option") if e.is_displayed()]
    p.shot("picker")
    box.send_keys(Keys.ENTER)
    chip = p.visible("#picked-tool")
    assert "getWeather" in chip.text, chip.text
    assert "@get" not in box.get_attribute("value"), box.get_attribute("value")
    before = len(p.turns())
    p.send("PICKED Oslo please")
    p.last_turn_done(before)
    picked = p.text(LAST + " .prompt .picked")
    assert "getWeather" in picked, picked
    p.wait(lambda d: not d.find_element(By.ID, "picked-tool").is_displayed(), 5, "the chip to clear")
    return {"listed": shown, "picked": picked}


def step_button(p):
    p.visible("#tool-button").click()
    p.visible("#tool-picker")
    p.visible("#tool-filter").send_keys("hosti")
    p.wait(lambda d: [e.get_attribute("data-tool") for e in p.all("#tool-list li.tool-option")
                      if e.is_displayed()] == ["hostileTool"], 5, "the list to filter to hostileTool")
    p.visible("#tool-list li.tool-option[data-tool='hostileTool']").click()
    chip = p.visible("#picked-tool")
    assert "hostileTool" in chip.text, chip.text
    chip.find_element(By.CSS_SELECTOR, "button.unpick").click()
    p.wait(lambda d: not chip.is_displayed(), 5, "the chip to go")
    return {"filtered": "hostileTool"}


def approval_step(p, text, button, expected_status):
    p.new_chat()
    before = len(p.turns())
    p.send(text)
    box = p.visible("#conversation .approval", 30)
    assert "appendNote" in box.text, box.text
    # What the plugin may reach, as its manifest's sandbox and the machine make it.
    reach = box.find_element(By.CSS_SELECTOR, ".approval-reach").text
    assert reach.startswith("Reaches: confined: no network; reads its folder, the system"), reach
    if button == "allow-once":
        p.shot("approval")
        # A page opened again while the chat waits shows the turn so far and asks again.
        p.wait(lambda d: "#chat=" in d.current_url, 10, "the new chat's id in the address")
        p.d.refresh()
        p.visible("#conversation .approval", 30)
        assert "APPEND hello" in p.text(LAST + " .prompt"), p.text("#conversation")[:300]
        assert p.visible("#stop").is_displayed()
        before = len(p.turns()) - 1
    p.fresh(lambda: p.visible("#conversation .approval").find_element(By.CSS_SELECTOR, "button." + button).click())
    p.last_turn_done(before)
    call = LAST + " section.call[data-tool='appendNote']"
    p.wait(lambda d: expected_status in p.classes(call), 10, f"the call to be {expected_status}")
    assert not p.all("#conversation .approval"), "the approval stayed"
    return {"status": expected_status, "answer": p.text(LAST + " .answer")}


def step_approve(p):
    return approval_step(p, "APPEND hello", "allow-once", "ok")


def step_deny(p):
    return approval_step(p, "APPEND again", "deny", "refused")


def step_padded(p):
    """An approval of a call whose first argument is padded with 2,000 spaces: every argument is shown by name (the
    path after the padding too), the long value cut on its own with how much more there is, the call's status says it
    waits for the user, and "Show all" shows the value whole, as text. Then Deny."""
    p.new_chat()
    before = len(p.turns())
    p.send("PADDED note")
    box = p.visible("#conversation .approval", 30)
    names = [e.text for e in box.find_elements(By.CSS_SELECTOR, ".args-short dt")]
    assert names == ["text", "path"], names
    short = p.fresh(lambda: p.visible("#conversation .approval .args-short").text)
    assert '"~/.bashrc"' in short, short
    assert "⟨2000 spaces⟩" in short and "more characters)" in short, short
    call = LAST + " section.call[data-tool='appendNote']"
    p.wait(lambda d: "waiting" in p.classes(call), 10, "the call to wait for the user")
    status = p.text(call + " .call-status")
    assert status == "waiting for you", status
    whole = box.find_element(By.CSS_SELECTOR, ".args-whole")
    assert not whole.is_displayed(), "the whole arguments show before they are asked for"
    box.find_element(By.CSS_SELECTOR, "button.args-toggle").click()
    p.wait(lambda d: whole.is_displayed(), 5, "the whole arguments")
    text = whole.text
    assert "x" * 300 in text and "~/.bashrc" in text, text[-400:]
    p.shot("approval-arguments")
    box.find_element(By.CSS_SELECTOR, "button.deny").click()
    p.last_turn_done(before)
    p.wait(lambda d: "refused" in p.classes(call), 10, "the call to be refused")
    return {"arguments": names, "status": status}


def step_hostile(p):
    p.new_chat()
    title = p.d.title
    before = len(p.turns())
    p.send("HOSTILE <img src=x onerror=\"window.pwned=1\">")
    p.last_turn_done(before)
    p.css("#conversation section.call.ok[data-tool='hostileTool'] .result")
    conversation = p.d.find_element(By.ID, "conversation")
    # No element came from the text: no img, script, b or iframe anywhere in the conversation.
    for tag in ["img", "script", "iframe", "b", "svg"]:
        found = conversation.find_elements(By.TAG_NAME, tag)
        assert not found, f"a <{tag}> element came from untrusted text"
    pwned = p.d.execute_script("return window.pwned === undefined ? null : window.pwned")
    assert pwned is None, "a script from a tool result ran"
    assert p.d.title == title, p.d.title
    text = conversation.text
    assert "<img src=x onerror" in text, "the markup is not shown as text"
    assert "<U+202E>" in text and "\u202e" not in text, "a bidi override is obeyed, not shown"
    assert "^[" in text and "\x1b" not in text, "a control character reached the page"
    p.shot("hostile")
    return {"answer": p.text(LAST + " .answer")[:80]}


def step_stop(p):
    p.new_chat()
    before = len(p.turns())
    p.send("SLOW please")
    p.css("#conversation section.call.running[data-tool='slowTool']", 30)
    stop = p.visible("#stop")
    assert stop.is_enabled()
    # Esc stops (the keyboard's way); the button is the mouse's.
    p.d.find_element(By.ID, "message").send_keys(Keys.ESCAPE)
    p.last_turn_done(before)
    error = p.text(LAST + " > .error")
    assert "Stopped" in error, error
    p.wait(lambda d: not d.find_element(By.ID, "stop").is_displayed(), 10, "the stop button to go")
    return {"error": error}


def chat_ids(p):
    return p.fresh(lambda: [e.get_attribute("data-id") for e in p.all("#chats li.chat")])


def step_tools(p):
    """Each example tool's result drawn from its structure: recipes as cards or a table, statistics per data set,
    a conversion with its units, the time server's object as fields, the to-do list's text as text."""
    shown = {}
    for word, tool, selector, shot in [
        ("BREAD", "searchBreadDatabase", ".result .cards .card, .result table.records", "recipes"),
        ("STATS", "describeData", ".result .cards .card, .result table.records", "statistics"),
        ("UNITS", "convertUnits", ".result .field[data-key='value'] .unit", None),
        ("TIME", "get_current_time", ".result .field[data-key='timezone']", None),
        ("TODO", "todoList", ".result pre.text-result", None),
    ]:
        p.new_chat()
        before = len(p.turns())
        p.send(f"SHOW {word} please")
        p.last_turn_done(before, 60)
        call = LAST + f" section.call[data-tool='{tool}']"
        p.wait(lambda d: "ok" in p.classes(call), 20, f"{tool} to be ok")
        p.css(call + " .result", 5)
        found = p.fresh(lambda: [e.text for s in selector.split(", ") for e in p.all(call + " " + s)])
        assert found, f"{tool}'s result is not drawn as {selector}: {p.text(call + ' .result')[:300]!r}"
        shown[tool] = found[0][:80]
        if shot:
            p.d.execute_script("arguments[0].scrollIntoView({block: 'start'})", p.css(LAST))
            p.shot(shot)
    units = shown["convertUnits"]
    assert units == "km", units
    return {"shown": shown}


def step_chats(p):
    p.d.get(p.base + "/")
    p.css("#chats li.chat")
    p.wait(lambda d: len(chat_ids(p)) >= 4, 10, "the chat list")
    titles = p.fresh(lambda: [e.text for e in p.all("#chats li.chat .chat-title")])
    assert "Oslo weather in May" in titles, f"no title made by the model: {titles}"
    ids = chat_ids(p)
    p.shot("chats")
    # The oldest chat is the weather one: open it and see its result drawn again.
    weather = ids[-1]
    row = f"#chats li.chat[data-id='{weather}']"
    p.fresh(lambda: p.css(row + " .chat-open").click())
    p.css("#conversation section.call[data-tool='getWeather'] .result .field[data-key='averageHigh']")
    p.wait(lambda d: "current" in p.classes(row), 5, "the chat marked")
    assert "#chat=" + weather in p.d.current_url, p.d.current_url
    # Rename it.
    p.fresh(lambda: p.css(row + " button.rename").click())
    field = p.visible(row + " input.rename-input")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("Oslo trip", Keys.ENTER)
    p.wait(lambda d: p.all(row + " .chat-title") and p.text(row + " .chat-title") == "Oslo trip", 10, "the new title")
    # Search finds it alone.
    search = p.visible("#chat-search")
    search.send_keys("Oslo trip")
    p.wait(lambda d: chat_ids(p) == [weather], 10, "the search")
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)
    p.wait(lambda d: len(chat_ids(p)) == len(ids), 10, "the whole list again")
    # Delete the newest chat (two clicks).
    gone = chat_ids(p)[0]
    p.fresh(lambda: p.css(f"#chats li.chat[data-id='{gone}'] button.delete").click())
    p.fresh(lambda: p.visible(f"#chats li.chat[data-id='{gone}'] button.confirm-delete").click())
    p.wait(lambda d: gone not in chat_ids(p), 10, "the deletion")
    return {"titles": titles, "renamed": weather, "deleted": gone}


def step_narrow(p):
    p.d.set_window_size(390, 844)
    time.sleep(0.3)
    sidebar = p.d.find_element(By.ID, "sidebar")
    toggle = p.visible("#toggle-sidebar")
    assert not sidebar.is_displayed() or sidebar.rect["x"] + sidebar.rect["width"] <= 0, "the sidebar covers a phone"
    p.shot("phone")
    toggle.click()
    p.wait(lambda d: sidebar.is_displayed() and sidebar.rect["x"] >= 0, 5, "the sidebar to open")
    p.shot("phone-chats")
    p.d.set_window_size(1280, 860)
    return {}


def step_network(p):
    origins = set()
    for entry in p.d.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            # The browser's own pages (chrome://) are not requests; everything else is.
            if not url.startswith(("data:", "chrome:", "chrome-untrusted:", "devtools:", "about:")):
                origins.add("{0.scheme}://{0.netloc}".format(urlparse(url)))
    assert origins == {p.base}, f"requests went to {sorted(origins)}"
    return {"origins": sorted(origins)}


def step_neighbour(p):
    """Another server on 127.0.0.1 (a plain Python http.server here, as any other local account could run) that the
    browser visits, and whose page asks the toolhost page's address with credentials, is sent no secret: no cookie,
    and neither the session secret nor the link's token in any header. The toolhost tab keeps its session after."""
    import http.server
    import threading
    seen = []

    class Neighbour(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.path + "\n" + str(self.headers))
            body = ("<!doctype html><title>neighbour</title><img src='/pixel.png'>"
                    "<p id=done>neighbour</p>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Neighbour)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        p.d.get(f"http://127.0.0.1:{server.server_port}/")
        p.css("#done")
        p.wait(lambda d: len(seen) >= 2, 10, "the neighbour's page and its image")
    finally:
        server.shutdown()
        server.server_close()
    for request in seen:
        assert "cookie" not in request.lower(), f"the neighbour was sent a cookie: {request}"
    link = p.url.split("#token=")[-1].split("&")[0]
    p.d.back()
    p.wait(lambda d: d.find_element(By.ID, "model-name").text.strip() != "", 10, "the page again, still in")
    secret = p.d.execute_script("return sessionStorage.getItem('toolhost-session')")
    assert secret and len(secret) == 64, f"the page has no session secret: {secret!r}"
    for request in seen:
        assert secret not in request and link not in request, f"the neighbour saw a secret: {request}"
    return {"neighbourRequests": len(seen)}


STEPS = {name[5:]: f for name, f in globals().items() if name.startswith("step_")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--shots", required=True)
    parser.add_argument("--driver", default="/usr/bin/chromedriver")
    parser.add_argument("--browser", default="/usr/bin/chromium")
    parser.add_argument("steps", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.shots, exist_ok=True)
    options = webdriver.ChromeOptions()
    options.binary_location = args.browser
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,860", "--no-first-run", "--disable-extensions",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--force-color-profile=srgb", "--lang=en-US",
                 "--user-data-dir=" + os.path.join(args.shots, ".profile")]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    # Offline: Selenium Manager must not look for a driver on the network.
    service = Service(executable_path=args.driver, log_output=os.path.join(args.shots, ".chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    page = Page(driver, args.url, args.shots)
    status = 0
    try:
        for name in args.steps:
            try:
                facts = STEPS[name](page) or {}
                print(json.dumps({"step": name, "ok": True, **facts}, ensure_ascii=False), flush=True)
            except Exception as error:
                try:
                    page.shot("failed-" + name)
                    console = [e.get("message") for e in driver.get_log("browser")][-10:]
                except Exception:
                    console = []
                print(json.dumps({"step": name, "ok": False, "error": f"{type(error).__name__}: {error}",
                                  "console": console, "trace": traceback.format_exc()[-1500:]},
                                 ensure_ascii=False), flush=True)
                status = 1
                break
    finally:
        driver.quit()
    sys.exit(status)


if __name__ == "__main__":
    main()
