"""The privilege matrix of fine-grained permissions, through gql (and requests for the REST routes).

    python3 matrix.py BASE-URL ADMIN-REFRESH USER-REFRESH USER-NAME < cases.json

Each case {"path", "level", "privilege"} gets its own Realm: the admin creates it with a type Doc
whose objects have an ACL (d1, d2, everyone holding everything at every level), gives the user
manage on the path, and takes `privilege` from everyone at `level` (realm, class or object: d1).
Then the user tries each operation once: query, create, update, setPermissions, schema (add a
property), newType (add a type) and delete, in that order. Prints one JSON line per case: {"case": …, "ops": {op:
{"ok": bool, "answer": …}}}. The test computes what each should have done.
"""
import json
import sys

import requests
from gql import Client, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.requests import RequestsHTTPTransport

base, admin_refresh, user_refresh, user_name = sys.argv[1:5]
SCHEMA = {"schema": [{"type": "ADD_TYPE", "object_type": "Doc", "primary_key": "id",
                      "properties": {"id": "string", "title": "string", "permissions": "__Permission[]"}}]}


def access(refresh, path):
    r = requests.post(base + "/auth", json={"provider": "realm", "data": refresh, "path": path})
    r.raise_for_status()
    return r.json()["access_token"]["token"]


def run(path, token, query):
    transport = RequestsHTTPTransport(url=base + "/graphql" + path, headers={"Authorization": token}, retries=0)
    client = Client(transport=transport, fetch_schema_from_transport=False)
    try:
        return {"ok": True, "answer": client.execute(gql(query))}
    except TransportQueryError as e:
        return {"ok": False, "answer": e.errors}


def must(result):
    if not result["ok"]:
        raise SystemExit("setup failed: %s" % json.dumps(result))


for case in json.load(sys.stdin):
    path, level, privilege = case["path"], case["level"], case["privilege"]
    r = requests.post(base + "/realms" + path, json=SCHEMA, headers={"Authorization": admin_refresh})
    r.raise_for_status()
    r = requests.post(base + "/permissions", json={"path": path, "user": user_name, "level": "manage"},
                      headers={"Authorization": admin_refresh})
    r.raise_for_status()
    admin = access(admin_refresh, path)
    must(run(path, admin, 'mutation { createDocs(input: [{id: "d1", title: "a"}, {id: "d2", title: "b"}], '
                          'acl: [{role: "everyone", privileges: ["all"]}]) { id } }'))
    where = {"realm": "", "class": 'type: "Doc", ', "object": 'type: "Doc", key: "d1", '}[level]
    must(run(path, admin, 'mutation { _revoke(role: "everyone", %sprivileges: ["%s"]) { role } }' % (where, privilege)))
    user = access(user_refresh, path)
    grant = "read" if privilege == "update" else "update"
    ops = {
        "query": run(path, user, "{ docs { id } }"),
        "create": run(path, user, 'mutation { createDoc(input: {id: "n1", title: "x"}) { id } }'),
        "update": run(path, user, 'mutation { createDoc(input: {id: "d1", title: "y"}, updatePolicy: MODIFIED) '
                                  '{ id } }'),
        "setPermissions": run(path, user, 'mutation { _grant(role: "everyone", type: "Doc", key: "d1", '
                                          'privileges: ["%s"]) { role } }' % grant),
    }
    r = requests.post(base + "/realms" + path, headers={"Authorization": user_refresh}, json={
        "schema": [{"type": "ADD_PROPERTIES", "object_type": "Doc", "properties": {"note": "string?"}}]})
    ops["schema"] = {"ok": r.status_code == 200, "answer": r.text}
    r = requests.post(base + "/realms" + path, headers={"Authorization": user_refresh}, json={
        "schema": [{"type": "ADD_TYPE", "object_type": "Extra", "primary_key": "id", "properties": {"id": "int"}}]})
    ops["newType"] = {"ok": r.status_code == 200, "answer": r.text}
    ops["delete"] = run(path, user, 'mutation { deleteDoc(id: "d1") }')
    print(json.dumps({"case": case, "ops": ops}, sort_keys=True), flush=True)
