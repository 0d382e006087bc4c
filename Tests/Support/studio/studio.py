#!/usr/bin/env python3
"""Drives Studio in a real browser (Debian's headless Chromium through Selenium), as a person would.

Usage: studio.py BASE SHOTS MODE [ARGS]
  tour BOB_ID CAROL_ID   log in as the admin alice, browse, query, follow a link, edit, log out; then bob
  expiry                 log in, wait out the session, and be sent to the login page
  sync DSN               with `run` syncing /SQLDemo to the Postgres database DSN: a row inserted there
                         appears on the open page without a reload, an edit reaches it, and a change it
                         rejects is moved to the dead letters from the Sync page
Prints "ok: <step>" per step that held, and "FAIL: <why>" (exit 1) at the first that did not.
Screenshots of each page go to SHOTS.
"""
import os
import shutil
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE, SHOTS, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(SHOTS, ignore_errors=True)
os.makedirs(SHOTS)


def browser():
    options = Options()
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"]:
        options.add_argument(a)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def check(condition, step, detail=""):
    if not condition:
        print(f"FAIL: {step}: {detail}", flush=True)
        driver.save_screenshot(os.path.join(SHOTS, "failure.png"))
        with open(os.path.join(SHOTS, "failure.html"), "w") as f:
            f.write(driver.page_source)
        driver.quit()
        sys.exit(1)
    print(f"ok: {step}", flush=True)


def navigate(element, keys=None):
    """Clicks `element` (or types `keys` into it) and waits for the page it leads to."""
    old = driver.find_element(By.TAG_NAME, "html")
    if keys is None:
        element.click()
    else:
        element.send_keys(keys)

    def left(_):
        try:
            old.is_enabled()
            return False
        except WebDriverException:  # stale, or (Chromium) no longer in the document
            return True
    WebDriverWait(driver, 10).until(left)


def shot(name):
    driver.save_screenshot(os.path.join(SHOTS, name + ".png"))


def text(css):
    found = driver.find_elements(By.CSS_SELECTOR, css)
    return found[0].text if found else ""


def log_in(name, password):
    driver.get(BASE + "/studio/login")
    driver.find_element(By.ID, "name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(password)
    navigate(driver.find_element(By.CSS_SELECTOR, "#login button"))


def no_alert():
    try:
        driver.switch_to.alert
        return False
    except NoAlertPresentException:
        return True


def tour(bob_id, carol_id):
    driver.get(BASE + "/studio")
    check(driver.current_url.endswith("/studio/login"), "a visitor is sent to the login page", driver.current_url)
    shot("login")
    log_in("alice", "not-her-password")
    check("Wrong user name or password" in text("#notice"), "a wrong password is refused", text("main"))
    log_in("alice", "alice-password")
    check(driver.current_url.endswith("/studio/realms"), "alice logs in to the Realms", driver.current_url)
    check("alice (admin)" in text("#who"), "the page names who is logged in", text("#who"))
    paths = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#realms td:first-child a")]
    check('/a "quoted" path' in paths and "/shop" in paths, "an admin sees every Realm", str(paths))
    check(f"/{bob_id}/notes" in paths and f"/{carol_id}/secret" in paths, "users' Realms too", str(paths))
    shot("realms")

    navigate(driver.find_element(By.ID, "q"), "quoted\n")
    check(text("#total").startswith("1 Realm "), "the list is searched by path", text("#total"))
    navigate(driver.find_element(By.LINK_TEXT, '/a "quoted" path'))
    check(text("h1") == '/a "quoted" path', "a path with quotes is shown as text", text("h1"))

    navigate(driver.find_element(By.ID, "roles"))
    form = driver.find_element(By.ID, "role-form")
    form.find_element(By.NAME, "role").send_keys("editors")
    navigate(form.find_element(By.CSS_SELECTOR, "button[value=add-role]"))
    check(text("#notice") == "Done: add role editors.", "an admin adds a role", text("main"))
    form = driver.find_element(By.ID, "role-form")
    form.find_element(By.NAME, "role").send_keys("editors")
    form.find_element(By.NAME, "user").send_keys("bob")
    navigate(form.find_element(By.CSS_SELECTOR, "button[value=add-member]"))
    rows = [tr.text for tr in driver.find_elements(By.CSS_SELECTOR, "#roles tbody tr")]
    check(any(r.startswith("editors bob") for r in rows), "and makes bob a member", str(rows))
    form = driver.find_element(By.ID, "privilege-form")
    form.find_element(By.NAME, "role").send_keys("editors")
    Select(form.find_element(By.NAME, "target")).select_by_visible_text("Note")
    form.find_element(By.NAME, "privileges").send_keys("read,query")
    navigate(form.find_element(By.CSS_SELECTOR, "button[value=grant]"))
    rows = [tr.text for tr in driver.find_elements(By.CSS_SELECTOR, "#privileges tbody tr")]
    check(any(r.startswith("Note") and "editors: read,query" in r for r in rows), "and grants it privileges on a type",
          str(rows))
    form = driver.find_element(By.ID, "privilege-form")
    form.find_element(By.NAME, "role").send_keys("editors")
    form.find_element(By.NAME, "privileges").send_keys("fly")
    navigate(form.find_element(By.CSS_SELECTOR, "button[value=grant]"))
    check("fly" in text("#error"), "an unknown privilege is refused", text("main"))
    shot("roles")

    driver.get(BASE + "/studio/realms")
    navigate(driver.find_element(By.LINK_TEXT, "/shop"))
    check(text("h1") == "/shop", "alice opens a Realm", text("h1"))
    types = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#types td:first-child a")]
    check(types == ["Stop", "Route"], "its types are listed", str(types))
    shot("realm")

    form = driver.find_element(By.ID, "add-type")
    form.find_element(By.NAME, "name").send_keys("Depot")
    form.find_element(By.NAME, "primaryKey").send_keys("code")
    Select(form.find_element(By.NAME, "keyType")).select_by_visible_text("string")
    navigate(form.find_element(By.TAG_NAME, "button"))
    check(text("#notice") == "Added the type Depot.", "an admin adds a type", text("main"))
    form = driver.find_element(By.ID, "add-property")
    Select(form.find_element(By.NAME, "type")).select_by_visible_text("Depot")
    form.find_element(By.NAME, "name").send_keys("opened")
    form.find_element(By.NAME, "propertyType").send_keys("date?")
    navigate(form.find_element(By.TAG_NAME, "button"))
    check(text("#notice") == "Added the property Depot.opened.", "and a property", text("main"))
    form = driver.find_element(By.ID, "add-property")
    form.find_element(By.NAME, "name").send_keys("bad")
    form.find_element(By.NAME, "propertyType").send_keys("map<int>")
    navigate(form.find_element(By.TAG_NAME, "button"))
    check("unknown type" in text("#error"), "an unknown property type is refused", text("main"))
    links = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#models a")]
    check(links == ["swift", "kotlin", "java", "typescript", "javascript"], "model definitions are offered", str(links))
    shot("schema")

    navigate(driver.find_element(By.LINK_TEXT, "Stop"))
    cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#objects td.value")]
    check("<script>alert(1)</script>" in cells, "a value with markup is shown as text", str(cells))
    check(no_alert(), "and nothing of it runs")
    shot("objects")

    box = driver.find_element(By.ID, "q")
    navigate(box, 'name BEGINSWITH "Q"\n')
    keys = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#objects a.key")]
    check(keys == ["3"] and text("#total") == "1 object.", "a query filters the objects", f"{keys} {text('#total')}")
    box = driver.find_element(By.ID, "q")
    box.clear()
    navigate(box, "name ==\n")
    check("at character 8" in text("#query-error") and "^" in text("#query-error pre"),
          "a bad query's error points where it is", text("#query-error"))

    form = driver.find_element(By.ID, "add-object")
    form.find_element(By.NAME, "value.id").send_keys("nine")
    form.find_element(By.NAME, "value.name").send_keys("Nine")
    navigate(form.find_element(By.TAG_NAME, "button"))
    check("expected int" in text("#add-error"), "an object whose value does not fit is refused", text("main"))
    form = driver.find_element(By.ID, "add-object")
    field = form.find_element(By.NAME, "value.id")
    field.clear()
    field.send_keys("9")
    navigate(form.find_element(By.TAG_NAME, "button"))
    check(text("h1") == "Stop 9", "an object is added", text("main"))
    navigate(driver.find_element(By.CSS_SELECTOR, "#delete button"))
    check(text("#total") == "4 objects.", "and deleted", text("main"))

    driver.get(BASE + "/studio/objects?path=%2Fshop&type=Stop&sort=name&desc=1")
    keys = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#objects a.key")]
    check(keys == ["3", "2", "1", "4"], "objects sort by a column, descending", str(keys))

    driver.get(BASE + "/studio/objects?path=%2Fshop&type=Route")
    navigate(driver.find_element(By.CSS_SELECTOR, "#objects td.value > a[href*='type=Stop']"))
    check(text("h1") == "Stop 2", "a link opens its target", text("h1"))

    field = driver.find_element(By.CSS_SELECTOR, "#property-name input[name=value]")
    field.clear()
    field.send_keys("Mill & Co")
    navigate(driver.find_element(By.CSS_SELECTOR, "#property-name button"))
    check(text("#notice") == "Saved name.", "an edit is saved", text("main"))
    check(text("#property-name td.value") == "Mill & Co", "and shown", text("#property-name"))
    shot("object")

    driver.get(BASE + "/studio/object?path=%2Fshop&type=Route&key=%22R1%22")
    field = driver.find_element(By.CSS_SELECTOR, "#property-rank input[name=value]")
    field.clear()
    field.send_keys("fast")
    navigate(driver.find_element(By.CSS_SELECTOR, "#property-rank button"))
    check("expected double?, found string" in text("#error"), "a value that does not fit is refused", text("main"))

    driver.get(BASE + "/studio/history?path=%2Fshop")
    origins = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#history td:nth-child(2)")]
    check(origins[0].startswith("studio:"), "the history shows the edit first, with Studio's origin", str(origins))
    shot("history")

    navigate(driver.find_element(By.LINK_TEXT, "Users"))
    form = driver.find_element(By.ID, "add-user")
    form.find_element(By.NAME, "name").send_keys("dave")
    form.find_element(By.NAME, "password").send_keys("dave-password")
    navigate(form.find_element(By.TAG_NAME, "button"))
    check(text("#notice").startswith("Added dave"), "an admin adds a user", text("main"))
    navigate(driver.find_element(By.CSS_SELECTOR, "#user-dave button.make-admin"))
    check(text("#notice") == "dave is an admin.", "and makes them an admin", text("main"))
    field = driver.find_element(By.CSS_SELECTOR, "#user-dave input[name=password]")
    field.send_keys("short")
    driver.execute_script("arguments[0].removeAttribute('minlength')", field)
    navigate(field.find_element(By.XPATH, "./following-sibling::button"))
    check("at least 8 characters" in text("#error"), "a password too short is refused", text("main"))
    shot("users")

    navigate(driver.find_element(By.LINK_TEXT, "Permissions"))
    form = driver.find_element(By.ID, "grant")
    form.find_element(By.NAME, "path").send_keys('/a "quoted" path')
    form.find_element(By.NAME, "user").send_keys("bob")
    navigate(form.find_element(By.TAG_NAME, "button"))
    check(text("#notice") == 'Granted read on /a "quoted" path to bob.', "an admin grants a path", text("main"))
    rows = [tr.text for tr in driver.find_elements(By.CSS_SELECTOR, "#grants tbody tr")]
    check(any(r.startswith('/a "quoted" path bob read') for r in rows), "the grant is listed", str(rows))

    navigate(driver.find_element(By.LINK_TEXT, "Logs"))
    messages = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#logs td:nth-child(3)")]
    check("Serving the Realms" in messages, "the server's log lines are shown", str(messages[:5]))
    shot("logs")

    driver.get(BASE + "/studio/users")
    navigate(driver.find_element(By.CSS_SELECTOR, "#user-dave button.remove"))
    check(text("#notice").startswith("Removed dave"), "and removes a user", text("main"))

    navigate(driver.find_element(By.ID, "logout"))
    check(driver.current_url.endswith("/studio/login") and "logged out" in text("#notice"), "alice logs out",
          driver.current_url)
    driver.get(BASE + "/studio/realms")
    check(driver.current_url.endswith("/studio/login"), "and her session has ended", driver.current_url)

    log_in("bob", "bob-password")
    paths = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#realms td:first-child a")]
    check(paths == sorted(['/a "quoted" path', f"/{bob_id}/notes", "/shop"]), "bob sees his Realm and those granted to him",
          str(paths))
    check(not driver.find_elements(By.LINK_TEXT, "Users"), "a user who is not an admin is offered no admin page")
    driver.get(BASE + "/studio/users")
    check("Only admins may manage users" in text("#error"), "nor given one", text("main"))
    driver.get(BASE + "/studio/object?path=%2Fshop&type=Stop&key=1")
    check(not driver.find_elements(By.CSS_SELECTOR, "form.edit"), "a reader is offered no edit")
    driver.get(BASE + f"/studio/realm?path=%2F{carol_id}%2Fsecret")
    check("may not read" in text("#error"), "bob cannot open carol's Realm", text("main"))


def wait(condition, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if condition():
                return True
        except Exception:
            pass
        time.sleep(0.1)
    return False


def sync(dsn):
    import subprocess

    def sql(statement):
        """The rows psql answers, each a tuple of text."""
        out = subprocess.run(["psql", dsn, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", statement],
                             check=True, capture_output=True, text=True).stdout
        return [tuple(line.split("|")) for line in out.splitlines() if line]

    log_in("alice", "alice-password")
    sql("""INSERT INTO "Item" VALUES (6, 1, 'db')""")  # the daemon makes the Realm with its first row

    def opened():
        driver.get(BASE + "/studio/objects?path=%2FSQLDemo&type=Item")
        return driver.find_elements(By.CSS_SELECTOR, "#objects")
    check(wait(opened), "the synced Realm opens", text("main"))
    check(wait(lambda: text("#live") == "live"), "the page follows its Realm", text("#live"))
    driver.execute_script("window.studioMarker = 'not reloaded'")
    sql("""INSERT INTO "Item" VALUES (7, 1, 'db')""")
    check(wait(lambda: "7" in [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#objects a.key")]),
          "a row inserted in Postgres appears on the open page", text("main"))
    check(driver.execute_script("return window.studioMarker") == "not reloaded", "without a reload")
    shot("live")

    navigate(driver.find_element(By.LINK_TEXT, "7"))
    field = driver.find_element(By.CSS_SELECTOR, "#property-n input[name=value]")
    field.clear()
    field.send_keys("3")
    navigate(driver.find_element(By.CSS_SELECTOR, "#property-n button"))
    check(text("#notice") == "Saved n.", "an edit is saved", text("main"))
    check(wait(lambda: sql("""SELECT n FROM "Item" WHERE id = 7""") == [("3",)]), "and reaches Postgres through run",
          str(sql("""SELECT n FROM "Item" WHERE id = 7""")))

    sql("""ALTER TABLE "Item" ADD CONSTRAINT small CHECK (n < 1000)""")
    field = driver.find_element(By.CSS_SELECTOR, "#property-n input[name=value]")
    field.clear()
    field.send_keys("5000")
    navigate(driver.find_element(By.CSS_SELECTOR, "#property-n button"))

    def blocked():
        driver.get(BASE + "/studio/sync")
        return driver.find_elements(By.CSS_SELECTOR, "#blocked")
    check(wait(blocked, 30), "a change Postgres rejects is shown blocked on the Sync page", text("main"))
    check("violates check constraint" in text("#blocked"), "with the database's error", text("#blocked"))
    shot("sync")
    navigate(driver.find_element(By.CSS_SELECTOR, "#blocked button.dead-letter"))
    check("Moved version" in text("#notice") and not driver.find_elements(By.CSS_SELECTOR, "#blocked"),
          "the button moves it to the dead letters", text("main"))
    check(sql("SELECT count(*) FROM realm_adapter_dead_letter") == [("1",)], "where Postgres keeps it")
    listed = text("#dead-letter-list tbody")
    check("/SQLDemo" in listed and "violates check constraint" in listed, "and the page lists it with its error",
          text("main"))
    driver.find_element(By.CSS_SELECTOR, "#dead-letter-list summary").click()
    check('"SET"' in text("#dead-letter-list pre") and "5000" in text("#dead-letter-list pre"),
          "its instructions open below it", text("#dead-letter-list"))


def expiry():
    log_in("alice", "alice-password")
    check(driver.current_url.endswith("/studio/realms"), "alice logs in", driver.current_url)
    time.sleep(3)
    driver.get(BASE + "/studio/realm?path=%2Fshop")
    check(driver.current_url.endswith("/studio/login"), "an expired session is sent to the login page",
          driver.current_url)
    check("expired" in text("#notice"), "which says why", text("main"))


driver = browser()
try:
    if MODE == "tour":
        tour(sys.argv[4], sys.argv[5])
    elif MODE == "sync":
        sync(sys.argv[4])
    else:
        expiry()
finally:
    driver.quit()
