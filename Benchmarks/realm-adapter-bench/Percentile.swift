extension Array where Element == Double {
    /// The value at quantile `p` (0...1) by nearest rank; NaN when empty.
    func percentile(_ p: Double) -> Double {
        guard !isEmpty else { return .nan }
        let sorted = self.sorted()
        return sorted[Swift.min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
