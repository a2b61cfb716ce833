import FobStore
import Foundation
import Glibc
import Testing

@testable import FobAgent

/// What a writer's frames look like to a reader across a socket.
@Suite struct FrameTests {
    /// Holds what the writing thread threw.
    private final class Outcome: @unchecked Sendable {
        var error: (any Error)?
    }

    /// Writes `payload` as one frame from another thread and reads it back.
    private func roundTrip(_ payload: [UInt8]) throws -> ([UInt8], (any Error)?) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let writer = fds[0]
        let outcome = Outcome()
        let written = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                try SocketIO.writeFrame(writer, payload, until: SocketIO.monotonic() + 30)
            } catch {
                outcome.error = error
            }
            written.signal()
        }
        let read = try SocketIO.readFrame(fds[1], until: SocketIO.monotonic() + 30, limit: 4 << 20)
        written.wait()
        return (read, outcome.error)
    }

    /// A frame far larger than the socket's buffer leaves in several partial
    /// sends; the reader gets its length and every byte in order.
    @Test func aLargeFrameArrivesWhole() throws {
        let payload = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) }
        let (read, error) = try roundTrip(payload)
        #expect(error == nil)
        #expect(read == payload)
    }

    /// An empty payload is a frame of its length alone.
    @Test func anEmptyFrameArrives() throws {
        let (read, error) = try roundTrip([])
        #expect(error == nil)
        #expect(read.isEmpty)
    }
}
