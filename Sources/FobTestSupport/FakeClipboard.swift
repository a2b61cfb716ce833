import FobClipboard
import FobStore
import Foundation

/// A clipboard in memory for tests: records every call, can fail, and lets a
/// test put "the user's" text on it.
public final class FakeClipboard: Clipboard, @unchecked Sendable {
    private let lock = NSLock()
    private var value: [UInt8]?
    private var log: [String] = []
    private var failing: ClipboardError?
    private let readable: Bool

    /// - Parameter canReadBack: whether ``holds(_:)`` answers (false acts like OSC 52).
    public init(canReadBack: Bool = true) { readable = canReadBack }

    public var name: String { "fake" }
    public var canReadBack: Bool { readable }

    /// What the clipboard holds as text, or `nil` when empty.
    public var contents: String? { lock.withLock { value.map { String(decoding: $0, as: UTF8.self) } } }
    /// The calls made, in order: "copy", "holds", "clear".
    public var calls: [String] { lock.withLock { log } }
    /// Makes later copies and clears throw `error` (`nil` to stop).
    public func fail(with error: ClipboardError?) { lock.withLock { failing = error } }
    /// Puts text there as if the user copied it elsewhere.
    public func userCopies(_ text: String) { lock.withLock { value = Array(text.utf8) } }

    public func copy(_ secret: SecretBytes) throws(ClipboardError) {
        let failure: ClipboardError? = lock.withLock {
            log.append("copy")
            if let failing { return failing }
            value = secret.unsafeArray
            return nil
        }
        if let failure { throw failure }
    }
    public func holds(_ secret: SecretBytes) -> Bool? {
        lock.withLock {
            log.append("holds")
            guard readable else { return nil }
            guard let value else { return false }
            return SecretBytes(value) == secret
        }
    }
    public func clear() throws(ClipboardError) {
        let failure: ClipboardError? = lock.withLock {
            log.append("clear")
            if let failing { return failing }
            value = nil
            return nil
        }
        if let failure { throw failure }
    }
}
