/// An error a connector reports to the user (`PostgresError`, `SQLServerError`): its
/// `description` is the whole message, ready to show, with no bound values or secrets. The CLI
/// prints it as `error: …` whatever the connector.
public protocol ConnectorError: Error, CustomStringConvertible {}
