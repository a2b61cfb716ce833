import FobStore
import FoundationEssentials

/// The agent protocol's fields for the access log: the filter of
/// ``AgentRequest/accessLog(_:)`` and the entries of
/// ``AgentResponse/accessLog(records:problems:)``.
///
/// The request has five fields: the item's service and account (each
/// optional text, both or neither), the program (optional text), `since`
/// (UInt64 milliseconds since 1970; all ones for none) and the text
/// searched. The answer (code 7) has a count of entries (UInt32), then one
/// field per entry, index (UInt64 big-endian) ‖ the entry as
/// ``AccessLogEntryCodec`` encodes it, then one text field per problem.
enum AccessLogWire {
    /// The response code of an answer.
    static let answerCode: UInt8 = 7
    private static let noTime = UInt64.max

    static func write(_ filter: AccessLogFilter, to w: inout MessageWriter) {
        w.optional(filter.item?.service)
        w.optional(filter.item?.account)
        w.optional(filter.program)
        let since = filter.since.map { UInt64(max(0, ($0.timeIntervalSince1970 * 1000).rounded())) }
        w.field(since ?? noTime)
        w.field(filter.text)
    }

    static func filter(_ r: MessageReader) throws(AgentProtocolError) -> AccessLogFilter {
        try r.expect(5)
        var filter = AccessLogFilter(program: try r.optional(2, "program"), text: try r.text(4, "text"))
        switch (try r.optional(0, "service"), try r.optional(1, "account")) {
        case (let service?, let account?): filter.item = (service, account)
        case (nil, nil): break
        default: throw .badField("an item is a service and an account")
        }
        let since = try r.uint64(3, "since")
        if since != noTime { filter.since = Date(timeIntervalSince1970: Double(since) / 1000) }
        return filter
    }

    static func encoded(_ records: [AccessLogRecord], _ problems: [String]) -> [UInt8] {
        var w = MessageWriter(code: answerCode)
        w.field(UInt32(clamping: records.count))
        for record in records { w.field(AccessLogEntryCodec.encode(record)) }
        for problem in problems { w.field(problem) }
        return w.bytes
    }

    static func answer(_ r: MessageReader) throws(AgentProtocolError) -> ([AccessLogRecord], [String]) {
        guard r.fields.count >= 1 else { throw .badField("an access log answer without its count") }
        let count = Int(try r.uint32(0, "count"))
        guard count <= r.fields.count - 1 else { throw .badField("fewer entries than counted") }
        var records: [AccessLogRecord] = []
        records.reserveCapacity(count)
        for index in 1..<(count + 1) {
            do {
                records.append(try AccessLogEntryCodec.decodeRecord(r.raw(index)))
            } catch {
                throw .badField("an access log entry: \(error)")
            }
        }
        var problems: [String] = []
        for index in (count + 1)..<r.fields.count { problems.append(try r.text(index, "a problem")) }
        return (records, problems)
    }
}
