"""A GraphQL client nobody here wrote (gql, from PyPI), for the server's tests.

    python3 client.py URL TOKEN QUERY [VARIABLES-JSON]

Runs one operation through gql's requests transport, which sends the token in the Authorization
header, and prints {"data": ...} or {"errors": [...]} (exit 0), or {"http": status, "body": text}
when the server answered with an HTTP error (exit 3). With GQL_FETCH_SCHEMA=1 in the
environment, gql first reads the server's schema by introspection and validates the operation
against it (graphql-core's rules), before sending it.
"""
import json
import os
import sys

from gql import Client, gql
from graphql import GraphQLError
from gql.transport.exceptions import TransportQueryError, TransportServerError
from gql.transport.requests import RequestsHTTPTransport

url, token, query = sys.argv[1], sys.argv[2], sys.argv[3]
variables = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
transport = RequestsHTTPTransport(url=url, headers={"Authorization": token} if token else {}, retries=0)
fetch = os.environ.get("GQL_FETCH_SCHEMA") == "1"
client = Client(transport=transport, fetch_schema_from_transport=fetch)
try:
    data = client.execute(gql(query), variable_values=variables)
    print(json.dumps({"data": data}, sort_keys=True))
except TransportQueryError as e:
    print(json.dumps({"errors": e.errors, "data": e.data}, sort_keys=True))
except GraphQLError as e:  # refused by gql's own validation against the introspected schema
    print(json.dumps({"errors": [{"message": e.message}], "data": None, "client": True}, sort_keys=True))
except TransportServerError as e:
    response = transport.response_headers  # noqa: F841 (the body is in the exception's text)
    print(json.dumps({"http": e.code, "body": str(e)}))
    sys.exit(3)
