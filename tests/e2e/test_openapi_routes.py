"""Issue 38 item 5: the OpenAPI document (docs/openapi.json, served at /openapi.json)
declares every route of the service's route table (src/service/route_table.h) with
each method it serves, and on every operation the refusals a protected service gives
before any handler runs: 401 (no or a wrong bearer token, RFC 6750 §3.1), 403 (the
browser checks) and 413 (a body over the limit, RFC 9110 §15.5.14). The linter
(ctest openapi.lint) checks the document's form; this checks that it is complete."""
import json
import re

from conftest import SOURCE_DIR

API = json.loads((SOURCE_DIR / "docs" / "openapi.json").read_text())
TABLE = (SOURCE_DIR / "src" / "service" / "route_table.h").read_text()


def table_routes():
    """(method, OpenAPI path, access) for every line of TRTWATCH_SERVICE_ROUTES."""
    routes = []
    for methods, pattern, access in re.findall(r'ROUTE\("([A-Z, ]+)",\s*"([^"]+)",\s*\w+,\s*(\w+),', TABLE):
        path = pattern.replace("+}", "}")
        for method in (m.strip().lower() for m in methods.split(",")):
            if method != "head":  # HEAD is GET without the body (RFC 9110 §9.3.2)
                routes.append((method, path, access))
    return routes


def test_every_route_of_the_table_is_in_the_document():
    routes = table_routes()
    assert len(routes) > 20, routes
    missing = [(m, p) for m, p, _ in routes if m not in API["paths"].get(p, {})]
    assert missing == []


def test_every_operation_declares_401_403_and_413():
    public = {("get", "/healthz"), ("get", "/")}  # /healthz and the dashboard's page need no token
    lacking = []
    for path, ops in API["paths"].items():
        for method, op in ops.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            wanted = {"403", "413"} | (set() if (method, path) in public else {"401"})
            if not wanted <= set(op["responses"]):
                lacking.append((method.upper(), path, sorted(wanted - set(op["responses"]))))
    assert lacking == []


def test_downloads_declare_repr_digest_and_want_repr_digest_rfc9530():
    for path in ("/builds/{id}/engine", "/builds/{id}/timing-cache", "/groups/{gid}/engines/{name}",
                 "/models/{name}/{file}"):
        op = API["paths"][path]["get"]
        assert "Want-Repr-Digest" in [p["name"] for p in op["parameters"]], path
        for code in ("200", "206", "304"):
            assert "Repr-Digest" in op["responses"][code]["headers"], (path, code)
