import FobAccess
import FobAgent
import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Testing

/// What a command does after the agent refused a read for want of an
/// answer: a question put and left unanswered ends it (exit 36, no master
/// password prompt: no one is there to type it); a question no channel
/// could put still lets it open the vault itself with the master password.
@Suite(.serialized) struct ConsentRefusalTests {
    /// An asker that ends every question the same way.
    private struct FixedAsker: AccessAsker {
        let outcome: AccessOutcome
        func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome { outcome }
    }

    /// How many times the master password was asked.
    private final class Prompts: @unchecked Sendable {
        var count = 0
    }

    /// A vault whose default rule is `ask`, served by an agent in this
    /// process whose only channel ends each question with `outcome`, and the
    /// access layer of a command that would prompt for the master password
    /// (the vault's files live as long as the ``TestVault`` returned).
    private func store(_ outcome: AccessOutcome, service: String = "mail") throws -> (
        ItemAccess, Prompts, InProcessAgent, TestVault
    ) {
        let vault = try TestVault()
        try vault.vault.add(Item(service: service, account: "ana", secret: .text("s3cret")))
        try vault.vault.setAccessDefault(.ask)
        vault.vault.lock()
        let agent = try InProcessAgent(vault: vault)
        agent.server.core.gate.askers = [FixedAsker(outcome: outcome)]
        var environment = agent.environment
        environment["FOB_VAULT"] = vault.vault.url.path
        let prompts = Prompts()
        let password = vault.password
        let store = ItemAccess(
            settings: AccessSettings(environment: environment),
            password: .asking {
                prompts.count += 1
                return password
            })
        return (store, prompts, agent, vault)
    }

    @Test func anUnansweredQuestionEndsTheReadWithoutAMasterPasswordPrompt() throws {
        let (store, prompts, agent, vault) = try store(.unanswered)
        defer { withExtendedLifetime(vault) { agent.stop() } }
        let error = thrownKeychainError { try store.item(service: "mail", account: "ana") }
        #expect(prompts.count == 0)
        #expect(error?.exitStatus == 36)
        #expect(
            error
                == .consentMissing(
                    "consent needed for service \"mail\", account \"ana\": the vault's default rule is 'ask', "
                        + "and no one answered within 60 s", .unanswered))
    }

    @Test func noChannelStillLetsTheCommandOpenTheVaultWithTheMasterPassword() throws {
        let (store, prompts, agent, vault) = try store(.unreachable)
        defer { withExtendedLifetime(vault) { agent.stop() } }
        let item = try store.item(service: "mail", account: "ana")
        #expect(prompts.count == 1)
        #expect(item.secret?.unsafeString == "s3cret")
    }

    /// Whether a question was left unanswered was read from the refusal's
    /// text: an item whose name holds that text turned "no one could be
    /// asked" into "unanswered", and the command never asked for the master
    /// password. The agent now says which in a field of its own.
    @Test func anItemNamedLikeTheUnansweredTextStillGetsTheMasterPassword() throws {
        let service = "x, and no one answered within 60 s"
        let (store, prompts, agent, vault) = try store(.unreachable, service: service)
        defer { withExtendedLifetime(vault) { agent.stop() } }
        let item = try store.item(service: service, account: "ana")
        #expect(prompts.count == 1)
        #expect(item.secret?.unsafeString == "s3cret")
    }
}
