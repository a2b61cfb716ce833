import FobAgent
import FobSSH
import FobStore
import FobViewModels
import Foundation
import Testing

/// The terminal UI's view of an SSH key: comment, type, fingerprint, hosts
/// and public key line, and never the private key, revealed or not.
@Suite struct SSHKeyPreviewTests {
    @Test func anSSHKeyShowsItsCommentTypeFingerprintAndHostsButNotItsPrivateKey() throws {
        let key = try SSHPrivateKey.generate(.ecdsaP256)
        let item = SSHKeyItem.item(
            name: "work", key: key, comment: "me@laptop", hosts: ["*.example.com", "[git.test]:2222"],
            constraints: SSHKeyConstraints(confirm: true))
        for revealed in [false, true] {
            let preview = ItemPreview(item: item, now: Date(), revealed: revealed)
            let lines = preview.lines(at: Date())
            let shown = Dictionary(lines.map { ($0.label, $0.text) }, uniquingKeysWith: { a, _ in a })
            #expect(shown["Comment"] == "me@laptop")
            #expect(shown["Key type"] == "ecdsa 256")
            #expect(shown["Fingerprint"] == key.publicKey.fingerprint)
            #expect(shown["Hosts"] == "*.example.com, [git.test]:2222")
            #expect(shown["Confirm"] == "every use is asked (ssh-add -c)")
            #expect(shown["Public key"] == key.publicKey.line(comment: "me@laptop"))
            #expect(shown["Private key"] == "kept in the vault; signs through the SSH agent")
            #expect(shown["Secret"] == nil)
            #expect(!lines.contains { $0.label.hasPrefix("ssh-") })
        }
    }
}
