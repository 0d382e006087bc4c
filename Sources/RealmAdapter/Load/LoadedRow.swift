/// Which requested column each of a table's mapped columns is.
final class RowLayout: Sendable {
    let columns: [String]
    /// Per `TableMapping.columns` index: the position in `columns`, or nil if not requested.
    let positions: [Int?]

    init(_ columns: [String], _ t: TableMapping) {
        var unique: [String] = []
        for c in columns where !unique.contains(c) { unique.append(c) }
        self.columns = unique
        positions = t.columns.map { c in unique.firstIndex(of: c.column) }
    }
}

/// A row of a snapshot, positional. It borrows the row's values (``RowLayout/read(_:_:)``):
/// reading one per column costs no reference counting.
struct LoadedRow: ColumnValues {
    let values: UnsafeBufferPointer<Value>
    let positions: UnsafeBufferPointer<Int?>
    unowned(unsafe) let layout: RowLayout

    func value(column: String) -> Value? { layout.columns.firstIndex(of: column).map { values[$0] } }
    func value(at index: Int, of t: TableMapping) -> Value? {
        guard let p = positions[index] else { return nil }
        return values[p]
    }
}

extension RowLayout {
    /// Runs `body` with `values`, a row read in this layout, as a ``LoadedRow`` valid during the call.
    func read<T>(_ values: [Value], _ body: (LoadedRow) throws -> T) rethrows -> T {
        try values.withUnsafeBufferPointer { v in
            try positions.withUnsafeBufferPointer { p in try body(LoadedRow(values: v, positions: p, layout: self)) }
        }
    }
}
