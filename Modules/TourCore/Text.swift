extension StringProtocol {
    /// The text without leading and trailing whitespace (spaces, tabs, line breaks), with the
    /// standard library's `Character.isWhitespace` rather than Foundation's character sets.
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
