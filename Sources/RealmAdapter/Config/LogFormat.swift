/// How logs are written (`logFormat`, `--log-format`): `text` for people, `json` for log
/// shippers (one object per line, the metadata as fields).
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}
