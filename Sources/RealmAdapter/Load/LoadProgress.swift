extension LoadPlan.Step {
    /// The database table the step reads.
    public var table: String {
        switch self {
        case .objects(let t, _), .links(let t, _): t.table
        case .list(_, let l): l.table
        }
    }

    /// What the step loads, for people: `Bus`, `Bus links (driver)`, `Bus.stops`.
    public var what: String {
        switch self {
        case .objects(let t, _): t.type.name
        case .links(let t, let properties): "\(t.type.name) links (\(properties.joined(separator: ", ")))"
        case .list(let t, let l): "\(t.type.name).\(l.property.name)"
        }
    }
}

/// How far a load step is, reported after every batch.
public struct LoadProgress: Sendable {
    public var step: LoadPlan.Step
    public var rows: Int
    public var estimatedRows: Int?
    public var elapsed: Duration
    public var done: Bool

    /// Rows per second so far.
    public var rate: Double {
        let s = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return s > 0 ? Double(rows) / s : 0
    }

    /// Time left at the current rate, if the estimate allows one.
    public var remaining: Duration? {
        guard let estimatedRows, rate > 0, estimatedRows > rows else { return nil }
        return .milliseconds(Int64(Double(estimatedRows - rows) / rate * 1000))
    }
}
