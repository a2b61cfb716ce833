import FobSystem

/// A CSV reader for RFC 4180 (<https://www.rfc-editor.org/rfc/rfc4180>):
/// fields separated by commas, records by CRLF or LF; a field in double
/// quotes may hold commas, line breaks and quotes written twice (`""`).
///
/// Table-driven: a state machine over the UTF-8 bytes, whose transitions
/// are the table ``transitions``. A quote inside an unquoted field, text
/// after a closing quote, or a quoted field left open is an error naming the line.
public enum CSVReader {
    /// A parsed file: the header (the first record) and the other records,
    /// each with the line it starts on.
    public struct Table: Sendable, Equatable {
        /// The header's fields as written.
        public var header: [String]
        /// The records after the header, with the number of the line each starts on (1-based).
        public var records: [(line: Int, fields: [String])]

        public static func == (a: Table, b: Table) -> Bool {
            a.header == b.header && a.records.count == b.records.count
                && zip(a.records, b.records).allSatisfy { $0.line == $1.line && $0.fields == $1.fields }
        }

        /// The column of each name (compared without case and surrounding spaces).
        /// - Throws: `.missingColumns` naming the required ones absent.
        public func columns(required: [String], optional: [String] = []) throws(ImportError) -> [String: Int] {
            var index: [String: Int] = [:]
            for (i, name) in header.enumerated() {
                let key = name.trimmingSpaces().lowercased()
                if index[key] == nil { index[key] = i }
            }
            let missing = required.filter { index[$0.lowercased()] == nil }
            guard missing.isEmpty else { throw .missingColumns(missing) }
            var out: [String: Int] = [:]
            for name in required + optional { if let i = index[name.lowercased()] { out[name] = i } }
            return out
        }
    }

    enum State: Int { case fieldStart = 0, unquoted, quoted, quoteInQuoted, afterCR }
    enum Class: Int { case comma = 0, quote, cr, lf, other }
    enum Action { case none, append, appendQuote, endField, endRecord, fail(String) }

    static let unquotedQuote = Action.fail(
        "a quote inside an unquoted field (quote the whole field and write the quote twice)")
    static let textAfterQuote = Action.fail("text after a closing quote (write a quote inside a quoted field twice)")

    /// `transitions[state][class]`: the next state and what to do with the byte.
    static let transitions: [[(State, Action)]] = [
        // fieldStart
        [
            (.fieldStart, .endField), (.quoted, .none), (.afterCR, .endRecord), (.fieldStart, .endRecord),
            (.unquoted, .append),
        ],
        // unquoted
        [
            (.fieldStart, .endField), (.unquoted, unquotedQuote), (.afterCR, .endRecord), (.fieldStart, .endRecord),
            (.unquoted, .append),
        ],
        // quoted
        [(.quoted, .append), (.quoteInQuoted, .none), (.quoted, .append), (.quoted, .append), (.quoted, .append)],
        // quoteInQuoted: after a quote inside a quoted field
        [
            (.fieldStart, .endField), (.quoted, .appendQuote), (.afterCR, .endRecord), (.fieldStart, .endRecord),
            (.unquoted, textAfterQuote),
        ],
        // afterCR: a CR ended the record; an LF right after it belongs to it
        [
            (.fieldStart, .endField), (.quoted, .none), (.afterCR, .endRecord), (.fieldStart, .none),
            (.unquoted, .append),
        ],
    ]

    /// Parses UTF-8 CSV text into records; blank lines are skipped.
    ///
    /// A pure function (a fuzz target).
    /// - Parameter bytes: UTF-8 text (see ``TextDecoding/utf8(_:encoding:)``).
    /// - Returns: every record, with the line each starts on; the first is the header.
    /// - Throws: ``ImportError/malformed(_:)`` naming the line of bad quoting or
    ///   of a quoted field not closed by the end of the file.
    public static func records(_ bytes: [UInt8]) throws(ImportError) -> [(line: Int, fields: [String])] {
        var out: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var state = State.fieldStart
        var line = 1
        var recordLine = 1
        var quoteLine = 1
        var inRecord = false
        func finishField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
        }
        for (index, byte) in bytes.enumerated() {
            let cls: Class
            switch byte {
            case 0x2C: cls = .comma
            case 0x22: cls = .quote
            case 0x0D: cls = .cr
            case 0x0A: cls = .lf
            default: cls = .other
            }
            if !inRecord, cls != .lf || state != .afterCR {
                inRecord = true
                recordLine = line
            }
            let (next, action) = transitions[state.rawValue][cls.rawValue]
            if state != .quoted, next == .quoted, cls == .quote { quoteLine = line }
            switch action {
            case .none: break
            case .append: field.append(byte)
            case .appendQuote: field.append(0x22)
            case .endField: finishField()
            case .endRecord:
                finishField()
                if !(fields.count == 1 && fields[0].isEmpty) { out.append((recordLine, fields)) }
                fields.removeAll(keepingCapacity: true)
                inRecord = false
            case .fail(let reason): throw .malformed("line \(line): \(reason)")
            }
            // Physical lines: LF, CRLF or a lone CR each end one.
            if cls == .lf || (cls == .cr && (index + 1 == bytes.count || bytes[index + 1] != 0x0A)) { line += 1 }
            state = next
        }
        switch state {
        case .quoted:
            throw .malformed(
                "line \(quoteLine): a quoted field is not closed by the end of the file (is it truncated?)")
        case .afterCR: break
        default:
            if inRecord {
                finishField()
                if !(fields.count == 1 && fields[0].isEmpty) { out.append((recordLine, fields)) }
            }
        }
        return out
    }

    /// Parses a CSV file with a header line.
    /// - Throws: as ``records(_:)``; `.malformed` for a file without a header,
    ///   or a record with more or fewer fields than the header (RFC 4180 §2.4).
    public static func table(_ bytes: [UInt8]) throws(ImportError) -> Table {
        var all = try records(bytes)
        guard !all.isEmpty else { throw .malformed("the file is empty: no header line") }
        let header = all.removeFirst().fields
        for record in all where record.fields.count != header.count {
            let hint = record.fields.count > header.count ? "an unquoted comma?" : "is the file truncated?"
            throw .malformed(
                "line \(record.line): \(record.fields.count) fields, but the header has \(header.count) (\(hint))")
        }
        return Table(header: header, records: all)
    }
}
