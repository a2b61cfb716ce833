// The agent's requests and answers (length-prefixed frames from a socket
// peer): every byte string is a request, an answer or a typed error.
// Answers include every event (AgentEvent: changes, the terminal UI's
// question and settled events with their AccessPrompt) and the access
// log's entries.
import FobAgent

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    _ = try? AgentRequest.decode(bytes)
    _ = try? AgentResponse.decode(bytes, withSecrets: true)
    return 0
}
